#pragma once
// Fixtures of the MPI tests: a global operator assembled identically on every
// rank, cut into this rank's rows, and a global workload whose changes each
// rank takes for the columns it owns.

#include <hst/HST.hpp>

#include <mpi.h>

#include "HSTTestHelpers.hpp"
#include <workload/Workload.hpp>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace hst_test
{

inline int world_rank()
{
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

inline int world_size()
{
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

// The largest of every rank's value.
inline double max_over_ranks(double value)
{
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return value;
}

// Whether `text` is the same on every rank (compared with rank 0's).
inline bool same_on_every_rank(std::string const &text)
{
  int length = int(text.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string root = text;
  root.resize(std::size_t(length));
  MPI_Bcast(root.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD);
  int same = root == text;
  MPI_Allreduce(MPI_IN_PLACE, &same, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return same != 0;
}

// A partition of n over the world's ranks with rank r weighted weight(r)
// (weights may be 0: ranks with nothing).
template <class Weight>
hst::BlockPartition weighted_partition(std::int64_t n, Weight weight)
{
  int const size = world_size();
  std::int64_t total = 0;
  for (int r = 0; r < size; ++r)
    total += weight(r);
  std::vector<std::int64_t> offsets(std::size_t(size) + 1, 0);
  std::int64_t running = 0;
  for (int r = 0; r < size; ++r)
  {
    running += weight(r);
    offsets[r + 1] = total > 0 ? n * running / total : (r + 1 == size ? n : 0);
  }
  return hst::BlockPartition(offsets);
}

// Uneven partitions: rows weighted 1, 2, ... with the last rank empty, and
// columns weighted ..., 2, 1 with the first rank empty (on 2+ ranks).
inline hst::BlockPartition uneven_rows(std::int64_t n)
{
  int const size = world_size();
  return weighted_partition(n,
                            [&](int r) { return size > 1 && r == size - 1 ? 0 : r + 1; });
}
inline hst::BlockPartition uneven_cols(std::int64_t n)
{
  int const size = world_size();
  return weighted_partition(n, [&](int r) { return size > 1 && r == 0 ? 0 : size - r; });
}

// This rank's rows of A, with global column ids.
template <class ExecutionSpace>
Matrix<ExecutionSpace> local_rows(Triplets const &A, hst::BlockPartition const &rows)
{
  int const rank = world_rank();
  Triplets local(Ordinal(rows.local_size(rank)), A.n_cols);
  for (auto r = rows.begin(rank); r < rows.end(rank); ++r)
    local.rows[std::size_t(r - rows.begin(rank))] = A.rows[std::size_t(r)];
  return to_matrix<ExecutionSpace>(local);
}

// The changes of one step that this rank owns: the ids of `cols` in
// [begin, end) and their rows of dx (row-major, B wide), in the order given.
struct OwnedChanges
{
  std::vector<Ordinal> cols;
  std::vector<Scalar> dx;
};

inline OwnedChanges owned_changes(std::vector<Ordinal> const &cols,
                                  std::vector<Scalar> const &dx, int width,
                                  hst::BlockPartition const &partition)
{
  int const rank = world_rank();
  OwnedChanges owned;
  for (std::size_t i = 0; i < cols.size(); ++i)
    if (cols[i] >= partition.begin(rank) && cols[i] < partition.end(rank))
    {
      owned.cols.push_back(cols[i]);
      owned.dx.insert(owned.dx.end(), dx.begin() + std::ptrdiff_t(i * width),
                      dx.begin() + std::ptrdiff_t((i + 1) * width));
    }
  return owned;
}

// The four arms of a distributed operator (hst::DistributedOperator or
// hst::tpetra::DeltaOperator), for tests that run each.
enum class Kind
{
  scheduled,
  exact_set,
  scatter,
  adaptive,
};

inline char const *to_string(Kind k)
{
  switch (k)
  {
  case Kind::scheduled:
    return "scheduled";
  case Kind::exact_set:
    return "exact_set";
  case Kind::scatter:
    return "scatter";
  case Kind::adaptive:
    return "adaptive";
  }
  return "?";
}

inline constexpr Kind all_kinds[] = {Kind::scheduled, Kind::exact_set, Kind::scatter,
                                     Kind::adaptive};

// Calls f(arm) with the arm of `kind` of `op`, made for the column ids in
// `expected` (a rank-1 View). The adaptive session samples and re-checks
// often enough to do both inside short runs.
template <class Op, class Expected, class F>
void with_arm(Op const &op, Kind kind, Expected const &expected, int width, F &&f)
{
  switch (kind)
  {
  case Kind::scheduled:
  {
    auto arm = op.session(expected, width);
    f(arm);
    return;
  }
  case Kind::exact_set:
  {
    auto arm = op.baseline(width);
    f(arm);
    return;
  }
  case Kind::scatter:
  {
    auto arm = op.scatter(width);
    f(arm);
    return;
  }
  case Kind::adaptive:
  {
    hst::DistributedAdaptiveOptions options;
    options.sample_period = 8;
    options.recheck_period = 40;
    auto arm = op.adaptive(expected, width, options);
    f(arm);
    return;
  }
  }
}

} // namespace hst_test
