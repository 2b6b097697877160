#pragma once
// Host scratch indexed by operator column and by operator row, made once per
// Operator and shared by every arm made from it, so that making an arm costs
// nothing proportional to the operator's size (issue 14).
//
// - Generation stamps: a user takes a new generation and stamps the entries
//   it touches; an entry whose stamp is not the current generation holds
//   nothing. No user ever clears the arrays (except once every 2^32
//   generations, on wrap-around).
// - Exclusive leases: an arm holds the scratch only inside one call (an input
//   check, a re-plan, a compile) through a Lease, and keeps nothing in it
//   between calls. One scratch (made with the operator) serves the common
//   case of one host thread at a time with one atomic exchange per lease;
//   a lease taken while it is held (two sessions of one Operator used from
//   two host threads at once) gets a spare, made on first need and kept for
//   reuse under a mutex. Arms of one session never hold two leases at once.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace hst::detail
{

// Per operator row: the generation that last touched it and a slot (the
// exact-set arm's index of that row in its list): one 8-byte record, one
// cache line per touched row.
struct RowMark
{
  std::uint32_t generation = 0;
  std::int32_t slot = 0;
};

class HostScratch
{
public:
  HostScratch(std::size_t n_rows, std::size_t n_cols)
      : column_stamp_(n_cols, 0)
      , column_value_(n_cols, 0)
      , row_mark_(n_rows)
  {}

  // A new generation for the column arrays: no column is stamped with it.
  std::uint32_t new_column_generation()
  {
    if (++column_generation_ == 0)
    {
      std::fill(column_stamp_.begin(), column_stamp_.end(), 0);
      column_generation_ = 1;
    }
    return column_generation_;
  }

  // A new generation for the row marks: no row is marked with it.
  std::uint32_t new_row_generation()
  {
    if (++row_generation_ == 0)
    {
      std::fill(row_mark_.begin(), row_mark_.end(), RowMark{});
      row_generation_ = 1;
    }
    return row_generation_;
  }

  std::uint32_t *column_stamp() { return column_stamp_.data(); }
  std::int32_t *column_value() { return column_value_.data(); }
  RowMark *row_mark() { return row_mark_.data(); }

private:
  std::vector<std::uint32_t> column_stamp_;
  std::vector<std::int32_t> column_value_;
  std::vector<RowMark> row_mark_;
  std::uint32_t column_generation_ = 0;
  std::uint32_t row_generation_ = 0;
};

class ScratchPool
{
public:
  ScratchPool(std::size_t n_rows, std::size_t n_cols)
      : n_rows_(n_rows)
      , n_cols_(n_cols)
      , primary_(std::make_unique<HostScratch>(n_rows, n_cols))
  {}
  ScratchPool(ScratchPool const &) = delete;
  ScratchPool &operator=(ScratchPool const &) = delete;

  // Exclusive use of one scratch until the lease ends.
  class Lease
  {
  public:
    Lease(Lease const &) = delete;
    Lease &operator=(Lease const &) = delete;
    ~Lease() { pool_->release(scratch_); }
    HostScratch *operator->() const { return scratch_; }
    HostScratch &operator*() const { return *scratch_; }

  private:
    friend class ScratchPool;
    Lease(ScratchPool *pool, HostScratch *scratch)
        : pool_(pool)
        , scratch_(scratch)
    {}
    ScratchPool *pool_;
    HostScratch *scratch_;
  };

  // Takes a scratch; never waits for another thread's lease. Allocates only
  // when every scratch made so far is held (concurrent use).
  Lease acquire()
  {
    if (!primary_busy_.exchange(true, std::memory_order_acquire))
      return {this, primary_.get()};
    std::lock_guard<std::mutex> lock(mutex_);
    if (spares_free_.empty())
    {
      spares_.push_back(std::make_unique<HostScratch>(n_rows_, n_cols_));
      spares_free_.reserve(spares_.size());
      return {this, spares_.back().get()};
    }
    HostScratch *const s = spares_free_.back();
    spares_free_.pop_back();
    return {this, s};
  }

  // Spares made so far (each made when every other scratch was held).
  std::size_t spares() const
  {
    std::lock_guard<std::mutex> lock(mutex_);
    return spares_.size();
  }

private:
  void release(HostScratch *s)
  {
    if (s == primary_.get())
    {
      primary_busy_.store(false, std::memory_order_release);
      return;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    spares_free_.push_back(s); // capacity reserved when s was made
  }

  std::size_t n_rows_;
  std::size_t n_cols_;
  std::unique_ptr<HostScratch> primary_;
  std::atomic<bool> primary_busy_{false};
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<HostScratch>> spares_;
  std::vector<HostScratch *> spares_free_;
};

// Entries of the columns that entered or left a set between two steps (the
// cost model's churn), with the column stamps of a lease from `pool`:
// `before` holds the earlier step's ids, the `after` lists the later
// step's (distinct over all lists); length(c) is column c's entry count.
// Returns {entries of the later step, entries of the columns in one step
// only}. O(|before| + |after|).
template <class Ordinal, class Length>
std::pair<double, double>
set_change_entries(ScratchPool &pool, std::vector<Ordinal> const &before,
                   std::initializer_list<std::pair<Ordinal const *, std::size_t>> after,
                   Length const &length)
{
  auto const lease = pool.acquire();
  std::uint32_t const generation = lease->new_column_generation();
  std::uint32_t *const stamp = lease->column_stamp();
  std::int32_t *const kept = lease->column_value();
  for (Ordinal c : before)
    stamp[c] = generation, kept[c] = 0;
  double entries = 0, changed = 0;
  for (auto const &[ids, n] : after)
    for (std::size_t i = 0; i < n; ++i)
    {
      double const e = length(ids[i]);
      entries += e;
      if (stamp[ids[i]] == generation)
        kept[ids[i]] = 1;
      else
        changed += e;
    }
  for (Ordinal c : before)
    if (!kept[c])
      changed += length(c);
  return {entries, changed};
}

// Column tiles that the columns entering a set between two steps open: the
// distinct tiles of the `after` ids that are not in `before` (the earlier
// step's ids) and that no column of `before` lies in. tile_of(c) is column
// c's column tile, below the column count (a tile holds at least one
// column), so the column stamps index tiles too, under a second generation.
// `after` holds distinct ids. O(|before| + n).
template <class Ordinal, class TileOf>
std::size_t opened_tiles(ScratchPool &pool, std::vector<Ordinal> const &before,
                         Ordinal const *after, std::size_t n, TileOf const &tile_of)
{
  auto const lease = pool.acquire();
  std::uint32_t *const stamp = lease->column_stamp();
  std::int32_t *const entering = lease->column_value();
  std::uint32_t const member = lease->new_column_generation();
  for (Ordinal c : before)
    stamp[c] = member;
  for (std::size_t i = 0; i < n; ++i)
    entering[after[i]] = stamp[after[i]] != member;
  std::uint32_t const touched = lease->new_column_generation();
  for (Ordinal c : before)
    stamp[tile_of(c)] = touched;
  std::size_t opened = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (entering[after[i]])
    {
      auto const t = tile_of(after[i]);
      if (stamp[t] != touched)
      {
        stamp[t] = touched;
        ++opened;
      }
    }
  return opened;
}

} // namespace hst::detail
