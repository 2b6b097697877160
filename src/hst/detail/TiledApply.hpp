#pragma once

#include <hst/detail/Width.hpp>

#include <Kokkos_Core.hpp>

#include <string>

namespace hst::detail
{

// y += A[:, cols] * dx over a schedule of tiles. One work item per scheduled
// row block: it walks the block's scheduled tiles and, in each, only the
// columns present this step (`column_slot` maps slot * tile + j to the column's
// position in cols, or -1), so an absent column costs one test, not its
// entries. Work items own distinct rows: no atomics, fixed sum order.
template <int W, class WorkPtr, class WorkTiles, class WorkSlots, class ColumnSlots,
          class SegmentPtr, class Rows, class Values, class Dx, class Y>
struct TiledFunctor
{
  WorkPtr work_ptr;
  WorkTiles work_tile;
  WorkSlots work_slot;
  ColumnSlots column_slot;
  SegmentPtr segment_ptr;
  Rows row;
  Values val;
  Dx dx;
  Y y;
  int tile;
  int width;

  KOKKOS_FUNCTION void operator()(int w) const
  {
    for (auto q = work_ptr(w); q < work_ptr(w + 1); ++q)
    {
      auto const segments = std::size_t(work_tile(q)) * tile;
      auto const slots = work_slot(q) * tile;
      for (int j = 0; j < tile; ++j)
      {
        auto const i = column_slot(slots + j);
        if (i < 0)
          continue;
        DxRow<W, Dx> const x(dx, i, width);
        auto const end = segment_ptr(segments + j + 1);
        for (auto p = segment_ptr(segments + j); p < end; ++p)
          add_scaled<false>(y, row(p), val(p), x);
      }
    }
  }
};

template <class ExecutionSpace, class Data, class WorkPtr, class WorkTiles,
          class WorkSlots, class ColumnSlots, class Dx, class Y>
void tiled_apply(ExecutionSpace const &space, Data const &op, int n_work,
                 WorkPtr const &work_ptr, WorkTiles const &work_tile,
                 WorkSlots const &work_slot, ColumnSlots const &column_slot, int width,
                 Dx const &dx, Y const &y)
{
  if (n_work == 0)
    return;
  // Kokkos takes labels as std::string: built once, not per launch.
  static std::string const kernel_label = "hst::ScheduledArm::apply";
  dispatch_width(width, [&](auto w) {
    constexpr int W = decltype(w)::value;
    using Functor = TiledFunctor<W, WorkPtr, WorkTiles, WorkSlots, ColumnSlots,
                                 decltype(op.segment_ptr), decltype(op.tile_row),
                                 decltype(op.tile_val), Dx, Y>;
    Kokkos::parallel_for(
        kernel_label,
        Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<int>>(space, 0, n_work),
        Functor{work_ptr, work_tile, work_slot, column_slot, op.segment_ptr, op.tile_row,
                op.tile_val, dx, y, op.options.tile, width});
  });
}

} // namespace hst::detail
