#pragma once

#include <hst/Options.hpp>
#include <hst/detail/ArmBase.hpp>
#include <hst/detail/TiledApply.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
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
};

/// Scheduled arm: a schedule of column tiles, compiled for the tiles that the
/// expected columns fall in, reused while the changed set drifts.
///
/// Each step's columns must lie in scheduled column tiles. A column in a tile
/// the schedule lacks compiles that tile in (or throws, with
/// SessionOptions::strict); a scheduled tile that no step used for more than
/// SessionOptions::retire_after steps is retired at the next re-plan. On a
/// step whose set changed, the arm lists, per row block, the segments (one
/// column inside one tile) of the present columns only, reading the tile index
/// and nothing else: O(k x tiles per column tile), no pass over entries or
/// rows. The kernel runs one work item per listed row block and walks exactly
/// those segments, so absent columns of a scheduled tile cost nothing. A step
/// that repeats the previous set does no planning at all.
template <class Scalar, class Ordinal, class MemorySpace>
class ScheduledArm : public detail::ArmBase<ScheduledArm<Scalar, Ordinal, MemorySpace>,
                                            Scalar, Ordinal, MemorySpace>
{
  using Base = detail::ArmBase<ScheduledArm, Scalar, Ordinal, MemorySpace>;
  friend Base;

public:
  static constexpr char const *name = "hst::ScheduledArm::apply_cols";

  template <class ExecutionSpace>
  ScheduledArm(ExecutionSpace const &, std::shared_ptr<typename Base::data_type const> op,
               std::vector<Ordinal> const &expected_cols, int width,
               SessionOptions const &options)
      : Base(std::move(op), width, "hst::Operator::session")
      , options_(options)
      , tile_slot_(std::size_t(this->op_->column_tiles()), -1)
      , block_stamp_(std::size_t(this->op_->n_row_blocks), -1)
      , block_index_(std::size_t(this->op_->n_row_blocks))
      , work_ptr_("hst::ScheduledArm::work_ptr")
      , segment_begin_("hst::ScheduledArm::segment_begin")
      , segment_end_("hst::ScheduledArm::segment_end")
      , segment_position_("hst::ScheduledArm::segment_position")
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
    for (Ordinal c : expected_cols)
    {
      auto const t = this->op_->column_tile_of(c);
      if (tile_slot_[t] < 0)
        add_tile(t);
    }
    update_schedule_stats();
  }

  ScheduleStats const &stats() const { return stats_; }
  SessionOptions const &options() const { return options_; }

private:
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
      space.fence(); // the host rewrites lists that earlier kernels may still read
      replan(space, host_cols, k);
      history_.remember(host_cols, k);
    }
    if (k > 0)
      detail::tiled_apply(space, *this->op_, n_work_, work_ptr_.device(),
                          segment_begin_.device(), segment_end_.device(),
                          segment_position_.device(), this->width_, dx, y);
  }

  void check_covered(Ordinal const *cols, std::size_t k) const
  {
    for (std::size_t i = 0; i < k; ++i)
    {
      auto const t = this->op_->column_tile_of(cols[i]);
      if (tile_slot_[t] < 0)
        detail::throw_invalid(name, ": argument 'cols' holds column id ", cols[i],
                              " at position ", i, ", in column tile ", t,
                              " which the strict schedule does not hold");
    }
  }

  std::int32_t slot_of(Ordinal c) const
  {
    return tile_slot_[this->op_->column_tile_of(c)];
  }

  template <class ExecutionSpace>
  void replan(ExecutionSpace const &space, Ordinal const *cols, std::size_t k)
  {
    ++stats_.replans;
    // A set that stayed unchanged since the last re-plan was used up to the
    // previous step (on a step-by-step drift this pass is skipped).
    if (last_replan_ < step_ - 1)
      for (Ordinal c : history_.previous())
        slot_last_used_[slot_of(c)] = step_ - 1;
    last_replan_ = step_;
    list_segments(space, cols, k); // compiles missing tiles in as it goes
    if (!options_.strict)          // a strict schedule is fixed
      retire_unused();             // spares the tiles this step uses
    update_schedule_stats();
  }

  void add_tile(std::int32_t t)
  {
    std::int32_t s;
    if (free_slots_.empty())
    {
      s = std::int32_t(slot_tile_.size());
      slot_tile_.push_back(t);
      slot_last_used_.push_back(step_);
    }
    else
    {
      s = free_slots_.back();
      free_slots_.pop_back();
      slot_tile_[s] = t;
      slot_last_used_[s] = step_;
    }
    tile_slot_[t] = s;
    scheduled_tiles_ += this->op_->tile_ptr[t + 1] - this->op_->tile_ptr[t];
    ++stats_.tiles_compiled;
  }

  // Frees the slots of tiles no step used for more than retire_after steps.
  void retire_unused()
  {
    for (std::size_t s = 0; s < slot_tile_.size(); ++s)
      if (slot_tile_[s] >= 0 && step_ - slot_last_used_[s] > options_.retire_after)
      {
        auto const t = slot_tile_[s];
        scheduled_tiles_ -= this->op_->tile_ptr[t + 1] - this->op_->tile_ptr[t];
        tile_slot_[t] = -1;
        slot_tile_[s] = -1;
        free_slots_.push_back(std::int32_t(s));
        ++stats_.tiles_retired;
      }
  }

  // The step's segment list: for every column i of the set and every tile of
  // its column tile where the column has entries, the segment's entry range
  // and i, grouped by row block (blocks in first-seen order, segments in
  // column order within a block). O(k x tiles per column tile). Marks the
  // slots the step uses, compiling missing column tiles in.
  template <class ExecutionSpace>
  void list_segments(ExecutionSpace const &space, Ordinal const *cols, std::size_t k)
  {
    auto const &op = *this->op_;
    int const tile = op.options.tile;
    std::size_t const *const segment_ptr = op.segment_ptr.data();
    std::int32_t const *const tile_ptr = op.tile_ptr.data();
    std::int32_t const *const tile_row_block = op.tile_row_block.data();
    if (++block_epoch_ == std::numeric_limits<std::int32_t>::max())
    {
      std::fill(block_stamp_.begin(), block_stamp_.end(), -1);
      block_epoch_ = 0;
    }
    block_count_.clear();
    pending_.clear();
    for (std::size_t i = 0; i < k; ++i)
    {
      auto const t = op.column_tile[cols[i]];
      auto const j = op.column_in_tile[cols[i]];
      if (tile_slot_[t] < 0)
        add_tile(t);
      slot_last_used_[tile_slot_[t]] = step_;
      for (auto q = tile_ptr[t]; q < tile_ptr[t + 1]; ++q)
      {
        std::size_t const segment = std::size_t(q) * tile + j;
        auto const begin = segment_ptr[segment];
        auto const end = segment_ptr[segment + 1];
        if (begin == end)
          continue;
        auto const block = tile_row_block[q];
        if (block_stamp_[block] != block_epoch_)
        {
          block_stamp_[block] = block_epoch_;
          block_index_[block] = std::int32_t(block_count_.size());
          block_count_.push_back(0);
        }
        auto const w = block_index_[block];
        ++block_count_[w];
        pending_.push_back({w, std::int32_t(i), begin, end});
      }
    }
    std::size_t const n_work = block_count_.size();
    std::size_t const n_segments = pending_.size();
    work_ptr_.reserve(n_work + 1);
    segment_begin_.reserve(n_segments);
    segment_end_.reserve(n_segments);
    segment_position_.reserve(n_segments);
    std::int32_t *const ptr = work_ptr_.host();
    ptr[0] = 0;
    for (std::size_t w = 0; w < n_work; ++w)
      ptr[w + 1] = ptr[w] + block_count_[w];
    cursor_.assign(ptr, ptr + n_work);
    std::size_t *const seg_begin = segment_begin_.host();
    std::size_t *const seg_end = segment_end_.host();
    std::int32_t *const seg_position = segment_position_.host();
    for (auto const &p : pending_)
    {
      auto const e = cursor_[p.work]++;
      seg_begin[e] = p.begin;
      seg_end[e] = p.end;
      seg_position[e] = p.position;
    }
    n_work_ = std::int32_t(n_work);
    work_ptr_.upload(space, n_work + 1);
    segment_begin_.upload(space, n_segments);
    segment_end_.upload(space, n_segments);
    segment_position_.upload(space, n_segments);
    stats_.row_blocks = std::int64_t(n_work);
  }

  void update_schedule_stats()
  {
    stats_.column_tiles = std::int64_t(slot_tile_.size() - free_slots_.size());
    stats_.tiles = scheduled_tiles_;
  }

  struct PendingSegment
  {
    std::int32_t work;
    std::int32_t position;
    std::size_t begin;
    std::size_t end;
  };

  SessionOptions options_;
  std::int64_t step_ = 0;
  std::int64_t last_replan_ = 0; // step of the last re-plan
  detail::ColumnSetHistory<Ordinal> history_;
  std::vector<std::int32_t> tile_slot_;      // column tile -> slot, or -1
  std::vector<std::int32_t> slot_tile_;      // slot -> column tile, or -1
  std::vector<std::int64_t> slot_last_used_; // slot -> last step that used it
  std::vector<std::int32_t> free_slots_;
  std::int64_t scheduled_tiles_ = 0; // tiles of the scheduled column tiles
  std::vector<std::int32_t> block_stamp_;
  std::vector<std::int32_t> block_index_;
  std::int32_t block_epoch_ = 0;
  std::vector<std::int32_t> block_count_;
  std::vector<std::int32_t> cursor_;
  std::vector<PendingSegment> pending_;
  detail::PlannedBuffer<std::int32_t, MemorySpace> work_ptr_;
  detail::PlannedBuffer<std::size_t, MemorySpace> segment_begin_;
  detail::PlannedBuffer<std::size_t, MemorySpace> segment_end_;
  detail::PlannedBuffer<std::int32_t, MemorySpace> segment_position_;
  std::int32_t n_work_ = 0;
  ScheduleStats stats_;
};

} // namespace hst
