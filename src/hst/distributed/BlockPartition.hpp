#pragma once

#include <hst/detail/InputCheck.hpp>

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace hst
{

/// A contiguous partition of [0, n) over the ranks of a communicator: rank r
/// owns [offsets[r], offsets[r + 1]). Replicated on every rank (ranks + 1
/// numbers), as Tpetra's contiguous maps are.
class BlockPartition
{
public:
  /// Throws std::invalid_argument unless `offsets` holds at least two entries,
  /// starts at 0 and never decreases.
  explicit BlockPartition(std::vector<std::int64_t> offsets)
      : offsets_(std::move(offsets))
  {
    if (offsets_.size() < 2)
      detail::throw_invalid("hst::BlockPartition: argument 'offsets' must hold ranks + 1 "
                            ">= 2 entries, got ",
                            offsets_.size());
    if (offsets_.front() != 0)
      detail::throw_invalid(
          "hst::BlockPartition: argument 'offsets' must start at 0, got ",
          offsets_.front());
    for (std::size_t r = 1; r < offsets_.size(); ++r)
      if (offsets_[r] < offsets_[r - 1])
        detail::throw_invalid("hst::BlockPartition: argument 'offsets' decreases at ", r,
                              ": ", offsets_[r - 1], " then ", offsets_[r]);
  }

  /// [0, n) in blocks whose sizes differ by at most one, the larger first.
  /// Not collective (reads only the communicator's size).
  static BlockPartition uniform(std::int64_t n, MPI_Comm comm)
  {
    if (n < 0)
      detail::throw_invalid(
          "hst::BlockPartition::uniform: argument 'n' must be >= 0, got ", n);
    int ranks = 0;
    MPI_Comm_size(comm, &ranks);
    std::vector<std::int64_t> offsets(std::size_t(ranks) + 1, 0);
    for (int r = 0; r < ranks; ++r)
      offsets[r + 1] = offsets[r] + n / ranks + (r < n % ranks ? 1 : 0);
    return BlockPartition(std::move(offsets));
  }

  /// The partition in which rank r owns the `n_local` given on rank r, in
  /// rank order. Collective: one MPI_Allgather. Every rank throws
  /// std::invalid_argument, naming the rank, if any rank passes n_local < 0.
  static BlockPartition from_local_sizes(std::int64_t n_local, MPI_Comm comm)
  {
    int ranks = 0;
    MPI_Comm_size(comm, &ranks);
    std::vector<std::int64_t> sizes(std::size_t(ranks), 0);
    MPI_Allgather(&n_local, 1, MPI_INT64_T, sizes.data(), 1, MPI_INT64_T, comm);
    std::vector<std::int64_t> offsets(std::size_t(ranks) + 1, 0);
    for (int r = 0; r < ranks; ++r)
    {
      if (sizes[r] < 0)
        detail::throw_invalid("hst::BlockPartition::from_local_sizes: argument 'n_local' "
                              "must be >= 0, got ",
                              sizes[r], " on rank ", r);
      offsets[r + 1] = offsets[r] + sizes[r];
    }
    return BlockPartition(std::move(offsets));
  }

  int ranks() const { return int(offsets_.size()) - 1; }
  /// n: the size of the partitioned range.
  std::int64_t size() const { return offsets_.back(); }
  std::int64_t begin(int rank) const { return offsets_[rank]; }
  std::int64_t end(int rank) const { return offsets_[rank + 1]; }
  std::int64_t local_size(int rank) const { return end(rank) - begin(rank); }
  std::vector<std::int64_t> const &offsets() const { return offsets_; }

  /// The rank that owns `id`, for id in [0, size()); O(log ranks).
  int owner(std::int64_t id) const
  {
    auto const it = std::upper_bound(offsets_.begin(), offsets_.end(), id);
    return int(it - offsets_.begin()) - 1;
  }

  friend bool operator==(BlockPartition const &a, BlockPartition const &b)
  {
    return a.offsets_ == b.offsets_;
  }
  friend bool operator!=(BlockPartition const &a, BlockPartition const &b)
  {
    return !(a == b);
  }

private:
  std::vector<std::int64_t> offsets_;
};

} // namespace hst
