#pragma once

#include <hst/AdaptiveSession.hpp>
#include <hst/ExactSetArm.hpp>
#include <hst/Options.hpp>
#include <hst/ScatterArm.hpp>
#include <hst/ScheduledArm.hpp>
#include <hst/detail/OperatorData.hpp>

#include <KokkosSparse_CrsMatrix.hpp>
#include <Kokkos_Core.hpp>

#include <memory>
#include <type_traits>
#include <vector>

namespace hst
{

/// A fixed sparse operator A (n_rows x n_cols, any shape) prepared once for
/// many delta applies y += A[:, cols] * dx. Construction copies A by columns
/// and builds the tile index (see OperatorOptions); A itself is not kept. The
/// arms it makes share this preparation and may outlive the Operator.
template <class Scalar, class Ordinal, class MemorySpace>
class Operator
{
public:
  using memory_space = MemorySpace;
  using value_type = Scalar;
  using ordinal_type = Ordinal;

  template <class ExecutionSpace, class S, class O, class D, class M, class Size>
  Operator(ExecutionSpace const &space,
           KokkosSparse::CrsMatrix<S, O, D, M, Size> const &A,
           OperatorOptions const &options = {})
      : data_(std::make_shared<data_type const>(space, A, options))
  {
    static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                  "hst::Operator(space, A): 'space' must be an execution space");
  }

  template <class S, class O, class D, class M, class Size>
  explicit Operator(KokkosSparse::CrsMatrix<S, O, D, M, Size> const &A,
                    OperatorOptions const &options = {})
      : Operator(typename MemorySpace::execution_space{}, A, options)
  {}

  Ordinal num_rows() const { return data_->n_rows; }
  Ordinal num_cols() const { return data_->n_cols; }
  std::size_t nnz() const { return data_->nnz; }
  OperatorOptions const &options() const { return data_->options; }
  TileStats const &tile_stats() const { return data_->stats; }

  /// Scheduled arm for batch width B, its schedule compiled for the column
  /// tiles of `expected_cols` (a rank-1 View of column ids, any memory space;
  /// may be empty).
  template <class ExecutionSpace, class Cols>
  ScheduledArm<Scalar, Ordinal, MemorySpace>
  session(ExecutionSpace const &space, Cols const &expected_cols, int B = 8,
          SessionOptions const &options = {}) const
  {
    static_assert(Kokkos::is_view<Cols>::value && Cols::rank == 1 &&
                      std::is_same_v<typename Cols::non_const_value_type, Ordinal>,
                  "hst::Operator::session: 'expected_cols' must be a rank-1 View "
                  "of the operator's Ordinal type");
    auto const host =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, expected_cols);
    std::vector<Ordinal> cols(host.data(), host.data() + host.extent(0));
    return {space, data_, cols, B, options};
  }

  template <class Cols>
  ScheduledArm<Scalar, Ordinal, MemorySpace>
  session(Cols const &expected_cols, int B = 8, SessionOptions const &options = {}) const
  {
    return session(typename MemorySpace::execution_space{}, expected_cols, B, options);
  }

  /// Exact-set arm for batch width B.
  ExactSetArm<Scalar, Ordinal, MemorySpace> baseline(int B = 8) const
  {
    return {data_, B};
  }

  /// Direct-scatter arm for batch width B.
  ScatterArm<Scalar, Ordinal, MemorySpace> scatter(int B = 8) const { return {data_, B}; }

  /// Adaptive session for batch width B: holds the three arms (the scheduled
  /// one compiled for `expected_cols`, as in session()) and chooses among
  /// them on the caller's steps (see AdaptiveSession.hpp). Throws
  /// std::invalid_argument naming the field of bad options.
  template <class ExecutionSpace, class Cols>
  AdaptiveSession<Scalar, Ordinal, MemorySpace>
  adaptive(ExecutionSpace const &space, Cols const &expected_cols, int B = 8,
           AdaptiveOptions const &options = {}) const
  {
    static_assert(Kokkos::is_view<Cols>::value && Cols::rank == 1 &&
                      std::is_same_v<typename Cols::non_const_value_type, Ordinal>,
                  "hst::Operator::adaptive: 'expected_cols' must be a rank-1 View "
                  "of the operator's Ordinal type");
    auto const host =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, expected_cols);
    std::vector<Ordinal> cols(host.data(), host.data() + host.extent(0));
    return AdaptiveSession<Scalar, Ordinal, MemorySpace>(space, data_, cols, B, options);
  }

  template <class Cols>
  AdaptiveSession<Scalar, Ordinal, MemorySpace>
  adaptive(Cols const &expected_cols, int B = 8,
           AdaptiveOptions const &options = {}) const
  {
    return adaptive(typename MemorySpace::execution_space{}, expected_cols, B, options);
  }

private:
  using data_type = detail::OperatorData<Scalar, Ordinal, MemorySpace>;
  std::shared_ptr<data_type const> data_;
};

template <class S, class O, class D, class M, class Size>
Operator(KokkosSparse::CrsMatrix<S, O, D, M, Size> const &)
    -> Operator<std::remove_const_t<S>, std::remove_const_t<O>, typename D::memory_space>;
template <class S, class O, class D, class M, class Size>
Operator(KokkosSparse::CrsMatrix<S, O, D, M, Size> const &, OperatorOptions const &)
    -> Operator<std::remove_const_t<S>, std::remove_const_t<O>, typename D::memory_space>;
template <class ExecutionSpace, class S, class O, class D, class M, class Size>
Operator(ExecutionSpace const &, KokkosSparse::CrsMatrix<S, O, D, M, Size> const &)
    -> Operator<std::remove_const_t<S>, std::remove_const_t<O>, typename D::memory_space>;
template <class ExecutionSpace, class S, class O, class D, class M, class Size>
Operator(ExecutionSpace const &, KokkosSparse::CrsMatrix<S, O, D, M, Size> const &,
         OperatorOptions const &)
    -> Operator<std::remove_const_t<S>, std::remove_const_t<O>, typename D::memory_space>;

} // namespace hst
