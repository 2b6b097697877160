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
  std::int64_t row_blocks = 0;     ///< row blocks (work items) now
};

/// Scheduled arm: a schedule of column tiles, compiled for the tiles that the
/// expected columns fall in, reused while the changed set drifts.
///
/// Each step maps its columns to (slot of their column tile, column in tile).
/// A column in a tile the schedule lacks compiles that tile in (or throws,
/// with SessionOptions::strict); a scheduled tile that no step used for more
/// than SessionOptions::retire_after steps is retired at the next re-plan.
/// The kernel runs one work item per scheduled row block, walking its tiles
/// and skipping absent columns with one test each. Planning happens on the
/// host and only on steps whose column set changed; a step that repeats the
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
      , tile_slot_(std::size_t(this->op_->column_tiles()), -1)
      , block_stamp_(std::size_t(this->op_->n_row_blocks), -1)
      , block_index_(std::size_t(this->op_->n_row_blocks))
      , column_slot_("hst::ScheduledArm::column_slot")
      , work_ptr_("hst::ScheduledArm::work_ptr")
      , work_tile_("hst::ScheduledArm::work_tile")
      , work_slot_("hst::ScheduledArm::work_slot")
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
    finish_plan(space, true);
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
      space.fence(); // the host rewrites maps that earlier kernels may still read
      replan(space, host_cols, k);
      history_.remember(host_cols, k);
    }
    if (k > 0)
      detail::tiled_apply(space, *this->op_, n_work_, work_ptr_.device(),
                          work_tile_.device(), work_slot_.device(), column_slot_.device(),
                          this->width_, dx, y);
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
  std::size_t column_slot_index(Ordinal c) const
  {
    int const tile = this->op_->options.tile;
    return std::size_t(slot_of(c)) * tile + this->op_->tile_position[c] % tile;
  }

  template <class ExecutionSpace>
  void replan(ExecutionSpace const &space, Ordinal const *cols, std::size_t k)
  {
    ++stats_.replans;
    // The previous set was used up to the previous step; take it off the map.
    for (Ordinal c : history_.previous())
    {
      slot_last_used_[slot_of(c)] = step_ - 1;
      column_slot_.host()[column_slot_index(c)] = -1;
    }
    bool changed = false;
    for (std::size_t i = 0; i < k; ++i)
    {
      auto const t = this->op_->column_tile_of(cols[i]);
      if (tile_slot_[t] < 0)
      {
        add_tile(t);
        changed = true;
      }
      slot_last_used_[tile_slot_[t]] = step_;
    }
    if (!options_.strict) // a strict schedule is fixed
      changed |= retire_unused();
    for (std::size_t i = 0; i < k; ++i)
      column_slot_.host()[column_slot_index(cols[i])] = std::int32_t(i);
    finish_plan(space, changed);
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
    column_slot_.reserve(slot_tile_.size() * this->op_->options.tile, -1);
    ++stats_.tiles_compiled;
  }

  // Frees the slots of tiles no step used for more than retire_after steps.
  bool retire_unused()
  {
    bool retired = false;
    for (std::size_t s = 0; s < slot_tile_.size(); ++s)
      if (slot_tile_[s] >= 0 && step_ - slot_last_used_[s] > options_.retire_after)
      {
        tile_slot_[slot_tile_[s]] = -1;
        slot_tile_[s] = -1;
        free_slots_.push_back(std::int32_t(s));
        ++stats_.tiles_retired;
        retired = true;
      }
    return retired;
  }

  // Calls f(slot, tile) for every tile of every scheduled column tile.
  template <class F>
  void for_each_scheduled_tile(F &&f) const
  {
    auto const &op = *this->op_;
    for (std::size_t s = 0; s < slot_tile_.size(); ++s)
      if (slot_tile_[s] >= 0)
        for (auto q = op.tile_ptr[slot_tile_[s]]; q < op.tile_ptr[slot_tile_[s] + 1]; ++q)
          f(std::int32_t(s), q);
  }

  // Uploads the column map and, when the set of scheduled tiles changed, the
  // work list: scheduled tiles grouped by row block (blocks in first-seen
  // order, tiles in slot order), built in O(scheduled tiles).
  template <class ExecutionSpace>
  void finish_plan(ExecutionSpace const &space, bool schedule_changed)
  {
    column_slot_.upload(space, slot_tile_.size() * this->op_->options.tile);
    if (!schedule_changed)
      return;
    auto const &op = *this->op_;
    if (++block_epoch_ == std::numeric_limits<std::int32_t>::max())
    {
      std::fill(block_stamp_.begin(), block_stamp_.end(), -1);
      block_epoch_ = 0;
    }
    block_count_.clear();
    std::size_t n_tiles = 0;
    for_each_scheduled_tile([&](std::int32_t, std::int32_t q) {
      auto const block = op.tile_row_block[q];
      if (block_stamp_[block] != block_epoch_)
      {
        block_stamp_[block] = block_epoch_;
        block_index_[block] = std::int32_t(block_count_.size());
        block_count_.push_back(0);
      }
      ++block_count_[block_index_[block]];
      ++n_tiles;
    });
    std::size_t const n_work = block_count_.size();
    work_ptr_.reserve(n_work + 1);
    work_tile_.reserve(n_tiles);
    work_slot_.reserve(n_tiles);
    std::int32_t *const ptr = work_ptr_.host();
    ptr[0] = 0;
    for (std::size_t w = 0; w < n_work; ++w)
      ptr[w + 1] = ptr[w] + block_count_[w];
    cursor_.assign(ptr, ptr + n_work);
    for_each_scheduled_tile([&](std::int32_t slot, std::int32_t q) {
      auto const e = cursor_[block_index_[op.tile_row_block[q]]]++;
      work_tile_.host()[e] = q;
      work_slot_.host()[e] = slot;
    });
    n_work_ = std::int32_t(n_work);
    work_ptr_.upload(space, n_work + 1);
    work_tile_.upload(space, n_tiles);
    work_slot_.upload(space, n_tiles);
    stats_.column_tiles = std::int64_t(slot_tile_.size() - free_slots_.size());
    stats_.tiles = std::int64_t(n_tiles);
    stats_.row_blocks = std::int64_t(n_work);
  }

  SessionOptions options_;
  std::int64_t step_ = 0;
  detail::ColumnSetHistory<Ordinal> history_;
  std::vector<std::int32_t> tile_slot_;      // column tile -> slot, or -1
  std::vector<std::int32_t> slot_tile_;      // slot -> column tile, or -1
  std::vector<std::int64_t> slot_last_used_; // slot -> last step that used it
  std::vector<std::int32_t> free_slots_;
  std::vector<std::int32_t> block_stamp_;
  std::vector<std::int32_t> block_index_;
  std::int32_t block_epoch_ = 0;
  std::vector<std::int32_t> block_count_;
  std::vector<std::int32_t> cursor_;
  detail::PlannedBuffer<std::int32_t, MemorySpace> column_slot_;
  detail::PlannedBuffer<std::int32_t, MemorySpace> work_ptr_;
  detail::PlannedBuffer<std::int32_t, MemorySpace> work_tile_;
  detail::PlannedBuffer<std::int32_t, MemorySpace> work_slot_;
  std::int32_t n_work_ = 0;
  ScheduleStats stats_;
};

} // namespace hst
