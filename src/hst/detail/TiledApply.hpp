#pragma once

#include <hst/detail/Width.hpp>

#include <Kokkos_Core.hpp>

#include <string>

namespace hst::detail
{

// y += A[:, cols] * dx over the scheduled tiles. One work item per row block
// that a column of this step passes through: it walks that block's segments
// (one tile column each: the entries of one present column inside one tile,
// [segment_begin, segment_end) of the tile index) and adds each, scaled by its
// column's row of dx (`segment_position`), into y. The per-step segment list
// holds only columns present in the step's set and only nonempty segments, so
// an absent column of a scheduled tile costs nothing in the kernel: no test,
// no zero multiply. Work items own distinct rows (a tile's rows lie in its
// row block): no atomics, and the sum order is fixed.
template <int W, class WorkPtr, class SegmentBegin, class SegmentEnd,
          class SegmentPosition, class Rows, class Values, class Dx, class Y>
struct TiledFunctor
{
  WorkPtr work_ptr;
  SegmentBegin segment_begin;
  SegmentEnd segment_end;
  SegmentPosition segment_position;
  Rows row;
  Values val;
  Dx dx;
  Y y;
  int width;

  KOKKOS_FUNCTION void operator()(int w) const
  {
    auto const last = work_ptr(w + 1);
    for (auto s = work_ptr(w); s < last; ++s)
    {
      DxRow<W, Dx> const x(dx, segment_position(s), width);
      auto const end = segment_end(s);
      for (auto p = segment_begin(s); p < end; ++p)
        add_scaled<false>(y, row(p), val(p), x);
    }
  }
};

template <class ExecutionSpace, class Data, class WorkPtr, class SegmentBegin,
          class SegmentEnd, class SegmentPosition, class Dx, class Y>
void tiled_apply(ExecutionSpace const &space, Data const &op, int n_work,
                 WorkPtr const &work_ptr, SegmentBegin const &segment_begin,
                 SegmentEnd const &segment_end, SegmentPosition const &segment_position,
                 int width, Dx const &dx, Y const &y)
{
  if (n_work == 0)
    return;
  // Kokkos takes labels as std::string: built once, not per launch.
  static std::string const kernel_label = "hst::ScheduledArm::apply";
  prefetch_on_host<ExecutionSpace>(dx);
  dispatch_width(width, [&](auto w) {
    constexpr int W = decltype(w)::value;
    using Functor = TiledFunctor<W, WorkPtr, SegmentBegin, SegmentEnd, SegmentPosition,
                                 decltype(op.tile_row), decltype(op.tile_val), Dx, Y>;
    Kokkos::parallel_for(
        kernel_label,
        Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<int>>(space, 0, n_work),
        Functor{work_ptr, segment_begin, segment_end, segment_position, op.tile_row,
                op.tile_val, dx, y, width});
  });
}

} // namespace hst::detail
