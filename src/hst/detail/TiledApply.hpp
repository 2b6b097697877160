#pragma once

#include <hst/detail/Parallel.hpp>
#include <hst/detail/Width.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

namespace hst::detail
{

// One piece of a scheduled step: the entries of one present column inside one
// tile, [begin, begin + length) of the tile index, scaled by row `position` of
// dx.
struct TilePiece
{
  std::size_t begin;
  std::int32_t length;
  std::int32_t position;
};

// The pieces of one row block: [begin, end) of the piece list.
struct WorkRange
{
  std::int32_t begin;
  std::int32_t end;
};

// y += A[:, cols] * dx over the scheduled tiles. One work item per row block
// that a column of this step passes through: it walks that block's pieces
// (one tile column each) and adds each, scaled by its column's row of dx, into
// y. The piece list holds only columns present in the step's set and only
// nonempty pieces, so an absent column of a scheduled tile costs nothing in
// the kernel: no test, no zero multiply. Work items own distinct rows (a
// tile's rows lie in its row block): no atomics, and the sum order is fixed by
// the list, on any number of threads. Where `by_column` (columns_collide(y)),
// a block's pieces are added in runs of about run_entries entries (read from
// cache in the later columns' walks), one column of y at a time.
template <int W, class Work, class Pieces, class Rows, class Values, class Dx, class Y>
struct TiledFunctor
{
  Work work;
  Pieces pieces;
  Rows row;
  Values val;
  Dx dx;
  Y y;
  int width;
  bool by_column;

  static constexpr std::int64_t run_entries = 1024;

  KOKKOS_FUNCTION void operator()(int w) const
  {
    WorkRange const range = work(w);
    if (!by_column)
      for (auto s = range.begin; s < range.end; ++s)
      {
        TilePiece const piece = pieces(s);
        DxRow<W, Dx> const x(dx, piece.position, width);
        auto const end = piece.begin + std::size_t(piece.length);
        for (auto p = piece.begin; p < end; ++p)
          add_scaled<false>(y, row(p), val(p), x);
      }
    else
      for (auto first = range.begin; first < range.end;)
      {
        auto last = first;
        for (std::int64_t n = 0; last < range.end && n < run_entries; ++last)
          n += pieces(last).length;
        add_run_by_column<W>(
            [&](auto &&add) {
              for (auto s = first; s < last; ++s)
              {
                TilePiece const piece = pieces(s);
                add(piece.position, piece.begin, piece.begin + std::size_t(piece.length));
              }
            },
            row, val, dx, y, width);
        first = last;
      }
  }
};

// On a device: a team per `pieces_per_team` pieces of a listed row block (a
// block holding more gets several teams), its threads over those pieces,
// vector lanes over B. Pieces of one block may share rows, so the adds are
// atomic there (native for double on current GPUs): not bitwise
// reproducible, unlike the host kernel.
template <class Policy, class Work, class Pieces, class Rows, class Values, class Dx,
          class Y>
struct TeamTiledFunctor
{
  Work work;
  Pieces pieces;
  Rows row;
  Values val;
  Dx dx;
  Y y;
  int width;
  int teams_per_block;
  static constexpr std::int32_t pieces_per_team = 32;

  KOKKOS_FUNCTION void operator()(typename Policy::member_type const &team) const
  {
    WorkRange const range = work(team.league_rank() / teams_per_block);
    std::int32_t const begin =
        range.begin + (team.league_rank() % teams_per_block) * pieces_per_team;
    std::int32_t const end =
        begin + pieces_per_team < range.end ? begin + pieces_per_team : range.end;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, begin, end), [&](std::int32_t s) {
      TilePiece const piece = pieces(s);
      auto const end = piece.begin + std::size_t(piece.length);
      for (auto p = piece.begin; p < end; ++p)
      {
        auto const r = row(p);
        auto const v = val(p);
        Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, width), [&](int b) {
          Kokkos::atomic_add(&y(r, b), v * dx(piece.position, b));
        });
      }
    });
  }
};

// y += A[:, cols] * dx over the scheduled tiles; `entries` is the number of
// entries the pieces hold (the step's work is entries x B), `max_block_pieces`
// the most pieces one listed block holds.
template <class ExecutionSpace, class Data, class Work, class Pieces, class Dx, class Y>
void tiled_apply(ExecutionSpace const &space, Data const &op, int n_work,
                 std::int64_t entries, std::int32_t max_block_pieces, Work const &work,
                 Pieces const &pieces, int width, Dx const &dx, Y const &y)
{
  if (n_work == 0)
    return;
  // Kokkos takes labels as std::string: built once, not per launch.
  static std::string const kernel_label = "hst::ScheduledArm::apply";
  if constexpr (is_synchronous_host_space<ExecutionSpace>)
  {
    bool const inline_step =
        run_inline(space, entries * width, op.options.min_parallel_work);
    if (inline_step)
      prefetch_on_host<ExecutionSpace>(dx);
    dispatch_width(width, [&](auto w) {
      constexpr int W = decltype(w)::value;
      using Functor = TiledFunctor<W, Work, Pieces, decltype(op.tile_row),
                                   decltype(op.tile_val), Dx, Y>;
      Functor const functor{work, pieces, op.tile_row, op.tile_val,
                            dx,   y,      width,       columns_collide(y)};
      if (inline_step)
        run_on_calling_thread(space, kernel_label, n_work, functor);
      else // row blocks hold unequal numbers of pieces
        Kokkos::parallel_for(
            kernel_label,
            Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<int>,
                                Kokkos::Schedule<Kokkos::Dynamic>>(space, 0, n_work),
            functor);
    });
  }
  else
  {
    (void)entries;
    using Policy = Kokkos::TeamPolicy<ExecutionSpace>;
    using Functor = TeamTiledFunctor<Policy, Work, Pieces, decltype(op.tile_row),
                                     decltype(op.tile_val), Dx, Y>;
    int const teams_per_block = std::max(
        1, (max_block_pieces + Functor::pieces_per_team - 1) / Functor::pieces_per_team);
    Kokkos::parallel_for(
        kernel_label,
        Policy(space, n_work * teams_per_block, Kokkos::AUTO, vector_lanes(width)),
        Functor{work, pieces, op.tile_row, op.tile_val, dx, y, width, teams_per_block});
  }
}

} // namespace hst::detail
