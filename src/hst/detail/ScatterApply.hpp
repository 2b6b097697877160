#pragma once

#include <hst/detail/Width.hpp>
#include <hst/kokkos_ext/Compat.hpp>

#include <Kokkos_Core.hpp>

#include <string>
#include <type_traits>

namespace hst::detail
{

// y += A[:, cols] * dx, one work item per changed column: walk the column in
// the CSC copy and add its entries, scaled by that column's row of dx, into y.
// Two columns may share a row, so concurrent work items add atomically.
template <int W, bool Atomic, class ColPtr, class Rows, class Values, class Cols,
          class Dx, class Y>
struct ScatterFunctor
{
  ColPtr col_ptr;
  Rows row;
  Values val;
  Cols cols;
  Dx dx;
  Y y;
  int width;

  KOKKOS_FUNCTION void operator()(int i) const
  {
    auto const c = cols(i);
    DxRow<W, Dx> const x(dx, i, width);
    auto const end = col_ptr(c + 1);
    for (auto p = col_ptr(c); p < end; ++p)
      add_scaled<Atomic>(y, row(p), val(p), x);
  }
};

template <class ExecutionSpace, class Data, class Cols, class Dx, class Y>
void scatter_apply(ExecutionSpace const &space, Data const &op, int width,
                   Cols const &cols, Dx const &dx, Y const &y)
{
  int const k = int(cols.extent(0));
  if (k == 0)
    return;
  // Atomics only where work items run concurrently.
  bool const atomic = kokkos_ext::concurrency(space) > 1;
  // Kokkos takes labels as std::string: built once, not per launch.
  static std::string const kernel_label = "hst::ScatterArm::apply";
  dispatch_width(width, [&](auto w) {
    constexpr int W = decltype(w)::value;
    auto launch = [&](auto atomic_tag) {
      using Functor =
          ScatterFunctor<W, decltype(atomic_tag)::value, decltype(op.col_ptr),
                         decltype(op.csc_row), decltype(op.csc_val), Cols, Dx, Y>;
      Kokkos::parallel_for(
          kernel_label,
          Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<int>>(space, 0, k),
          Functor{op.col_ptr, op.csc_row, op.csc_val, cols, dx, y, width});
    };
    if (atomic)
      launch(std::true_type{});
    else
      launch(std::false_type{});
  });
}

} // namespace hst::detail
