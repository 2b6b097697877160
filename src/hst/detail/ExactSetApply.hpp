#pragma once

#include <hst/detail/Width.hpp>

#include <Kokkos_Core.hpp>

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

template <class ExecutionSpace, class Rows, class RowPtr, class Positions, class Values,
          class Dx, class Y>
void exact_set_apply(ExecutionSpace const &space, int n_touched, Rows const &rows,
                     RowPtr const &row_ptr, Positions const &position, Values const &val,
                     int width, Dx const &dx, Y const &y)
{
  if (n_touched == 0)
    return;
  // Kokkos takes labels as std::string: built once, not per launch.
  static std::string const kernel_label = "hst::ExactSetArm::apply";
  prefetch_on_host<ExecutionSpace>(dx);
  dispatch_width(width, [&](auto w) {
    constexpr int W = decltype(w)::value;
    using Functor = ExactSetFunctor<W, Rows, RowPtr, Positions, Values, Dx, Y>;
    Kokkos::parallel_for(
        kernel_label,
        Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<int>>(space, 0, n_touched),
        Functor{rows, row_ptr, position, val, dx, y, width});
  });
}

} // namespace hst::detail
