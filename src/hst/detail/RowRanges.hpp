#pragma once
// Splitting a step's work among host threads by rows of y, so that no two
// threads write one row: the rows a column set touches, cut into contiguous
// ranges, and each column's entries clipped to a range. Used by the scatter
// arm's kernel and the exact-set arm's compile. Relies on the CSC copy's rows
// being sorted within each column.

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace hst::detail
{

// The rows [first, first + span) cut into `parts` ranges of equal length
// (by index; the last may be a row longer).
template <class Ordinal>
struct RowRanges
{
  Ordinal first = 0;
  std::int64_t span = 0;
  int parts = 1;

  KOKKOS_FUNCTION Ordinal begin(int t) const { return Ordinal(first + span * t / parts); }
  KOKKOS_FUNCTION Ordinal end(int t) const
  {
    return Ordinal(first + span * (t + 1) / parts);
  }
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

// Narrows a column's entries [begin, end) to those with rows in [lo, hi):
// two compares for a column on either side of the range, a binary search for
// one that crosses its edge. False if none is left.
template <class Rows, class Ordinal>
KOKKOS_FUNCTION bool clip_to_rows(Rows const &row, std::size_t &begin, std::size_t &end,
                                  Ordinal lo, Ordinal hi)
{
  if (begin == end || row(end - 1) < lo || row(begin) >= hi)
    return false;
  if (row(begin) < lo)
    begin = first_row_at_or_after(row, begin, end, lo);
  if (row(end - 1) >= hi)
    end = first_row_at_or_after(row, begin, end, hi);
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

  RowRanges<Ordinal> split(int parts) const
  {
    return {first, last < first ? 0 : std::int64_t(last) - std::int64_t(first) + 1,
            parts};
  }
};

// The rows touched by the columns cols[0, k), from each column's first and
// last entry: O(k).
template <class Ordinal>
TouchedRows<Ordinal> touched_rows(std::size_t const *col_ptr, Ordinal const *row,
                                  Ordinal const *cols, std::size_t k, Ordinal n_rows)
{
  TouchedRows<Ordinal> touched{n_rows, -1, 0};
  for (std::size_t i = 0; i < k; ++i)
  {
    auto const begin = col_ptr[cols[i]];
    auto const end = col_ptr[cols[i] + 1];
    if (begin == end)
      continue;
    touched.entries += end - begin;
    touched.first = std::min(touched.first, row[begin]);
    touched.last = std::max(touched.last, row[end - 1]);
  }
  return touched;
}

} // namespace hst::detail
