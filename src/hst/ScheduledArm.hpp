#pragma once

#include <hst/Options.hpp>
#include <hst/detail/ArmBase.hpp>
#include <hst/detail/IndexMap.hpp>
#include <hst/detail/TiledApply.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace hst
{

/// What a scheduled arm has done so far.
struct ScheduleStats
{
  std::int64_t steps = 0;          ///< apply_cols calls that passed the checks
  std::int64_t replans = 0;        ///< steps whose column set changed
  std::int64_t tiles_compiled = 0; ///< column tiles added to the schedule
  std::int64_t tiles_retired = 0;  ///< column tiles dropped after disuse
  std::int64_t column_tiles = 0;   ///< column tiles scheduled now
  std::int64_t tiles = 0;          ///< tiles (row block x column tile) now
  std::int64_t row_blocks = 0;     ///< row blocks (work items) of the last step
  std::int64_t pieces = 0;         ///< pieces (a column inside a tile) of the last step
  std::int64_t entries = 0;        ///< entries of A those pieces hold
};

/// Bytes a scheduled arm holds (ScheduledArm::memory()), host and device
/// together, by capacity (what is allocated, not what is in use).
struct ScheduleMemory
{
  /// What the schedule holds and may grow with: the piece pool (device and,
  /// where it is separate, host copies), the work list, the tile and segment
  /// lookup maps, the per-slot tile records and free lists, the previous set
  /// and the re-plan scratch.
  std::size_t schedule = 0;
  /// Records of the row blocks touched so far (lookup map, piece regions,
  /// work items): at most one per row block of the operator.
  std::size_t row_blocks = 0;
  std::size_t total() const { return schedule + row_blocks; }
};

/// Scheduled arm: a schedule of column tiles, compiled for the tiles that the
/// expected columns fall in, reused while the changed set drifts.
///
/// Each step's columns must lie in scheduled column tiles. A column in a tile
/// the schedule lacks compiles that tile in (or throws, with
/// SessionOptions::strict); a scheduled tile that no step used for more than
/// SessionOptions::retire_after steps is retired at the next re-plan.
///
/// The arm keeps, per row block, the pieces (one present column inside one
/// tile, read from the tile index) of the columns of the current set, in one
/// region of a piece list. A step whose set changed patches that list: the
/// leaving columns' pieces are removed (the block's last piece fills the
/// hole), the entering columns' pieces appended, the pieces of columns that
/// moved to another position in `cols` re-pointed at their row of dx. The cost
/// is one pass over `cols` to find those columns plus O(their pieces) (each
/// column's nonempty segments are listed in the operator's tile index),
/// however large k is; no pass over entries or rows. A block that would
/// outgrow its region moves, once per step, to the smallest power-of-two
/// region that holds its pieces after the step (regions are reused through
/// per-size free lists); a block left without pieces gives its region back
/// and drops out of the work list. On a device, a changed step uploads two
/// spans: the piece regions of the blocks it changed (one copy of the span
/// they lie in) and the short work list. The kernel runs one work item per
/// listed row block and walks exactly its pieces, so absent columns of a
/// scheduled tile cost nothing; on host backends each row's terms come in
/// list order on any number of threads (bitwise reproducible), on devices a
/// team per block adds its pieces atomically. A step that repeats the
/// previous set does no planning at all.
template <class Scalar, class Ordinal, class MemorySpace>
class ScheduledArm : public detail::ArmBase<ScheduledArm<Scalar, Ordinal, MemorySpace>,
                                            Scalar, Ordinal, MemorySpace>
{
  using Base = detail::ArmBase<ScheduledArm, Scalar, Ordinal, MemorySpace>;
  friend Base;

public:
  static constexpr char const *name = "hst::ScheduledArm::apply_cols";

  template <class ExecutionSpace>
  ScheduledArm(ExecutionSpace const &space,
               std::shared_ptr<typename Base::data_type const> op,
               std::vector<Ordinal> const &expected_cols, int width,
               SessionOptions const &options)
      : Base(std::move(op), width, "hst::Operator::session")
      , options_(options)
      , work_("hst::ScheduledArm::work")
      , pieces_("hst::ScheduledArm::pieces")
  {
    if (options.retire_after <= 0)
      detail::throw_invalid("hst::Operator::session: argument "
                            "'options.retire_after' must be positive, got ",
                            options.retire_after);
    auto const n_cols = this->op_->n_cols;
    for (std::size_t i = 0; i < expected_cols.size(); ++i)
      if (expected_cols[i] < 0 || expected_cols[i] >= n_cols)
        detail::throw_invalid("hst::Operator::session: argument 'expected_cols' "
                              "holds column id ",
                              expected_cols[i], " at position ", i, ", outside [0, ",
                              n_cols, ")");
    // Compile the expected columns' tiles and plan for them now, so that a
    // first step on exactly that set runs the kernel alone (its plan is
    // preparation, like the tile compiles). A list with repeated ids is only
    // used for its tiles. Nothing here is of the operator's size: the state
    // is sized by the tiles, segments and row blocks the set touches (issue
    // 14).
    bool distinct = true;
    {
      auto const lease = this->op_->scratch->acquire();
      std::uint32_t const generation = lease->new_column_generation();
      std::uint32_t *const stamp = lease->column_stamp();
      for (std::size_t i = 0; i < expected_cols.size() && distinct; ++i)
        distinct =
            std::exchange(stamp[std::size_t(expected_cols[i])], generation) != generation;
    }
    if (distinct && !expected_cols.empty())
    {
      replan(space, expected_cols.data(), expected_cols.size()); // compiles the tiles
      history_.remember(expected_cols.data(), expected_cols.size());
    }
    else
      for (Ordinal c : expected_cols)
      {
        auto const t = this->op_->column_tile_of(c);
        if (tile_slot_.find(t) < 0)
          add_tile(t);
      }
    update_schedule_stats();
  }

  ScheduleStats const &stats() const { return stats_; }
  SessionOptions const &options() const { return options_; }

  /// Bytes held now (see ScheduleMemory). Bounded under any sequence of
  /// sets: tiles unused for retire_after steps are retired, and the piece
  /// pool's regions are reused through their free lists.
  ScheduleMemory memory() const
  {
    auto bytes = [](auto const &v) { return v.capacity() * sizeof(v[0]); };
    constexpr std::size_t copies = decltype(pieces_)::shared ? 1 : 2;
    ScheduleMemory m;
    m.schedule = copies * (pieces_.capacity() * sizeof(Piece) +
                           work_.capacity() * sizeof(detail::WorkRange)) +
                 bytes(piece_segment_) + bytes(slot_tile_) + bytes(slot_last_used_) +
                 bytes(slot_columns_) + bytes(free_slots_) + bytes(claimed_) +
                 bytes(entering_) + bytes(moved_) + bytes(incoming_) +
                 bytes(history_.previous()) + bytes(free_regions_) + tile_slot_.bytes() +
                 segment_piece_.bytes();
    for (auto const &list : free_regions_)
      m.schedule += bytes(list);
    m.row_blocks = block_local_.bytes() + bytes(block_start_) + bytes(block_count_) +
                   bytes(block_class_) + bytes(block_work_) + bytes(block_dirty_) +
                   bytes(block_incoming_) + bytes(incoming_blocks_) +
                   bytes(dirty_blocks_) + bytes(work_block_);
    return m;
  }

private:
  using Piece = detail::TilePiece;

  template <class ExecutionSpace, class Cols, class Dx, class Y>
  void apply_checked(ExecutionSpace const &space, Ordinal const *host_cols,
                     Cols const &cols, Dx const &dx, Y const &y)
  {
    std::size_t const k = cols.extent(0);
    if (options_.strict)
      check_covered(host_cols, k);
    ++step_;
    ++stats_.steps;
    if (!history_.same_as_previous(host_cols, k))
    {
      // the host rewrites lists that earlier kernels may still read
      detail::wait_for_kernel_readers<ExecutionSpace, decltype(pieces_)::shared>(space);
      ++stats_.replans;
      replan(space, host_cols, k);
      history_.remember(host_cols, k);
    }
    if (k > 0)
      detail::tiled_apply(space, *this->op_, n_work_, piece_entries_, max_block_pieces_,
                          work_.device(), pieces_.device(), this->width_, dx, y);
  }

  void check_covered(Ordinal const *cols, std::size_t k) const
  {
    for (std::size_t i = 0; i < k; ++i)
    {
      auto const t = this->op_->column_tile_of(cols[i]);
      if (tile_slot_.find(t) < 0)
        detail::throw_invalid(name, ": argument 'cols' holds column id ", cols[i],
                              " at position ", i, ", in column tile ", t,
                              " which the strict schedule does not hold");
    }
  }

  // Patches the piece lists from the previous set to `cols`: leavers out
  // first, then moved columns re-pointed, then entrants in (compiling their
  // tiles in as needed); then retires unused tiles and uploads what changed.
  template <class ExecutionSpace>
  void replan(ExecutionSpace const &space, Ordinal const *cols, std::size_t k)
  {
    auto const &previous = history_.previous();
    claimed_.assign(previous.size(), 0);
    entering_.clear();
    moved_.clear();
    entering_.reserve(k); // both hold at most k: they grow only when k does
    moved_.reserve(k);
    {
      // Each column's position in the previous set, stamped in the
      // operator's shared scratch (O(previous k), nothing cleared).
      auto const lease = this->op_->scratch->acquire();
      std::uint32_t const generation = lease->new_column_generation();
      std::uint32_t *const stamp = lease->column_stamp();
      std::int32_t *const position = lease->column_value();
      for (std::size_t p = 0; p < previous.size(); ++p)
      {
        stamp[previous[p]] = generation;
        position[previous[p]] = std::int32_t(p);
      }
      for (std::size_t i = 0; i < k; ++i)
      {
        auto const p = stamp[cols[i]] == generation ? position[cols[i]] : -1;
        if (p < 0)
          entering_.push_back(std::int32_t(i));
        else
        {
          claimed_[std::size_t(p)] = 1;
          if (std::size_t(p) != i)
            moved_.push_back(std::int32_t(i));
        }
      }
    }
    for (std::size_t p = 0; p < previous.size(); ++p)
      if (!claimed_[p])
        remove_column(previous[p]);
    for (auto const i : moved_)
      reposition_column(cols[i], i);
    add_columns(cols);
    if (!options_.strict) // a strict schedule is fixed
      retire_unused();    // spares the tiles this step uses
    publish(space);
    update_schedule_stats();
  }

  // Calls f(segment, block) for each nonempty segment of column c, with
  // the arm's local id of the segment's row block: the tile index lists them
  // per column, so a column costs its nonempty segments only, not a test of
  // every tile of its column tile (on circuit_100000 a column tile spans 13
  // tiles on average; the 300 expected columns of the sweep have entries in
  // 1240 of them).
  template <class F>
  void for_each_segment(Ordinal c, F &&f)
  {
    auto const &op = *this->op_;
    std::size_t const j = std::size_t(op.column_in_tile[c]);
    std::size_t const tile = std::size_t(op.options.tile);
    std::size_t const position = op.locality_position(c);
    for (auto s = op.segment_tile_ptr[position]; s < op.segment_tile_ptr[position + 1];
         ++s)
    {
      auto const q = op.segment_tile[s];
      f(std::size_t(q) * tile + j, local_block(op.tile_row_block[std::size_t(q)]));
    }
  }

  // The arm's id of row block `block` (its index in the per-block arrays),
  // given when a step first touches the block and kept from then on: the
  // arrays hold the blocks the sets touched so far, not all of them.
  std::int32_t local_block(std::int32_t block)
  {
    auto l = block_local_.find(block);
    if (l >= 0)
      return l;
    l = std::int32_t(block_start_.size());
    block_local_.set(block, l);
    block_start_.push_back(0);
    block_count_.push_back(0);
    block_class_.push_back(-1);
    block_work_.push_back(-1);
    block_dirty_.push_back(0);
    block_incoming_.push_back(0);
    work_block_.push_back(-1);
    dirty_blocks_.reserve(block_start_.size());
    incoming_blocks_.reserve(block_start_.size());
    work_.reserve(block_start_.size());
    return l;
  }

  // Adds the entering columns' pieces, in two passes: the first lists them
  // (compiling their tiles in as needed) and counts them per row block, so
  // that each block reached takes a region that holds its pieces after the
  // step and the segment map room for all of them, once; the second places
  // them. Measured on circuit_100000 (300 columns, 1240 pieces over 96 row
  // blocks), making the arm spent about half its time moving pieces to
  // doubled regions (re-keying each) and rehashing when blocks grew one
  // piece at a time. The index entries both passes read are loaded first,
  // link by link over all entering columns (touch_planning_chain): a probe
  // makes the arm on a cold cache, after the other arms' steps, and column
  // by column its misses came one after another (road_316x316, 300
  // columns: 150-220 us so, 80-140 us touched first, 26-28 us warm). On the
  // microsecond sweep, sets that jump at rho 0.002 put the session within
  // 0.9x of the best arm in 22 and 15 of 28 cases against 8 and 10 without.
  void add_columns(Ordinal const *cols)
  {
    this->op_->touch_planning_chain(entering_.size(),
                                    [&](std::size_t e) { return cols[entering_[e]]; });
    incoming_.clear();
    for (auto const i : entering_)
    {
      auto const t = this->op_->column_tile[cols[i]];
      auto s = tile_slot_.find(t);
      if (s < 0)
        s = add_tile(t);
      ++slot_columns_[s];
      for_each_segment(cols[i], [&](std::size_t segment, std::int32_t block) {
        if (block_incoming_[block]++ == 0)
          incoming_blocks_.push_back(block);
        incoming_.push_back({segment, block, i});
      });
    }
    segment_piece_.reserve(std::size_t(n_pieces_) + incoming_.size());
    for (auto const block : incoming_blocks_)
    {
      auto const needed = block_count_[block] + block_incoming_[block];
      std::int32_t size_class = 0;
      while (capacity(size_class) < needed)
        ++size_class;
      if (block_class_[block] < 0)
        open_block(block, size_class);
      else if (block_class_[block] < size_class)
        grow_block(block, size_class);
      block_incoming_[block] = 0;
      touch(block);
    }
    incoming_blocks_.clear();
    std::size_t const *const segment_ptr = this->op_->segment_ptr.data();
    Piece *const pieces = pieces_.host();
    for (auto const &in : incoming_)
    {
      auto const e = block_start_[in.block] + block_count_[in.block]++;
      auto const begin = segment_ptr[in.segment];
      auto const length = std::int32_t(segment_ptr[in.segment + 1] - begin);
      pieces[e] = {begin, length, in.position};
      piece_entries_ += length;
      piece_segment_[std::size_t(e)] = in.segment;
      segment_piece_.set(std::int64_t(in.segment), e);
    }
    n_pieces_ += std::int64_t(incoming_.size());
  }

  void remove_column(Ordinal c)
  {
    auto const s = tile_slot_.find(this->op_->column_tile[c]);
    if (--slot_columns_[s] == 0)
      slot_last_used_[s] = step_ - 1; // the last step that held one of its columns
    for_each_segment(c, [&](std::size_t segment, std::int32_t block) {
      auto const e = segment_piece_.find(std::int64_t(segment));
      segment_piece_.erase(std::int64_t(segment));
      piece_entries_ -= pieces_.host()[e].length;
      --n_pieces_;
      auto const last = block_start_[block] + --block_count_[block];
      if (e != last)
      {
        Piece *const pieces = pieces_.host();
        pieces[e] = pieces[last];
        auto const moved = piece_segment_[std::size_t(last)];
        piece_segment_[std::size_t(e)] = moved;
        segment_piece_.set(std::int64_t(moved), e);
      }
      if (block_count_[block] == 0)
        close_block(block);
      else
        touch(block);
    });
  }

  void reposition_column(Ordinal c, std::int32_t position)
  {
    for_each_segment(c, [&](std::size_t segment, std::int32_t block) {
      pieces_.host()[segment_piece_.find(std::int64_t(segment))].position = position;
      touch(block);
    });
  }

  static std::int32_t capacity(std::int32_t size_class)
  {
    return std::int32_t(min_region) << size_class;
  }

  // A free region of capacity(size_class) pieces.
  std::int32_t take_region(std::int32_t size_class)
  {
    auto const z = std::size_t(size_class);
    if (z < free_regions_.size() && !free_regions_[z].empty())
    {
      auto const start = free_regions_[z].back();
      free_regions_[z].pop_back();
      return start;
    }
    auto const start = pool_used_;
    pool_used_ += capacity(size_class);
    if (std::size_t(pool_used_) > pieces_.capacity())
    {
      pieces_.reserve(std::size_t(pool_used_));
      auto const n = pieces_.capacity();
      piece_segment_.resize(n);
      // Free lists for every region size the pool can hold, each with room
      // for as many regions as fit in it: freeing never allocates.
      std::size_t classes = 0;
      while (std::size_t(capacity(std::int32_t(classes))) <= n)
        ++classes;
      free_regions_.resize(classes);
      for (std::size_t c = 0; c < classes; ++c)
        free_regions_[c].reserve(n / std::size_t(capacity(std::int32_t(c))));
      pool_reallocated_ = true;
    }
    return start;
  }

  void open_block(std::int32_t block, std::int32_t size_class)
  {
    block_class_[block] = size_class;
    block_start_[block] = take_region(size_class);
    block_count_[block] = 0;
    block_work_[block] = n_work_;
    work_block_[std::size_t(n_work_)] = block;
    ++n_work_;
  }

  // Moves the block's pieces to a region of the larger size_class.
  void grow_block(std::int32_t block, std::int32_t size_class)
  {
    auto const from = block_start_[block];
    auto const to = take_region(size_class);
    Piece *const pieces = pieces_.host();
    for (std::int32_t e = 0; e < block_count_[block]; ++e)
    {
      pieces[to + e] = pieces[from + e];
      auto const segment = piece_segment_[std::size_t(from + e)];
      piece_segment_[std::size_t(to + e)] = segment;
      segment_piece_.set(std::int64_t(segment), to + e);
    }
    free_regions_[std::size_t(block_class_[block])].push_back(from);
    block_class_[block] = size_class;
    block_start_[block] = to;
  }

  // A block without pieces gives its region back and leaves the work list
  // (the last work item takes its place).
  void close_block(std::int32_t block)
  {
    free_regions_[std::size_t(block_class_[block])].push_back(block_start_[block]);
    block_class_[block] = -1;
    auto const w = block_work_[block];
    auto const last = --n_work_;
    if (w != last)
    {
      auto const moved = work_block_[std::size_t(last)];
      work_block_[std::size_t(w)] = moved;
      block_work_[moved] = w;
    }
    block_work_[block] = -1;
  }

  void touch(std::int32_t block)
  {
    if (!block_dirty_[block])
    {
      block_dirty_[block] = 1;
      dirty_blocks_.push_back(block);
    }
  }

  // Rewrites the work list and makes the changed parts of the piece list
  // visible to kernels on `space` (nothing to copy where the host can reach
  // MemorySpace).
  template <class ExecutionSpace>
  void publish(ExecutionSpace const &space)
  {
    detail::WorkRange *const work = work_.host();
    max_block_pieces_ = 0;
    for (std::int32_t w = 0; w < n_work_; ++w)
    {
      auto const block = work_block_[std::size_t(w)];
      work[w] = {block_start_[block], block_start_[block] + block_count_[block]};
      max_block_pieces_ = std::max(max_block_pieces_, block_count_[block]);
    }
    if constexpr (!decltype(pieces_)::shared)
    {
      if (pool_reallocated_)
        pieces_.upload(space, std::size_t(pool_used_));
      else
      {
        // One copy: the span the changed blocks' regions lie in.
        auto lo = pool_used_, hi = std::int32_t(0);
        for (auto const block : dirty_blocks_)
          if (block_class_[block] >= 0)
          {
            lo = std::min(lo, block_start_[block]);
            hi = std::max(hi, block_start_[block] + block_count_[block]);
          }
        pieces_.upload(space, std::size_t(lo), std::size_t(std::max(lo, hi)));
      }
      work_.upload(space, std::size_t(n_work_));
    }
    pool_reallocated_ = false;
    for (auto const block : dirty_blocks_)
      block_dirty_[block] = 0;
    dirty_blocks_.clear();
    stats_.row_blocks = std::int64_t(n_work_);
    stats_.pieces = n_pieces_;
    stats_.entries = piece_entries_;
  }

  std::int32_t add_tile(std::int32_t t)
  {
    std::int32_t s;
    if (free_slots_.empty())
    {
      s = std::int32_t(slot_tile_.size());
      slot_tile_.push_back(t);
      slot_last_used_.push_back(step_);
      slot_columns_.push_back(0);
    }
    else
    {
      s = free_slots_.back();
      free_slots_.pop_back();
      slot_tile_[s] = t;
      slot_last_used_[s] = step_;
      slot_columns_[s] = 0;
    }
    tile_slot_.set(t, s);
    scheduled_tiles_ += this->op_->tile_ptr[t + 1] - this->op_->tile_ptr[t];
    ++stats_.tiles_compiled;
    return s;
  }

  // Frees the slots of tiles no step used for more than retire_after steps
  // (a tile that holds a column of the current set is in use now).
  void retire_unused()
  {
    for (std::size_t s = 0; s < slot_tile_.size(); ++s)
      if (slot_tile_[s] >= 0 && slot_columns_[s] == 0 &&
          step_ - slot_last_used_[s] > options_.retire_after)
      {
        auto const t = slot_tile_[s];
        scheduled_tiles_ -= this->op_->tile_ptr[t + 1] - this->op_->tile_ptr[t];
        tile_slot_.erase(t);
        slot_tile_[s] = -1;
        free_slots_.push_back(std::int32_t(s));
        ++stats_.tiles_retired;
      }
  }

  void update_schedule_stats()
  {
    stats_.column_tiles = std::int64_t(slot_tile_.size() - free_slots_.size());
    stats_.tiles = scheduled_tiles_;
  }

  static constexpr std::int32_t min_region = 8; // pieces in the smallest region

  SessionOptions options_;
  std::int64_t step_ = 0;
  detail::ColumnSetHistory<Ordinal> history_; // the set the piece lists hold
  detail::IndexMap tile_slot_;                // column tile -> slot, or -1
  std::vector<std::int32_t> slot_tile_;       // slot -> column tile, or -1
  std::vector<std::int64_t> slot_last_used_;  // slot -> last step that used it
  std::vector<std::int32_t> slot_columns_;    // slot -> columns of the set in it
  std::vector<std::int32_t> free_slots_;
  std::int64_t scheduled_tiles_ = 0;       // tiles of the scheduled column tiles
  detail::IndexMap segment_piece_;         // segment -> its piece, if present
  std::vector<std::size_t> piece_segment_; // piece -> its segment
  // Per row block touched so far (by local id: local_block()): its region of
  // the piece list (start, size class or -1), pieces held, work item or -1,
  // and whether this step changed it.
  detail::IndexMap block_local_; // row block -> local id
  std::vector<std::int32_t> block_start_;
  std::vector<std::int32_t> block_count_;
  std::vector<std::int32_t> block_class_;
  std::vector<std::int32_t> block_work_;
  std::vector<char> block_dirty_;
  std::vector<std::int32_t> block_incoming_;  // add_columns: entering pieces per block
  std::vector<std::int32_t> incoming_blocks_; // add_columns: blocks they reach
  std::vector<std::int32_t> dirty_blocks_;
  std::vector<std::int32_t> work_block_;                // work item -> row block
  std::vector<std::vector<std::int32_t>> free_regions_; // size class -> starts
  std::int32_t pool_used_ = 0;
  bool pool_reallocated_ = false;
  std::vector<char> claimed_; // scratch: previous positions still held
  std::vector<std::int32_t> entering_, moved_;
  struct Incoming // add_columns: a piece to add
  {
    std::size_t segment;
    std::int32_t block;
    std::int32_t position;
  };
  std::vector<Incoming> incoming_;
  detail::PlannedBuffer<detail::WorkRange, MemorySpace> work_;
  detail::PlannedBuffer<Piece, MemorySpace> pieces_;
  std::int32_t n_work_ = 0;
  std::int64_t n_pieces_ = 0;         // pieces the lists hold
  std::int32_t max_block_pieces_ = 0; // the most pieces one listed block holds
  std::int64_t piece_entries_ = 0;    // entries the piece lists hold: a step's work
  ScheduleStats stats_;
};

} // namespace hst
