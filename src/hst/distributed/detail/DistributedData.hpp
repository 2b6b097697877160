#pragma once
// What a DistributedOperator builds once: the rank's column map (owned
// columns first, then the ghost columns its rows touch), one local Operator
// on that numbering, and the neighbour plan that sends each changed owned
// column only to the ranks whose rows touch it.

#include <hst/Operator.hpp>
#include <hst/distributed/BlockPartition.hpp>
#include <hst/distributed/detail/Communicator.hpp>

#include <KokkosSparse_CrsMatrix.hpp>
#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace hst::detail
{

// Message tags on HST's own communicator.
inline constexpr int tag_plan = 1;
inline constexpr int tag_ids = 2;
inline constexpr int tag_changes = 3;

// The neighbour plan. A rank sends to `send_ranks` (the ranks whose rows
// touch some of its owned columns) and receives from `recv_ranks` (the owners
// of its ghost columns). Owned local column c goes to the send neighbours
// listed in [dest_ptr[c], dest_ptr[c + 1]) of `dest`, each with its slot in
// that neighbour's list; on the receiver, slot s from receive neighbour q is
// ghost local column n_owned + recv_offsets[q] + s. Sizes: O(owned columns +
// boundary entries + neighbours).
struct ExchangePlan
{
  struct Destination
  {
    std::int32_t neighbour; // index into send_ranks
    std::int32_t slot;      // place in that neighbour's list
  };
  std::vector<int> send_ranks;
  std::vector<std::int64_t> send_offsets; // send_ranks.size() + 1: list sizes
  std::vector<std::int64_t> dest_ptr;     // n_owned + 1
  std::vector<Destination> dest;
  std::vector<int> recv_ranks;
  std::vector<std::int64_t> recv_offsets; // recv_ranks.size() + 1, into the ghosts

  std::int64_t send_slots() const { return send_offsets.back(); }
  std::int64_t recv_slots() const { return recv_offsets.back(); }
};

template <class Scalar, class Ordinal, class MemorySpace>
struct DistributedData
{
  using local_operator_type = Operator<Scalar, Ordinal, MemorySpace>;

  Communicator comm;
  BlockPartition rows;
  BlockPartition cols;
  std::int64_t row_begin = 0; // this rank's first global row
  std::int64_t col_begin = 0; // this rank's first global column
  Ordinal n_local_rows = 0;
  Ordinal n_owned = 0;              // local columns [0, n_owned): owned, in order
  std::vector<std::int64_t> ghosts; // local column n_owned + g: global id ghosts[g]
  ExchangePlan plan;
  local_operator_type local;

  template <class ExecutionSpace, class Matrix>
  DistributedData(ExecutionSpace const &space, MPI_Comm comm_, Matrix const &A_local,
                  BlockPartition rows_, BlockPartition cols_,
                  OperatorOptions const &options)
      : comm(comm_)
      , rows(std::move(rows_))
      , cols(std::move(cols_))
      , local(build_local(space, A_local, options))
  {
    build_plan();
  }

  // Global id of local column c.
  std::int64_t global_column(Ordinal c) const
  {
    return c < n_owned ? col_begin + c : ghosts[std::size_t(c - n_owned)];
  }

  // Collective (with the neighbours). The two local scheduled arms of a
  // distributed one, for checked owned local ids `owned`: one planned for
  // them, one for the ghost ids their changes reach on this rank.
  template <class ExecutionSpace>
  std::pair<ScheduledArm<Scalar, Ordinal, MemorySpace>,
            ScheduledArm<Scalar, Ordinal, MemorySpace>>
  local_sessions(ExecutionSpace const &space, std::vector<Ordinal> const &owned,
                 int width, SessionOptions const &options) const
  {
    using HostIds =
        Kokkos::View<Ordinal const *, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;
    auto const ghost = exchange_ids(owned);
    return {local.session(space, HostIds(owned.data(), owned.size()), width, options),
            local.session(space, HostIds(ghost.data(), ghost.size()), width, options)};
  }

  // Collective. For each rank's owned local column ids `owned` (distinct),
  // the ghost local ids this rank receives from the others, grouped by
  // receive neighbour. Allocates: for arm construction, not for steps.
  std::vector<Ordinal> exchange_ids(std::vector<Ordinal> const &owned) const
  {
    std::size_t const n_send = plan.send_ranks.size();
    std::size_t const n_recv = plan.recv_ranks.size();
    std::vector<std::int32_t> send(std::size_t(plan.send_slots()));
    std::vector<std::int64_t> count(n_send, 0);
    for (Ordinal c : owned)
      for (auto p = plan.dest_ptr[c]; p < plan.dest_ptr[c + 1]; ++p)
      {
        auto const &d = plan.dest[std::size_t(p)];
        send[std::size_t(plan.send_offsets[d.neighbour] + count[d.neighbour]++)] = d.slot;
      }
    std::vector<std::int32_t> recv(std::size_t(plan.recv_slots()));
    std::vector<MPI_Request> requests(n_send + n_recv);
    for (std::size_t q = 0; q < n_recv; ++q)
      MPI_Irecv(recv.data() + plan.recv_offsets[q],
                int(plan.recv_offsets[q + 1] - plan.recv_offsets[q]), MPI_INT32_T,
                plan.recv_ranks[q], tag_ids, comm.get(), &requests[q]);
    for (std::size_t n = 0; n < n_send; ++n)
      MPI_Isend(send.data() + plan.send_offsets[n], int(count[n]), MPI_INT32_T,
                plan.send_ranks[n], tag_ids, comm.get(), &requests[n_recv + n]);
    std::vector<MPI_Status> statuses(requests.size());
    MPI_Waitall(int(requests.size()), requests.data(), statuses.data());
    std::vector<Ordinal> ghost_ids;
    for (std::size_t q = 0; q < n_recv; ++q)
    {
      int received = 0;
      MPI_Get_count(&statuses[q], MPI_INT32_T, &received);
      for (int j = 0; j < received; ++j)
        ghost_ids.push_back(
            Ordinal(n_owned + plan.recv_offsets[q] + recv[plan.recv_offsets[q] + j]));
    }
    return ghost_ids;
  }

private:
  // Checks A_local against the partitions (agreed by every rank), numbers
  // its columns locally and builds the local Operator.
  template <class ExecutionSpace, class Matrix>
  local_operator_type build_local(ExecutionSpace const &space, Matrix const &A,
                                  OperatorOptions const &options)
  {
    char const *where = "hst::DistributedOperator";
    int const rank = comm.rank();
    auto const entries =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, A.graph.entries);
    agree_on(comm, where, [&] {
      if (rows.ranks() != comm.size())
        throw_invalid("argument 'rows' partitions over ", rows.ranks(),
                      " ranks but the communicator has ", comm.size());
      if (cols.ranks() != comm.size())
        throw_invalid("argument 'cols' partitions over ", cols.ranks(),
                      " ranks but the communicator has ", comm.size());
      if (std::int64_t(A.numRows()) != rows.local_size(rank))
        throw_invalid("argument 'A_local' has ", A.numRows(),
                      " rows but 'rows' gives this "
                      "rank ",
                      rows.local_size(rank));
      if (std::int64_t(A.numCols()) != cols.size())
        throw_invalid("argument 'A_local' has ", A.numCols(),
                      " columns but 'cols' "
                      "partitions ",
                      cols.size(), " (A_local holds global column ids)");
      for (std::size_t p = 0; p < entries.extent(0); ++p)
        if (entries(p) < 0 || std::int64_t(entries(p)) >= cols.size())
          throw_invalid("argument 'A_local' holds column id ", entries(p), " at entry ",
                        p, ", outside [0, ", cols.size(), ")");
      constexpr auto max_ordinal = std::int64_t(std::numeric_limits<Ordinal>::max());
      if (cols.local_size(rank) > max_ordinal)
        throw_invalid("argument 'cols' gives this rank ", cols.local_size(rank),
                      " columns, more than its Ordinal type holds");
    });
    // Every rank must hold the same partitions (their sizes agree by now).
    // Both broadcasts run on every rank before any rank can throw.
    std::vector<std::int64_t> root_rows = rows.offsets(), root_cols = cols.offsets();
    MPI_Bcast(root_rows.data(), int(root_rows.size()), MPI_INT64_T, 0, comm.get());
    MPI_Bcast(root_cols.data(), int(root_cols.size()), MPI_INT64_T, 0, comm.get());
    agree_on(comm, where, [&] {
      if (root_rows != rows.offsets())
        throw_invalid("argument 'rows' differs from rank 0's partition");
      if (root_cols != cols.offsets())
        throw_invalid("argument 'cols' differs from rank 0's partition");
    });
    row_begin = rows.begin(rank);
    col_begin = cols.begin(rank);
    n_local_rows = Ordinal(rows.local_size(rank));
    n_owned = Ordinal(cols.local_size(rank));
    std::int64_t const col_end = cols.end(rank);

    for (std::size_t p = 0; p < entries.extent(0); ++p)
      if (entries(p) < col_begin || entries(p) >= col_end)
        ghosts.push_back(entries(p));
    std::sort(ghosts.begin(), ghosts.end());
    ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
    agree_on(comm, where, [&] {
      if (std::int64_t(n_owned) + std::int64_t(ghosts.size()) >
          std::int64_t(std::numeric_limits<Ordinal>::max()))
        throw_invalid("this rank's owned and ghost columns (", n_owned, " + ",
                      ghosts.size(), ") exceed its Ordinal type");
      if (ghosts.size() > std::size_t(std::numeric_limits<int>::max()))
        throw_invalid("this rank's rows touch ", ghosts.size(),
                      " ghost columns, more than an MPI count holds");
    });

    using entries_type =
        typename Matrix::staticcrsgraph_type::entries_type::non_const_type;
    entries_type local_entries(Kokkos::view_alloc(Kokkos::WithoutInitializing,
                                                  "hst::DistributedOperator::entries"),
                               entries.extent(0));
    auto host_entries = Kokkos::create_mirror_view(local_entries);
    for (std::size_t p = 0; p < entries.extent(0); ++p)
    {
      std::int64_t const g = entries(p);
      host_entries(p) =
          g >= col_begin && g < col_end
              ? Ordinal(g - col_begin)
              : Ordinal(n_owned + (std::lower_bound(ghosts.begin(), ghosts.end(), g) -
                                   ghosts.begin()));
    }
    Kokkos::deep_copy(space, local_entries, host_entries);
    using LocalMatrix = KokkosSparse::CrsMatrix<typename Matrix::value_type, Ordinal,
                                                typename Matrix::device_type, void,
                                                typename Matrix::size_type>;
    // Same row map and values as A_local: only the column ids are renumbered.
    LocalMatrix const local_A("hst::DistributedOperator::A_local", n_local_rows,
                              Ordinal(n_owned + Ordinal(ghosts.size())),
                              typename Matrix::size_type(entries.extent(0)), A.values,
                              A.graph.row_map, local_entries);
    // Agreed: the local build checks the options and can fail on one rank.
    std::unique_ptr<local_operator_type> local_op;
    agree_on(comm, where, [&] {
      local_op = std::make_unique<local_operator_type>(space, local_A, options);
    });
    return std::move(*local_op);
  }

  // Collective: tells each owner which of its columns this rank's rows touch
  // and builds the plan from the answers.
  void build_plan()
  {
    int const size = comm.size();
    // Receive side: ghosts are sorted by global id, so grouped by owner.
    plan.recv_offsets.assign(1, 0);
    for (std::size_t g = 0; g < ghosts.size(); ++g)
    {
      int const owner = cols.owner(ghosts[g]);
      if (plan.recv_ranks.empty() || plan.recv_ranks.back() != owner)
      {
        plan.recv_ranks.push_back(owner);
        plan.recv_offsets.push_back(plan.recv_offsets.back());
      }
      ++plan.recv_offsets.back();
    }
    // Who asks this rank for how many columns: one MPI_Alltoall of counts
    // (O(ranks) scratch, here only).
    std::vector<int> wanted(std::size_t(size), 0), asked(std::size_t(size), 0);
    for (std::size_t q = 0; q < plan.recv_ranks.size(); ++q)
      wanted[plan.recv_ranks[q]] = int(plan.recv_offsets[q + 1] - plan.recv_offsets[q]);
    MPI_Alltoall(wanted.data(), 1, MPI_INT, asked.data(), 1, MPI_INT, comm.get());
    plan.send_offsets.assign(1, 0);
    for (int r = 0; r < size; ++r)
      if (asked[r] > 0)
      {
        plan.send_ranks.push_back(r);
        plan.send_offsets.push_back(plan.send_offsets.back() + asked[r]);
      }
    std::vector<std::int64_t> lists(std::size_t(plan.send_slots()));
    std::vector<MPI_Request> requests(plan.send_ranks.size() + plan.recv_ranks.size());
    for (std::size_t n = 0; n < plan.send_ranks.size(); ++n)
      MPI_Irecv(lists.data() + plan.send_offsets[n],
                int(plan.send_offsets[n + 1] - plan.send_offsets[n]), MPI_INT64_T,
                plan.send_ranks[n], tag_plan, comm.get(), &requests[n]);
    for (std::size_t q = 0; q < plan.recv_ranks.size(); ++q)
      MPI_Isend(ghosts.data() + plan.recv_offsets[q],
                int(plan.recv_offsets[q + 1] - plan.recv_offsets[q]), MPI_INT64_T,
                plan.recv_ranks[q], tag_plan, comm.get(),
                &requests[plan.send_ranks.size() + q]);
    MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE);

    // Per owned column, its destinations (neighbour, slot), by counting sort.
    plan.dest_ptr.assign(std::size_t(n_owned) + 1, 0);
    for (auto const g : lists)
      ++plan.dest_ptr[std::size_t(g - col_begin) + 1];
    for (Ordinal c = 0; c < n_owned; ++c)
      plan.dest_ptr[c + 1] += plan.dest_ptr[c];
    plan.dest.resize(lists.size());
    std::vector<std::int64_t> next(plan.dest_ptr.begin(), plan.dest_ptr.end() - 1);
    for (std::size_t n = 0; n < plan.send_ranks.size(); ++n)
      for (auto p = plan.send_offsets[n]; p < plan.send_offsets[n + 1]; ++p)
        plan.dest[std::size_t(next[std::size_t(lists[p] - col_begin)]++)] =
            ExchangePlan::Destination{std::int32_t(n),
                                      std::int32_t(p - plan.send_offsets[n])};
  }
};

} // namespace hst::detail
