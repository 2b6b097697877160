#pragma once
// hst::resync(space, A, x, y): y = A x, the full product, for a caller who
// keeps y up to date with delta applies and wants to clear the rounding they
// accumulate (y drifts from A x by a few ulps per step; see README, "Long
// runs"). Cost: one full sparse multiply, nnz(A) x B multiply-adds, one
// kernel on `space`, no allocation, no fence; every entry of y is written.
// Call it every few thousand steps, or never: over 1e5 steps of the test
// workloads the drift stayed below 1e-12 relative without it.

#include <hst/detail/InputCheck.hpp>
#include <hst/kokkos_ext/Compat.hpp>

#include <KokkosSparse_CrsMatrix.hpp>
#include <Kokkos_Core.hpp>

#include <cstddef>

namespace hst
{
namespace detail
{

// y(r, b) = sum over row r of A(r, c) x(c, b), one row per work item.
template <class RowMap, class Entries, class Values, class X, class Y>
struct ResyncFunctor
{
  RowMap row_map;
  Entries entries;
  Values values;
  X x;
  Y y;
  int width;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t r) const
  {
    auto const begin = row_map(r), end = row_map(r + 1);
    for (int b = 0; b < width; ++b)
    {
      typename Y::non_const_value_type sum = 0;
      for (auto p = begin; p < end; ++p)
        sum += values(p) * x(entries(p), b);
      y(r, b) = sum;
    }
  }
};

} // namespace detail

/// y = A x (the full product, overwriting y), on `space`. A is the
/// KokkosSparse::CrsMatrix the operator was built from; x is n_cols x B and y
/// n_rows x B, rank-2 Views in any layout, in memory `space` can access.
/// Bad extents throw std::invalid_argument naming the argument, with y
/// untouched.
template <class ExecutionSpace, class S, class O, class D, class M, class Size, class X,
          class Y>
void resync(ExecutionSpace const &space,
            KokkosSparse::CrsMatrix<S, O, D, M, Size> const &A, X const &x, Y const &y)
{
  using Matrix = KokkosSparse::CrsMatrix<S, O, D, M, Size>;
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "hst::resync: 'space' must be an execution space");
  static_assert(Kokkos::is_view<X>::value && X::rank == 2,
                "hst::resync: 'x' must be a rank-2 View (n_cols x B)");
  static_assert(Kokkos::is_view<Y>::value && Y::rank == 2,
                "hst::resync: 'y' must be a rank-2 View (n_rows x B)");
  static_assert(std::is_same_v<typename Y::value_type, typename Y::non_const_value_type>,
                "hst::resync: 'y' must be writable");
  static_assert(
      kokkos_ext::is_accessible_from<ExecutionSpace, typename Matrix::memory_space>,
      "hst::resync: 'A' must be in memory 'space' can access");
  static_assert(kokkos_ext::is_accessible_from<ExecutionSpace, typename X::memory_space>,
                "hst::resync: 'x' must be in memory 'space' can access");
  static_assert(kokkos_ext::is_accessible_from<ExecutionSpace, typename Y::memory_space>,
                "hst::resync: 'y' must be in memory 'space' can access");
  auto const n_rows = std::size_t(A.numRows()), n_cols = std::size_t(A.numCols());
  if (x.extent(0) != n_cols)
    detail::throw_invalid("hst::resync: argument 'x' has ", x.extent(0), " rows, A has ",
                          n_cols, " columns");
  if (y.extent(0) != n_rows)
    detail::throw_invalid("hst::resync: argument 'y' has ", y.extent(0), " rows, A has ",
                          n_rows, " rows");
  if (y.extent(1) != x.extent(1))
    detail::throw_invalid("hst::resync: argument 'y' has ", y.extent(1),
                          " columns, 'x' has ", x.extent(1));
  if (n_rows == 0 || y.extent(1) == 0)
    return;
  detail::ResyncFunctor<decltype(A.graph.row_map), decltype(A.graph.entries),
                        decltype(A.values), X, Y>
      f{A.graph.row_map, A.graph.entries, A.values, x, y, int(y.extent(1))};
  Kokkos::parallel_for(
      "hst::resync",
      Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::size_t>>(space, 0,
                                                                          n_rows),
      f);
}

/// resync on a default instance of A's execution space.
template <class S, class O, class D, class M, class Size, class X, class Y>
void resync(KokkosSparse::CrsMatrix<S, O, D, M, Size> const &A, X const &x, Y const &y)
{
  resync(typename KokkosSparse::CrsMatrix<S, O, D, M, Size>::execution_space{}, A, x, y);
}

} // namespace hst
