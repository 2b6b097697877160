#pragma once
// Splitting a step's work among host threads by rows of y, so that no two
// threads write one row: the rows a column set touches, cut into contiguous
// ranges, and each column's entries clipped to a range. Used by the scatter
// arm's kernel and the exact-set arm's compile. Relies on the CSC copy's rows
// being sorted within each column.

#include <hst/detail/Parallel.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hst::detail
{

// Part t's rows of y, [begin(t), end(t)), for t < parts: contiguous ranges
// that cover the rows a step touches, in order. Host threads only (the scatter
// arm's row-partitioned kernel, the exact-set compile); at most max_parts.
template <class Ordinal>
struct RowRanges
{
  static constexpr int max_parts = 256;
  int parts = 1;
  Ordinal cut[max_parts + 1] = {};

  KOKKOS_FUNCTION Ordinal begin(int t) const { return cut[t]; }
  KOKKOS_FUNCTION Ordinal end(int t) const { return cut[t + 1]; }
  // No rows at all: the columns touch none.
  KOKKOS_FUNCTION bool empty() const { return cut[0] == cut[parts]; }
};

// The first index in [begin, end) whose row is >= r (rows sorted).
template <class Rows, class Ordinal>
KOKKOS_FUNCTION std::size_t first_row_at_or_after(Rows const &row, std::size_t begin,
                                                  std::size_t end, Ordinal r)
{
  while (begin < end)
  {
    auto const mid = begin + (end - begin) / 2;
    if (row(mid) < r)
      begin = mid + 1;
    else
      end = mid;
  }
  return begin;
}

// A changed column's entries [begin, end) in the CSC copy and the rows of its
// first and last entry (first > last if it has none): gathered once per step
// (column_spans) so that the passes that split the step and walk it read a
// compact array instead of the CSC copy at k scattered places each.
template <class Ordinal>
struct ColumnSpan
{
  std::size_t begin = 0;
  std::size_t end = 0;
  Ordinal first = 0;
  Ordinal last = -1;
};

// Narrows a column's entries to those with rows in [lo, hi), into [begin,
// end): two compares for a column on either side of the range, a binary
// search for one that crosses its edge. False if none is left.
template <class Rows, class Ordinal>
KOKKOS_FUNCTION bool clip_to_rows(Rows const &row, ColumnSpan<Ordinal> const &span,
                                  Ordinal lo, Ordinal hi, std::size_t &begin,
                                  std::size_t &end)
{
  if (span.begin == span.end || span.last < lo || span.first >= hi)
    return false;
  begin =
      span.first < lo ? first_row_at_or_after(row, span.begin, span.end, lo) : span.begin;
  end = span.last >= hi ? first_row_at_or_after(row, begin, span.end, hi) : span.end;
  return begin < end;
}

// The rows that columns touch, [first, last] (first > last if none), and the
// columns' entry count.
template <class Ordinal>
struct TouchedRows
{
  Ordinal first = 0;
  Ordinal last = -1;
  std::size_t entries = 0;
};

// Fills spans[0, k) with the spans of the columns cols[0, k) and returns the
// rows they touch: O(k), on `host`'s threads in contiguous chunks of cols of
// at least min_chunk columns (so on the calling thread alone below 2 *
// min_chunk columns or on one thread).
template <class HostSpace, class Ordinal>
TouchedRows<Ordinal> column_spans(HostSpace const &host, std::size_t const *col_ptr,
                                  Ordinal const *row, Ordinal const *cols, std::size_t k,
                                  Ordinal n_rows, ColumnSpan<Ordinal> *spans)
{
  constexpr int max_chunks = RowRanges<Ordinal>::max_parts;
  constexpr std::size_t min_chunk = 512;
  int const chunks = int(std::clamp<std::size_t>(
      std::min(k / min_chunk, std::size_t(kokkos_ext::concurrency(host))), 1,
      max_chunks));
  TouchedRows<Ordinal> partial[max_chunks];
  static std::string const label = "hst::column_spans";
  for_each_part(host, label, chunks, [&](int t) {
    TouchedRows<Ordinal> touched{n_rows, -1, 0};
    std::size_t const stop = k * std::size_t(t + 1) / std::size_t(chunks);
    for (std::size_t i = k * std::size_t(t) / std::size_t(chunks); i < stop; ++i)
    {
      ColumnSpan<Ordinal> span{col_ptr[cols[i]], col_ptr[cols[i] + 1], 0, -1};
      if (span.begin < span.end)
      {
        span.first = row[span.begin];
        span.last = row[span.end - 1];
        touched.entries += span.end - span.begin;
        touched.first = std::min(touched.first, span.first);
        touched.last = std::max(touched.last, span.last);
      }
      spans[i] = span;
    }
    partial[t] = touched;
  });
  TouchedRows<Ordinal> touched{n_rows, -1, 0};
  for (int t = 0; t < chunks; ++t)
  {
    touched.entries += partial[t].entries;
    touched.first = std::min(touched.first, partial[t].first);
    touched.last = std::max(touched.last, partial[t].last);
  }
  return touched;
}

// The touched rows cut into min(parts, RowRanges::max_parts) ranges holding
// about equal shares of the columns' entries, so that each thread gets about
// as much work (cutting by row index alone left one of two threads 76% of the
// entries on a drifting set). The shares come from a histogram of the entries
// over equal bins of rows (about one per column, at least 16 per part, at most
// 2048), each column's entries spread evenly over the bins from its first row
// to its last; ranges end on bin edges, so a share is off by at most about a
// bin's entries. O(k) over the spans, no allocation; a range may be empty.
template <class Ordinal>
RowRanges<Ordinal> split_by_entries(TouchedRows<Ordinal> const &touched,
                                    ColumnSpan<Ordinal> const *spans, std::size_t k,
                                    int parts)
{
  RowRanges<Ordinal> ranges;
  ranges.parts = std::clamp(parts, 1, RowRanges<Ordinal>::max_parts);
  if (touched.last < touched.first)
    return ranges; // nothing touched: every range empty
  std::int64_t const first = touched.first;
  std::int64_t const span = std::int64_t(touched.last) - first + 1;
  ranges.cut[0] = touched.first;
  for (int t = 1; t <= ranges.parts; ++t)
    ranges.cut[t] = Ordinal(first + span);
  if (ranges.parts == 1)
    return ranges;

  constexpr std::int64_t max_bins = 2048;
  std::int64_t const wanted =
      std::min(max_bins, std::max<std::int64_t>(16 * ranges.parts, std::int64_t(k)));
  std::int64_t const width = (span + wanted - 1) / wanted; // rows per bin
  std::int64_t const bins = (span + width - 1) / width;
  // density changes: a column adds its entries / its bins to each of its bins
  double step[max_bins + 1];
  std::fill(step, step + bins + 1, 0.0);
  for (std::size_t i = 0; i < k; ++i)
  {
    auto const &column = spans[i];
    if (column.begin == column.end)
      continue;
    auto const b0 = (column.first - first) / width;
    auto const b1 = (column.last - first) / width;
    double const per_bin = double(column.end - column.begin) / double(b1 - b0 + 1);
    step[b0] += per_bin;
    step[b1 + 1] -= per_bin;
  }
  double const share = double(touched.entries) / ranges.parts;
  double density = 0, sum = 0;
  int t = 1;
  for (std::int64_t b = 0; b < bins && t < ranges.parts; ++b)
  {
    density += step[b];
    sum += density;
    for (; t < ranges.parts && sum >= share * t; ++t)
      ranges.cut[t] = Ordinal(std::min(first + (b + 1) * width, first + span));
  }
  return ranges;
}

// The rows the columns cols[0, k) touch, cut into one range per thread of
// `host` holding about equal shares of their entries: column_spans into
// `spans` (grown to k, then reused), then split_by_entries. Every range is
// empty where the columns have no entries.
template <class HostSpace, class Ordinal>
RowRanges<Ordinal>
split_rows_by_entries(HostSpace const &host, std::size_t const *col_ptr,
                      Ordinal const *row, Ordinal const *cols, std::size_t k,
                      Ordinal n_rows, std::vector<ColumnSpan<Ordinal>> &spans)
{
  spans.resize(k);
  auto const touched = column_spans(host, col_ptr, row, cols, k, n_rows, spans.data());
  return split_by_entries(touched, spans.data(), k, kokkos_ext::concurrency(host));
}

} // namespace hst::detail
