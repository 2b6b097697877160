#pragma once

#include <hst/ExactSetArm.hpp>
#include <hst/Operator.hpp>
#include <hst/Options.hpp>
#include <hst/ScatterArm.hpp>
#include <hst/ScheduledArm.hpp>
#include <hst/distributed/BlockPartition.hpp>
#include <hst/distributed/DistributedAdaptiveSession.hpp>
#include <hst/distributed/DistributedArm.hpp>
#include <hst/distributed/detail/DistributedData.hpp>

#include <KokkosSparse_CrsMatrix.hpp>
#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace hst
{

template <class Scalar, class Ordinal, class MemorySpace>
using DistributedScheduledArm =
    DistributedArm<ScheduledArm<Scalar, Ordinal, MemorySpace>>;
template <class Scalar, class Ordinal, class MemorySpace>
using DistributedExactSetArm = DistributedArm<ExactSetArm<Scalar, Ordinal, MemorySpace>>;
template <class Scalar, class Ordinal, class MemorySpace>
using DistributedScatterArm = DistributedArm<ScatterArm<Scalar, Ordinal, MemorySpace>>;

/// A fixed sparse operator A split over the ranks of a communicator by
/// contiguous row blocks, prepared once for many delta applies
/// y += A[:, cols] * dx. Each rank holds its rows (`A_local`, with global
/// column ids) and owns a contiguous block of the columns (the entries of x,
/// hence of dx). The rank numbers the columns its rows touch locally (its
/// owned columns first, then the others: ghosts), builds one local
/// hst::Operator on them, and learns once which ranks' rows touch each of its
/// owned columns; a step sends each change only there. Memory per rank:
/// O(local nnz + owned columns + ghost columns + neighbours), plus the
/// replicated partitions (ranks + 1 numbers each).
///
/// The communicator is duplicated; destroy every DistributedOperator and
/// every arm made from it before MPI_Finalize. Members marked collective
/// must be called by every rank of the communicator, in the same order.
template <class Scalar, class Ordinal, class MemorySpace>
class DistributedOperator
{
public:
  using memory_space = MemorySpace;
  using value_type = Scalar;
  using ordinal_type = Ordinal;
  using local_operator_type = Operator<Scalar, Ordinal, MemorySpace>;

  /// Collective. `A_local` is this rank's rows.local_size(rank) rows of A as a
  /// KokkosSparse::CrsMatrix with cols.size() columns, its column ids global.
  /// `rows` and `cols` must be the same on every rank and span the
  /// communicator's ranks. Bad input on any rank makes every rank throw
  /// std::invalid_argument naming that rank.
  template <class ExecutionSpace, class S, class O, class D, class M, class Size>
  DistributedOperator(ExecutionSpace const &space, MPI_Comm comm,
                      KokkosSparse::CrsMatrix<S, O, D, M, Size> const &A_local,
                      BlockPartition rows, BlockPartition cols,
                      OperatorOptions const &options = {})
      : data_(std::make_shared<data_type const>(space, comm, A_local, std::move(rows),
                                                std::move(cols), options))
  {
    static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                  "hst::DistributedOperator: 'space' must be an execution space");
  }

  template <class S, class O, class D, class M, class Size>
  DistributedOperator(MPI_Comm comm,
                      KokkosSparse::CrsMatrix<S, O, D, M, Size> const &A_local,
                      BlockPartition rows, BlockPartition cols,
                      OperatorOptions const &options = {})
      : DistributedOperator(typename MemorySpace::execution_space{}, comm, A_local,
                            std::move(rows), std::move(cols), options)
  {}

  MPI_Comm comm() const { return data_->comm.get(); }
  int rank() const { return data_->comm.rank(); }
  BlockPartition const &row_partition() const { return data_->rows; }
  BlockPartition const &col_partition() const { return data_->cols; }
  Ordinal num_local_rows() const { return data_->n_local_rows; }
  Ordinal num_owned_cols() const { return data_->n_owned; }
  Ordinal num_ghost_cols() const { return Ordinal(data_->ghosts.size()); }
  /// Ranks this rank sends changes to, and receives them from.
  std::vector<int> const &send_neighbours() const { return data_->plan.send_ranks; }
  std::vector<int> const &recv_neighbours() const { return data_->plan.recv_ranks; }
  /// The (owned column, rank) pairs that a change of every owned column
  /// would send: the most changes one step can send from this rank.
  std::int64_t boundary_pairs() const { return data_->plan.send_slots(); }
  /// Whether a change of owned column `global_col` is sent to another rank.
  bool crosses_boundary(std::int64_t global_col) const
  {
    auto const c = global_col - data_->col_begin;
    return c >= 0 && c < data_->n_owned &&
           data_->plan.dest_ptr[std::size_t(c) + 1] >
               data_->plan.dest_ptr[std::size_t(c)];
  }
  /// Global ids of the ghost columns: local column num_owned_cols() + g is
  /// global column ghost_cols()[g] (ascending).
  std::vector<std::int64_t> const &ghost_cols() const { return data_->ghosts; }
  /// The neighbour plan (who receives which owned column; see
  /// detail::ExchangePlan), for code that exchanges along the same lists.
  detail::ExchangePlan const &exchange_plan() const { return data_->plan; }
  /// This rank's operator on its local column numbering.
  local_operator_type const &local_operator() const { return data_->local; }

  /// Collective. Scheduled arm for batch width B (the same on every rank),
  /// its schedules compiled for `expected_owned_cols` (global ids in this
  /// rank's column range, distinct; a rank-1 View in any memory space, may
  /// be empty) and for the ghost columns their changes reach on the other
  /// ranks. `options` must agree across ranks; `options.strict` is refused
  /// (the ghost schedule follows other ranks' changes).
  template <class ExecutionSpace, class Cols>
  DistributedScheduledArm<Scalar, Ordinal, MemorySpace>
  session(ExecutionSpace const &space, Cols const &expected_owned_cols, int B = 8,
          SessionOptions const &options = {}) const
  {
    char const *where = "hst::DistributedOperator::session";
    detail::agree_on(data_->comm, where,
                     [&] { check_session_options(options, "options"); });
    auto [owned, ghost] = data_->local_sessions(
        space, expected_local_ids(where, expected_owned_cols, B), B, options);
    return {data_, B, std::move(owned), std::move(ghost)};
  }

  template <class Cols>
  DistributedScheduledArm<Scalar, Ordinal, MemorySpace>
  session(Cols const &expected_owned_cols, int B = 8,
          SessionOptions const &options = {}) const
  {
    return session(typename MemorySpace::execution_space{}, expected_owned_cols, B,
                   options);
  }

  /// Collective. Exact-set arm for batch width B (the same on every rank).
  DistributedExactSetArm<Scalar, Ordinal, MemorySpace> baseline(int B = 8) const
  {
    agree_on_width("hst::DistributedOperator::baseline", B);
    return {data_, B, data_->local.baseline(B), data_->local.baseline(B)};
  }

  /// Collective. Direct-scatter arm for batch width B (the same on every rank).
  DistributedScatterArm<Scalar, Ordinal, MemorySpace> scatter(int B = 8) const
  {
    agree_on_width("hst::DistributedOperator::scatter", B);
    return {data_, B, data_->local.scatter(B), data_->local.scatter(B)};
  }

  /// Collective. Adaptive session over the three distributed arms for batch
  /// width B (the same on every rank); the ranks probe in lockstep and agree
  /// on the arm (see DistributedAdaptiveSession.hpp). Checks the options
  /// and the expected columns (as session() does) and makes no arm: each is
  /// made, on every rank, at the first step that runs it.
  template <class ExecutionSpace, class Cols>
  DistributedAdaptiveSession<Scalar, Ordinal, MemorySpace>
  adaptive([[maybe_unused]] ExecutionSpace const &space, Cols const &expected_owned_cols,
           int B = 8, DistributedAdaptiveOptions const &options = {}) const
  {
    char const *where = "hst::DistributedOperator::adaptive";
    detail::agree_on(data_->comm, where, [&] {
      detail::check_options(options);
      // The scheduled arm, made at its first step, must not throw then.
      check_session_options(options.session, "options.session");
    });
    // The arms are made at their first steps, on those steps' instances (see
    // DistributedAdaptiveSession.hpp).
    return DistributedAdaptiveSession<Scalar, Ordinal, MemorySpace>(
        data_, expected_local_ids(where, expected_owned_cols, B), B, options);
  }

  template <class Cols>
  DistributedAdaptiveSession<Scalar, Ordinal, MemorySpace>
  adaptive(Cols const &expected_owned_cols, int B = 8,
           DistributedAdaptiveOptions const &options = {}) const
  {
    return adaptive(typename MemorySpace::execution_space{}, expected_owned_cols, B,
                    options);
  }

private:
  using data_type = detail::DistributedData<Scalar, Ordinal, MemorySpace>;

  // Collective: B positive and the same on every rank.
  void agree_on_width(char const *where, int B) const
  {
    detail::agree_on(data_->comm, where, [&] {
      if (B <= 0)
        detail::throw_invalid("argument 'B' must be positive, got ", B);
    });
    int widths[2] = {B, -B};
    MPI_Allreduce(MPI_IN_PLACE, widths, 2, MPI_INT, MPI_MAX, data_->comm.get());
    detail::agree_on(data_->comm, where, [&] {
      if (widths[0] != -widths[1])
        detail::throw_invalid("argument 'B' is ", B, " here but ranges over [",
                              -widths[1], ", ", widths[0], "] across the ranks");
    });
  }

  // Collective: checks B and the expected owned columns on every rank and
  // returns their local ids.
  template <class Cols>
  std::vector<Ordinal> expected_local_ids(char const *where, Cols const &expected,
                                          int B) const
  {
    static_assert(Kokkos::is_view<Cols>::value && Cols::rank == 1 &&
                      std::is_same_v<typename Cols::non_const_value_type, Ordinal>,
                  "hst::DistributedOperator: 'expected_owned_cols' must be a rank-1 "
                  "View of the operator's Ordinal type");
    agree_on_width(where, B);
    auto const host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, expected);
    std::vector<Ordinal> local(host.extent(0));
    detail::agree_on(data_->comm, where, [&] {
      // Duplicates by the local operator's column stamps: O(k), nothing of
      // the operator's size allocated or cleared.
      auto const lease = data_->local.data_->scratch->acquire();
      std::uint32_t const generation = lease->new_column_generation();
      std::uint32_t *const stamp = lease->column_stamp();
      for (std::size_t i = 0; i < local.size(); ++i)
      {
        std::int64_t const c = std::int64_t(host(i)) - data_->col_begin;
        if (c < 0 || c >= data_->n_owned)
          detail::throw_invalid("argument 'expected_owned_cols' holds column id ",
                                host(i), " at position ", i,
                                ", outside this rank's columns [", data_->col_begin, ", ",
                                data_->col_begin + data_->n_owned, ")");
        if (std::exchange(stamp[std::size_t(c)], generation) == generation)
          detail::throw_invalid("argument 'expected_owned_cols' holds column id ",
                                host(i), " twice (the second at position ", i, ")");
        local[i] = Ordinal(c);
      }
    });
    return local;
  }

  // Throws on options a distributed scheduled arm refuses; `argument` names
  // them in the message.
  static void check_session_options(SessionOptions const &options, char const *argument)
  {
    if (options.retire_after <= 0)
      detail::throw_invalid("argument '", argument,
                            ".retire_after' must be positive, got ",
                            options.retire_after);
    // The ghost arm's set is other ranks' changes: a strict schedule would
    // reject them on this rank alone.
    if (options.strict)
      detail::throw_invalid("argument '", argument,
                            ".strict' must be false for a distributed session, got true");
  }

  std::shared_ptr<data_type const> data_;
};

template <class S, class O, class D, class M, class Size>
DistributedOperator(MPI_Comm, KokkosSparse::CrsMatrix<S, O, D, M, Size> const &,
                    BlockPartition, BlockPartition)
    -> DistributedOperator<std::remove_const_t<S>, std::remove_const_t<O>,
                           typename D::memory_space>;
template <class S, class O, class D, class M, class Size>
DistributedOperator(MPI_Comm, KokkosSparse::CrsMatrix<S, O, D, M, Size> const &,
                    BlockPartition, BlockPartition, OperatorOptions const &)
    -> DistributedOperator<std::remove_const_t<S>, std::remove_const_t<O>,
                           typename D::memory_space>;
template <class ExecutionSpace, class S, class O, class D, class M, class Size>
DistributedOperator(ExecutionSpace const &, MPI_Comm,
                    KokkosSparse::CrsMatrix<S, O, D, M, Size> const &, BlockPartition,
                    BlockPartition)
    -> DistributedOperator<std::remove_const_t<S>, std::remove_const_t<O>,
                           typename D::memory_space>;
template <class ExecutionSpace, class S, class O, class D, class M, class Size>
DistributedOperator(ExecutionSpace const &, MPI_Comm,
                    KokkosSparse::CrsMatrix<S, O, D, M, Size> const &, BlockPartition,
                    BlockPartition, OperatorOptions const &)
    -> DistributedOperator<std::remove_const_t<S>, std::remove_const_t<O>,
                           typename D::memory_space>;

} // namespace hst
