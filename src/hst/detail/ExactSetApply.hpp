#pragma once

#include <hst/detail/Parallel.hpp>
#include <hst/detail/Width.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

namespace hst::detail
{

// y += A[:, cols] * dx from a row list compiled for the exact set: one work
// item per touched row, summing that row's (position in cols, value) entries.
// Work items own distinct rows: no atomics, and the sum order is fixed.
template <int W, class Rows, class RowPtr, class Positions, class Values, class Dx,
          class Y>
struct ExactSetFunctor
{
  Rows rows;
  RowPtr row_ptr;
  Positions position;
  Values val;
  Dx dx;
  Y y;
  int width;

  KOKKOS_FUNCTION void operator()(int s) const
  {
    auto const r = rows(s);
    auto const begin = row_ptr(s);
    auto const end = row_ptr(s + 1);
    if constexpr (W > 0)
    {
      typename Y::non_const_value_type sum[W] = {};
      for (auto e = begin; e < end; ++e)
      {
        auto const v = val(e);
        auto const i = position(e);
        for (int b = 0; b < W; ++b)
          sum[b] += v * dx(i, b);
      }
      if constexpr (std::is_same_v<typename Y::array_layout, Kokkos::LayoutRight>)
      {
        // A contiguous row of y: all loads, then all stores (vectorises).
        auto *const row = &y(r, 0);
        for (int b = 0; b < W; ++b)
          sum[b] += row[b];
        for (int b = 0; b < W; ++b)
          row[b] = sum[b];
      }
      else
        for (int b = 0; b < W; ++b)
          y(r, b) += sum[b];
    }
    else
    {
      for (auto e = begin; e < end; ++e)
      {
        auto const v = val(e);
        auto const i = position(e);
        for (int b = 0; b < width; ++b)
          y(r, b) += v * dx(i, b);
      }
    }
  }
};

// On a device: a team per `rows_per_team` touched rows, a thread per row,
// vector lanes over B, each lane summing its row's entries in list order:
// no atomics, the same sums as on the host.
template <class Policy, class Rows, class RowPtr, class Positions, class Values, class Dx,
          class Y>
struct TeamExactSetFunctor
{
  static constexpr int rows_per_team = 32;
  Rows rows;
  RowPtr row_ptr;
  Positions position;
  Values val;
  Dx dx;
  Y y;
  int width;
  int n_touched;

  KOKKOS_FUNCTION void operator()(typename Policy::member_type const &team) const
  {
    int const begin = team.league_rank() * rows_per_team;
    int const end = begin + rows_per_team < n_touched ? begin + rows_per_team : n_touched;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, begin, end), [&](int s) {
      auto const r = rows(s);
      auto const first = row_ptr(s);
      auto const last = row_ptr(s + 1);
      Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, width), [&](int b) {
        typename Y::non_const_value_type sum = 0;
        for (auto e = first; e < last; ++e)
          sum += val(e) * dx(position(e), b);
        y(r, b) += sum;
      });
    });
  }
};

// y += A[:, cols] * dx from the compiled list; `entries` is its length (the
// step's work is entries x B).
template <class ExecutionSpace, class Rows, class RowPtr, class Positions, class Values,
          class Dx, class Y>
void exact_set_apply(ExecutionSpace const &space, int n_touched, std::int64_t entries,
                     std::int64_t min_parallel_work, Rows const &rows,
                     RowPtr const &row_ptr, Positions const &position, Values const &val,
                     int width, Dx const &dx, Y const &y)
{
  if (n_touched == 0)
    return;
  // Kokkos takes labels as std::string: built once, not per launch.
  static std::string const kernel_label = "hst::ExactSetArm::apply";
  if constexpr (is_synchronous_host_space<ExecutionSpace>)
  {
    bool const inline_step = run_inline(space, entries * width, min_parallel_work);
    if (inline_step)
      prefetch_on_host<ExecutionSpace>(dx);
    dispatch_width(width, [&](auto w) {
      constexpr int W = decltype(w)::value;
      using Functor = ExactSetFunctor<W, Rows, RowPtr, Positions, Values, Dx, Y>;
      Functor const functor{rows, row_ptr, position, val, dx, y, width};
      if (inline_step)
        run_on_calling_thread(space, kernel_label, n_touched, functor);
      else
        Kokkos::parallel_for(kernel_label,
                             Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<int>>(
                                 space, 0, n_touched),
                             functor);
    });
  }
  else
  {
    (void)entries, (void)min_parallel_work;
    using Policy = Kokkos::TeamPolicy<ExecutionSpace>;
    using Functor = TeamExactSetFunctor<Policy, Rows, RowPtr, Positions, Values, Dx, Y>;
    int const league = (n_touched + Functor::rows_per_team - 1) / Functor::rows_per_team;
    Kokkos::parallel_for(
        kernel_label, Policy(space, league, Functor::rows_per_team, vector_lanes(width)),
        Functor{rows, row_ptr, position, val, dx, y, width, n_touched});
  }
}

} // namespace hst::detail
