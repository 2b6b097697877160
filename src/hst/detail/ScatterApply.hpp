#pragma once

#include <hst/detail/Parallel.hpp>
#include <hst/detail/RowRanges.hpp>
#include <hst/detail/Width.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hst::detail
{

// y += A[:, cols] * dx on one thread: walk each changed column in the CSC copy
// and add its entries, scaled by that column's row of dx, into y. Each row of
// y receives its terms in the order of `cols`.
template <int W, class ColPtr, class Rows, class Values, class Cols, class Dx, class Y>
struct ScatterFunctor
{
  ColPtr col_ptr;
  Rows row;
  Values val;
  Cols cols;
  Dx dx;
  Y y;
  int width;

  KOKKOS_FUNCTION void operator()(int i) const
  {
    auto const c = cols(i);
    DxRow<W, Dx> const x(dx, i, width);
    auto const end = col_ptr(c + 1);
    for (auto p = col_ptr(c); p < end; ++p)
      add_scaled<false>(y, row(p), val(p), x);
  }
};

// The changed columns' entries, as scatter_by_column and the row-wise walk
// take them: (i, begin, end) for column i, false if it has none.
// Every entry of each column:
template <class ColPtr, class Cols>
struct WholeColumns
{
  ColPtr col_ptr;
  Cols cols;
  KOKKOS_FUNCTION bool operator()(int i, std::size_t &begin, std::size_t &end) const
  {
    begin = col_ptr(cols(i));
    end = col_ptr(cols(i) + 1);
    return begin < end;
  }
};

// Each column's entries in rows [lo, hi), from its span (host memory).
template <class Rows>
struct SpansInRows
{
  using Ordinal = typename Rows::non_const_value_type;
  ColumnSpan<Ordinal> const *spans;
  Rows row;
  Ordinal lo, hi;
  KOKKOS_FUNCTION bool operator()(int i, std::size_t &begin, std::size_t &end) const
  {
    return clip_to_rows(row, spans[i], lo, hi, begin, end);
  }
};

// Where columns_collide(y): the entries of the k changed columns that
// `segment` gives (WholeColumns, SpansInRows), added by add_run_by_column over
// runs of columns of about run_entries entries (at most run_columns columns).
// Each y(r, b) receives its terms in the order of the columns, as in the
// row-wise walk.
template <int W, class Segment, class Rows, class Values, class Dx, class Y>
KOKKOS_FUNCTION void scatter_by_column(Segment const &segment, Rows const &row,
                                       Values const &val, Dx const &dx, Y const &y,
                                       int width, int k)
{
  constexpr int run_columns = 64;
  constexpr std::size_t run_entries = 1024;
  struct Run
  {
    std::size_t begin, end;
    int position;
  } run[run_columns];
  int n = 0;
  std::size_t entries = 0;
  auto const add_run = [&] {
    add_run_by_column<W>(
        [&](auto &&add) {
          for (int s = 0; s < n; ++s)
            add(run[s].position, run[s].begin, run[s].end);
        },
        row, val, dx, y, width);
    n = 0;
    entries = 0;
  };
  for (int i = 0; i < k; ++i)
  {
    std::size_t begin = 0, end = 0;
    if (!segment(i, begin, end))
      continue;
    run[n++] = Run{begin, end, i};
    entries += end - begin;
    if (n == run_columns || entries >= run_entries)
      add_run();
  }
  add_run();
}

// The same sum on host threads without atomics: work item t owns the rows
// ranges.begin(t) to ranges.end(t) of the rows the step touches and walks every
// changed column's span (gathered by column_spans), adding only the entries in
// its rows (clip_to_rows), row-wise or by column (scatter_by_column). Each row
// of y receives its terms in the order of `cols`, as on one thread: the sums
// are bitwise the same for any number of threads. Host spaces only: `spans`
// is host memory.
template <int W, class Rows, class Values, class Dx, class Y>
struct RowPartitionedScatterFunctor
{
  using Ordinal = typename Rows::non_const_value_type;
  ColumnSpan<Ordinal> const *spans;
  Rows row;
  Values val;
  Dx dx;
  Y y;
  int width;
  int k;
  RowRanges<Ordinal> ranges;
  bool by_column; // columns_collide(y)

  KOKKOS_FUNCTION void operator()(int t) const
  {
    SpansInRows<Rows> const segment{spans, row, ranges.begin(t), ranges.end(t)};
    if (by_column)
      return scatter_by_column<W>(segment, row, val, dx, y, width, k);
    for (int i = 0; i < k; ++i)
    {
      std::size_t begin = 0, end = 0;
      if (!segment(i, begin, end))
        continue;
      DxRow<W, Dx> const x(dx, i, width);
      for (auto p = begin; p < end; ++p)
        add_scaled<false>(y, row(p), val(p), x);
    }
  }
};

// On a device: a team per changed column, its threads over the column's
// entries (a hub column is spread over the team), vector lanes over B. Two
// columns may share a row: the adds are atomic (native for double on current
// GPUs), so the sums are not bitwise reproducible there.
template <class Policy, class ColPtr, class Rows, class Values, class Cols, class Dx,
          class Y>
struct TeamScatterFunctor
{
  ColPtr col_ptr;
  Rows row;
  Values val;
  Cols cols;
  Dx dx;
  Y y;
  int width;

  KOKKOS_FUNCTION void operator()(typename Policy::member_type const &team) const
  {
    int const i = team.league_rank();
    auto const c = cols(i);
    Kokkos::parallel_for(
        Kokkos::TeamThreadRange(team, col_ptr(c), col_ptr(c + 1)), [&](std::size_t p) {
          auto const r = row(p);
          auto const v = val(p);
          Kokkos::parallel_for(Kokkos::ThreadVectorRange(team, width), [&](int b) {
            Kokkos::atomic_add(&y(r, b), v * dx(i, b));
          });
        });
  }
};

// y += A[:, cols] * dx. `host_cols` are the ids readable on the host (read
// only when host threads split the step by rows, which gather the columns'
// spans into `spans`, grown to k); `min_parallel_work` is
// OperatorOptions::min_parallel_work.
template <class ExecutionSpace, class Data, class Cols, class Dx, class Y>
void scatter_apply(ExecutionSpace const &space, Data const &op, int width,
                   typename Data::ordinal_type const *host_cols,
                   std::vector<ColumnSpan<typename Data::ordinal_type>> &spans,
                   Cols const &cols, Dx const &dx, Y const &y)
{
  int const k = int(cols.extent(0));
  if (k == 0)
    return;
  // Kokkos takes labels as std::string: built once, not per launch.
  static std::string const kernel_label = "hst::ScatterArm::apply";
  if constexpr (is_synchronous_host_space<ExecutionSpace>)
  {
    // The step's work, estimated from the mean column length: O(1).
    std::int64_t const work = op.n_cols > 0
                                  ? std::int64_t(k) * std::int64_t(width) *
                                        std::int64_t(op.nnz / std::size_t(op.n_cols) + 1)
                                  : 0;
    if (run_inline(space, work, op.options.min_parallel_work))
    {
      dispatch_width(width, [&](auto w) {
        constexpr int W = decltype(w)::value;
        if (columns_collide(y)) // one work item: every column, every row
          run_on_calling_thread(space, kernel_label, 1, [&](int) {
            scatter_by_column<W>(
                WholeColumns<decltype(op.col_ptr), Cols>{op.col_ptr, cols}, op.csc_row,
                op.csc_val, dx, y, width, k);
          });
        else
        {
          ScatterFunctor<W, decltype(op.col_ptr), decltype(op.csc_row),
                         decltype(op.csc_val), Cols, Dx, Y> const functor{
              op.col_ptr, op.csc_row, op.csc_val, cols, dx, y, width};
          run_on_calling_thread(space, kernel_label, k, functor);
        }
      });
      return;
    }
    auto const ranges =
        split_rows_by_entries(space, op.csc_host.col_ptr.data(), op.csc_host.row.data(),
                              host_cols, std::size_t(k), op.n_rows, spans);
    if (ranges.empty())
      return;
    dispatch_width(width, [&](auto w) {
      using Functor =
          RowPartitionedScatterFunctor<decltype(w)::value, decltype(op.csc_row),
                                       decltype(op.csc_val), Dx, Y>;
      Kokkos::parallel_for(
          kernel_label,
          Kokkos::RangePolicy<ExecutionSpace, Kokkos::Schedule<Kokkos::Static>,
                              Kokkos::IndexType<int>>(space, 0, ranges.parts,
                                                      Kokkos::ChunkSize(1)),
          Functor{spans.data(), op.csc_row, op.csc_val, dx, y, width, k, ranges,
                  columns_collide(y)});
    });
  }
  else
  {
    (void)host_cols, (void)spans;
    using Policy = Kokkos::TeamPolicy<ExecutionSpace>;
    using Functor = TeamScatterFunctor<Policy, decltype(op.col_ptr), decltype(op.csc_row),
                                       decltype(op.csc_val), Cols, Dx, Y>;
    Kokkos::parallel_for(kernel_label,
                         Policy(space, k, Kokkos::AUTO, vector_lanes(width)),
                         Functor{op.col_ptr, op.csc_row, op.csc_val, cols, dx, y, width});
  }
}

} // namespace hst::detail
