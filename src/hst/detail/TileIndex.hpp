#pragma once
// Host-side construction of everything `Operator` builds once: the CSC copy of
// A, the locality order of rows and columns, and the tile index.

#include <hst/Options.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace hst
{

/// Shape of a tile index, for reports and tests.
struct TileStats
{
  std::int64_t column_tiles = 0;   ///< ceil(n_cols / tile)
  std::int64_t row_blocks = 0;     ///< ceil(n_rows / row_block)
  std::int64_t tiles = 0;          ///< nonempty (row block, column tile) pairs
  std::int64_t empty_segments = 0; ///< tile columns with no entry in their tile:
                                   ///< checks a tile walk makes for nothing
  double mean_tile_nnz = 0;        ///< nnz / tiles
};

namespace detail
{

// A sparse matrix in compressed-column form on the host, caller's numbering,
// row ids ascending within each column.
template <class Scalar, class Ordinal>
struct HostCsc
{
  Kokkos::View<std::size_t *, Kokkos::HostSpace> col_ptr;
  Kokkos::View<Ordinal *, Kokkos::HostSpace> row;
  Kokkos::View<Scalar *, Kokkos::HostSpace> val;
};

template <class Scalar, class Ordinal, class RowMap, class Entries, class Values>
HostCsc<Scalar, Ordinal> transpose_to_csc(Ordinal n_rows, Ordinal n_cols,
                                          RowMap const &row_map, Entries const &entries,
                                          Values const &values)
{
  std::size_t const nnz = n_rows > 0 ? std::size_t(row_map(n_rows)) : 0;
  HostCsc<Scalar, Ordinal> csc;
  csc.col_ptr = Kokkos::View<std::size_t *, Kokkos::HostSpace>("hst::Operator::col_ptr",
                                                               std::size_t(n_cols) + 1);
  csc.row = Kokkos::View<Ordinal *, Kokkos::HostSpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "hst::Operator::csc_row"), nnz);
  csc.val = Kokkos::View<Scalar *, Kokkos::HostSpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "hst::Operator::csc_val"), nnz);
  for (std::size_t p = 0; p < nnz; ++p)
    ++csc.col_ptr(std::size_t(entries(p)) + 1);
  for (Ordinal c = 0; c < n_cols; ++c)
    csc.col_ptr(c + 1) += csc.col_ptr(c);
  std::vector<std::size_t> next(csc.col_ptr.data(),
                                csc.col_ptr.data() + std::size_t(n_cols));
  for (Ordinal r = 0; r < n_rows; ++r)
    for (auto p = std::size_t(row_map(r)); p < std::size_t(row_map(r + 1)); ++p)
    {
      auto const q = next[entries(p)]++;
      csc.row(q) = r;
      csc.val(q) = values(p);
    }
  return csc;
}

// Rows and columns in an order where neighbours sit close, cut into compact
// regions of about `row_block` rows: in each connected component of the
// bipartite graph (column c -- row r for every entry A(r, c)), a breadth-first
// sweep from a pseudo-peripheral column (the last column reached by two
// sweeps, as in George-Liu) gives the seed order; regions then grow by
// breadth-first search from the first unplaced column of that order, placing
// each column and its not yet placed rows, until the rows placed reach the
// next multiple of `row_block`. A region is a blob, not a slice of a level
// (whose width grows like sqrt(n) on a 2D mesh), so a column's rows fall in
// one row block and its column tile in few tiles whatever the operator's
// size. The structure depends only on the graph, so a relabelled mesh gets
// tiles as good as the natural one. Columns and rows with no entries come last.
template <class Ordinal>
struct LocalityOrder
{
  std::vector<Ordinal> columns; // position -> caller's column id
  std::vector<Ordinal> rows;    // position -> caller's row id
};

template <class Ordinal, class RowMap, class Entries, class Csc>
LocalityOrder<Ordinal> locality_order(Ordinal n_rows, Ordinal n_cols,
                                      RowMap const &row_map, Entries const &entries,
                                      Csc const &csc, std::int64_t row_block)
{
  LocalityOrder<Ordinal> order;
  order.columns.reserve(n_cols);
  order.rows.reserve(n_rows);
  // Sweep marks: a node is visited in the current sweep iff mark == sweep id.
  std::vector<std::int32_t> col_mark(n_cols, -1), row_mark(n_rows, -1);
  std::int32_t sweep = 0;
  std::vector<Ordinal> queue;
  queue.reserve(n_cols);

  // One sweep from `start`; appends rows to `rows_out` when given. Returns the
  // queue (columns in visiting order).
  auto bfs = [&](Ordinal start, std::vector<Ordinal> *rows_out) {
    ++sweep;
    queue.clear();
    queue.push_back(start);
    col_mark[start] = sweep;
    for (std::size_t head = 0; head < queue.size(); ++head)
    {
      Ordinal const c = queue[head];
      for (auto p = csc.col_ptr(c); p < csc.col_ptr(c + 1); ++p)
      {
        Ordinal const r = csc.row(p);
        if (row_mark[r] == sweep)
          continue;
        row_mark[r] = sweep;
        if (rows_out)
          rows_out->push_back(r);
        for (auto q = std::size_t(row_map(r)); q < std::size_t(row_map(r + 1)); ++q)
        {
          Ordinal const c2 = entries(q);
          if (col_mark[c2] != sweep)
          {
            col_mark[c2] = sweep;
            queue.push_back(c2);
          }
        }
      }
    }
  };
  auto degree = [&](Ordinal c) { return csc.col_ptr(c + 1) - csc.col_ptr(c); };

  std::vector<char> placed(n_cols, 0), row_placed(n_rows, 0);
  std::vector<Ordinal> seeds, region;
  for (Ordinal first = 0; first < n_cols; ++first)
  {
    if (placed[first] || degree(first) == 0)
      continue;
    Ordinal start = first;
    for (int pass = 0; pass < 2; ++pass)
    {
      bfs(start, nullptr);
      // Among the columns of the last level reached, take one of least degree.
      Ordinal best = queue.back();
      for (auto it = queue.rbegin(); it != queue.rend() && it - queue.rbegin() < 64; ++it)
        if (degree(*it) < degree(best))
          best = *it;
      start = best;
    }
    bfs(start, nullptr);
    seeds.assign(queue.begin(), queue.end());
    for (Ordinal seed : seeds)
    {
      if (placed[seed])
        continue;
      // One region: breadth-first from `seed` over unplaced columns, until
      // the rows placed reach the next row-block boundary (the last column
      // keeps all its rows, so a region may end a few rows past it).
      ++sweep;
      auto const boundary = (std::int64_t(order.rows.size()) / row_block + 1) * row_block;
      region.clear();
      region.push_back(seed);
      col_mark[seed] = sweep;
      for (std::size_t head = 0;
           head < region.size() && std::int64_t(order.rows.size()) < boundary; ++head)
      {
        Ordinal const c = region[head];
        placed[c] = 1;
        order.columns.push_back(c);
        for (auto p = csc.col_ptr(c); p < csc.col_ptr(c + 1); ++p)
        {
          Ordinal const r = csc.row(p);
          if (row_placed[r])
            continue;
          row_placed[r] = 1;
          order.rows.push_back(r);
          for (auto q = std::size_t(row_map(r)); q < std::size_t(row_map(r + 1)); ++q)
          {
            Ordinal const c2 = entries(q);
            if (!placed[c2] && col_mark[c2] != sweep)
            {
              col_mark[c2] = sweep;
              region.push_back(c2);
            }
          }
        }
      }
    }
  }
  for (Ordinal c = 0; c < n_cols; ++c)
    if (!placed[c])
      order.columns.push_back(c);
  for (Ordinal r = 0; r < n_rows; ++r)
    if (!row_placed[r])
      order.rows.push_back(r);
  return order;
}

// The tile index on the host. A tile is (row block R, column tile T); only
// nonempty tiles are stored, grouped by column tile and ordered by row block.
// Within a tile, entries are grouped by the tile's columns j = 0..tile-1
// ("segments") so that a walk can skip a column that is not in the step's set
// with one test.
template <class Scalar, class Ordinal>
struct HostTileIndex
{
  std::vector<Ordinal> tile_position;       // column -> T * tile + j
  std::vector<std::int32_t> tile_ptr;       // column tile -> its first tile
  std::vector<std::int32_t> tile_row_block; // tile -> row block
  Kokkos::View<std::size_t *, Kokkos::HostSpace>
      segment_ptr; // tile * tile_width + j -> first entry
  // The nonempty segments of each column, by locality position T * tile + j:
  // the tiles q whose segment q * tile_width + j holds entries, ascending,
  // are segment_tile[segment_tile_ptr[T * tile + j] .. [.. + 1]). A column's
  // walk visits these alone, not every tile of its column tile.
  std::vector<std::size_t> segment_tile_ptr;
  std::vector<std::int32_t> segment_tile;
  Kokkos::View<Ordinal *, Kokkos::HostSpace> row; // caller's row id
  Kokkos::View<Scalar *, Kokkos::HostSpace> val;
  std::int32_t n_row_blocks = 0;
  TileStats stats;
};

template <class Scalar, class Ordinal>
HostTileIndex<Scalar, Ordinal>
build_tile_index(Ordinal n_rows, Ordinal n_cols, HostCsc<Scalar, Ordinal> const &csc,
                 LocalityOrder<Ordinal> const &order, OperatorOptions const &options)
{
  int const width = options.tile;
  std::int64_t const n_col_tiles = (std::int64_t(n_cols) + width - 1) / width;
  std::int64_t const n_row_blocks =
      (std::int64_t(n_rows) + options.row_block - 1) / options.row_block;
  constexpr std::int64_t max_id = std::numeric_limits<std::int32_t>::max();
  auto too_large = [] {
    return std::invalid_argument("hst::Operator: argument 'A' needs more than "
                                 "2^31 tiles; raise options.row_block");
  };
  if (n_row_blocks > max_id)
    throw too_large();

  HostTileIndex<Scalar, Ordinal> index;
  index.n_row_blocks = std::int32_t(n_row_blocks);
  index.tile_position.resize(n_cols);
  for (std::size_t pos = 0; pos < order.columns.size(); ++pos)
    index.tile_position[order.columns[pos]] = Ordinal(pos);
  std::vector<std::int32_t> row_block_of(n_rows);
  for (std::size_t pos = 0; pos < order.rows.size(); ++pos)
    row_block_of[order.rows[pos]] = std::int32_t(pos / options.row_block);

  std::size_t const nnz = csc.row.extent(0);
  index.row = Kokkos::View<Ordinal *, Kokkos::HostSpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "hst::Operator::tile_row"), nnz);
  index.val = Kokkos::View<Scalar *, Kokkos::HostSpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "hst::Operator::tile_val"), nnz);
  index.tile_ptr.assign(n_col_tiles + 1, 0);
  std::vector<std::size_t> segment_ptr;
  segment_ptr.reserve(std::size_t(n_col_tiles) * width + 1);

  index.segment_tile_ptr.assign(std::size_t(n_cols) + 1, 0);
  // (row block, j, csc position) for the entries of one column tile.
  std::vector<std::tuple<std::int32_t, std::int32_t, std::size_t>> entries;
  // the nonempty tiles of each column j of one column tile
  std::vector<std::vector<std::int32_t>> column_tiles(static_cast<std::size_t>(width));
  std::size_t out = 0;
  for (std::int64_t t = 0; t < n_col_tiles; ++t)
  {
    entries.clear();
    for (int j = 0; j < width; ++j)
    {
      std::int64_t const pos = t * width + j;
      if (pos >= n_cols)
        break;
      Ordinal const c = order.columns[pos];
      for (auto p = csc.col_ptr(c); p < csc.col_ptr(c + 1); ++p)
        entries.emplace_back(row_block_of[csc.row(p)], j, p);
    }
    std::sort(entries.begin(), entries.end());
    std::size_t e = 0;
    while (e < entries.size())
    {
      std::int32_t const block = std::get<0>(entries[e]);
      index.tile_row_block.push_back(block);
      for (int j = 0; j < width; ++j)
      {
        segment_ptr.push_back(out);
        bool empty = true;
        for (; e < entries.size() && std::get<0>(entries[e]) == block &&
               std::get<1>(entries[e]) == j;
             ++e, ++out)
        {
          index.row(out) = csc.row(std::get<2>(entries[e]));
          index.val(out) = csc.val(std::get<2>(entries[e]));
          empty = false;
        }
        index.stats.empty_segments += empty;
        if (!empty)
          column_tiles[std::size_t(j)].push_back(
              std::int32_t(index.tile_row_block.size() - 1));
      }
    }
    if (std::int64_t(index.tile_row_block.size()) > max_id)
      throw too_large();
    index.tile_ptr[t + 1] = std::int32_t(index.tile_row_block.size());
    for (int j = 0; j < width && t * width + j < n_cols; ++j)
    {
      auto &tiles = column_tiles[std::size_t(j)];
      index.segment_tile.insert(index.segment_tile.end(), tiles.begin(), tiles.end());
      index.segment_tile_ptr[std::size_t(t * width + j) + 1] = index.segment_tile.size();
      tiles.clear();
    }
  }
  segment_ptr.push_back(out);
  index.segment_ptr = Kokkos::View<std::size_t *, Kokkos::HostSpace>(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "hst::Operator::segment_ptr"),
      segment_ptr.size());
  std::copy(segment_ptr.begin(), segment_ptr.end(), index.segment_ptr.data());

  index.stats.column_tiles = n_col_tiles;
  index.stats.row_blocks = n_row_blocks;
  index.stats.tiles = std::int64_t(index.tile_row_block.size());
  index.stats.mean_tile_nnz =
      index.stats.tiles > 0 ? double(nnz) / double(index.stats.tiles) : 0.0;
  return index;
}

} // namespace detail
} // namespace hst
