#pragma once

#include <hst/Options.hpp>
#include <hst/detail/Buffers.hpp>
#include <hst/detail/InputCheck.hpp>
#include <hst/detail/Scratch.hpp>
#include <hst/detail/TileIndex.hpp>
#include <hst/kokkos_ext/Compat.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace hst::detail
{

// Everything `Operator` builds once, shared (read-only) by the arms it makes.
template <class Scalar, class Ordinal, class MemorySpace>
struct OperatorData
{
  using ordinal_type = Ordinal;
  Ordinal n_rows = 0;
  Ordinal n_cols = 0;
  std::size_t nnz = 0;
  OperatorOptions options;

  // A by columns, caller's numbering: the scatter arm walks it on the device,
  // the exact-set arm compiles from its host copy.
  HostCsc<Scalar, Ordinal> csc_host;
  Kokkos::View<std::size_t *, MemorySpace> col_ptr;
  Kokkos::View<Ordinal *, MemorySpace> csc_row;
  Kokkos::View<Scalar *, MemorySpace> csc_val;

  // Tile index. Host-only parts plan schedules; the rest is walked by kernels.
  // column -> its column tile T and its place j in it (the tile index puts
  // column c at T * tile + j of the locality order); kept apart so planning
  // divides nothing.
  std::vector<std::int32_t> column_tile;
  std::vector<std::int32_t> column_in_tile;
  std::vector<std::int32_t> tile_ptr;       // column tile -> first tile
  std::vector<std::int32_t> tile_row_block; // tile -> row block
  std::int32_t n_row_blocks = 0;
  // tile * tile_width + j -> first entry of column j in that tile (host: the
  // scheduled arm plans its per-step segment list from it).
  Kokkos::View<std::size_t *, Kokkos::HostSpace> segment_ptr;
  // locality position T * tile + j -> the tiles where column j of column
  // tile T has entries (see HostTileIndex): a re-plan walks these alone.
  std::vector<std::size_t> segment_tile_ptr;
  std::vector<std::int32_t> segment_tile;
  Kokkos::View<Ordinal *, MemorySpace> tile_row;
  Kokkos::View<Scalar *, MemorySpace> tile_val;
  TileStats stats;
  // Host scratch by column and by row, shared by the arms (see Scratch.hpp):
  // the one O(n) host workspace, made here so that making an arm is not.
  std::unique_ptr<ScratchPool> scratch;

  std::int32_t column_tile_of(Ordinal c) const { return column_tile[c]; }
  // Column c's place in the locality order: T * tile + j.
  std::size_t locality_position(Ordinal c) const
  {
    return std::size_t(column_tile[std::size_t(c)]) * std::size_t(options.tile) +
           std::size_t(column_in_tile[std::size_t(c)]);
  }
  std::int32_t column_tiles() const { return std::int32_t(tile_ptr.size()) - 1; }

  // Planning a column (the scheduled arm's add_columns) reads a chain of host
  // index entries: its column tile and place, then the tile's first tile and
  // the column's segment list, then each segment's row block and entry
  // range. On a cold cache each is a miss that waits for the one before it.
  // This reads the chain for `n` columns (column_at(i), i < n) one link at a
  // time across all of them, so that the misses of each link overlap, and
  // the planning that follows finds them in cache. (Software prefetches of
  // the same entries, measured in its place, did not help.)
  template <class ColumnAt>
  void touch_planning_chain(std::size_t n, ColumnAt &&column_at) const
  {
    std::size_t const tile = std::size_t(options.tile);
    auto column = [&](std::size_t i) { return Ordinal(column_at(i)); };
    std::size_t sum = 0;
    for (std::size_t i = 0; i < n; ++i)
      sum += locality_position(column(i));
    for (std::size_t i = 0; i < n; ++i)
    {
      auto const c = column(i);
      sum += std::size_t(tile_ptr[std::size_t(column_tile[std::size_t(c)])]) +
             segment_tile_ptr[locality_position(c) + 1];
    }
    for (std::size_t i = 0; i < n; ++i)
    {
      auto const p = locality_position(column(i));
      for (auto s = segment_tile_ptr[p]; s < segment_tile_ptr[p + 1]; ++s)
        sum += std::size_t(segment_tile[s]);
    }
    for (std::size_t i = 0; i < n; ++i)
    {
      auto const c = column(i);
      auto const p = locality_position(c);
      std::size_t const j = std::size_t(column_in_tile[std::size_t(c)]);
      for (auto s = segment_tile_ptr[p]; s < segment_tile_ptr[p + 1]; ++s)
      {
        auto const q = std::size_t(segment_tile[s]);
        sum += std::size_t(tile_row_block[q]) + segment_ptr(q * tile + j + 1);
      }
    }
    volatile std::size_t const loaded = sum; // the loads are the point
    (void)loaded;
  }

  template <class ExecutionSpace, class Matrix>
  OperatorData(ExecutionSpace const &space, Matrix const &A,
               OperatorOptions const &options_)
      : options(options_)
  {
    if (options.tile <= 0)
      throw_invalid("hst::Operator: argument 'options.tile' must be positive, got ",
                    options.tile);
    if (options.row_block <= 0)
      throw_invalid("hst::Operator: argument 'options.row_block' must be "
                    "positive, got ",
                    options.row_block);
    if (options.min_parallel_work < 0)
      throw_invalid("hst::Operator: argument 'options.min_parallel_work' must be "
                    ">= 0, got ",
                    options.min_parallel_work);
    n_rows = Ordinal(A.numRows());
    n_cols = Ordinal(A.numCols());
    auto const row_map =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, A.graph.row_map);
    auto const entries =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, A.graph.entries);
    auto const values =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, A.values);
    if (n_rows > 0 && row_map.extent(0) != std::size_t(n_rows) + 1)
      throw_invalid("hst::Operator: argument 'A' has ", n_rows, " rows but a row map of ",
                    row_map.extent(0), " entries");
    nnz = n_rows > 0 ? std::size_t(row_map(n_rows)) : 0;
    for (Ordinal r = 0; r < n_rows; ++r)
      for (auto p = std::size_t(row_map(r)); p < std::size_t(row_map(r + 1)); ++p)
        if (entries(p) < 0 || entries(p) >= n_cols)
          throw_invalid("hst::Operator: argument 'A' has column id ", entries(p),
                        " in row ", r, ", outside [0, ", n_cols, ")");

    csc_host = transpose_to_csc<Scalar>(n_rows, n_cols, row_map, entries, values);
    LocalityOrder<Ordinal> order;
    if (options.locality)
      order = locality_order(n_rows, n_cols, row_map, entries, csc_host,
                             std::int64_t(options.row_block));
    else
    {
      order.columns.resize(n_cols);
      order.rows.resize(n_rows);
      std::iota(order.columns.begin(), order.columns.end(), Ordinal(0));
      std::iota(order.rows.begin(), order.rows.end(), Ordinal(0));
    }
    auto index = build_tile_index(n_rows, n_cols, csc_host, order, options);

    col_ptr = to_memory_space<MemorySpace>(space, csc_host.col_ptr);
    csc_row = to_memory_space<MemorySpace>(space, csc_host.row);
    csc_val = to_memory_space<MemorySpace>(space, csc_host.val);
    column_tile.resize(std::size_t(n_cols));
    column_in_tile.resize(std::size_t(n_cols));
    for (Ordinal c = 0; c < n_cols; ++c)
    {
      column_tile[c] = std::int32_t(index.tile_position[c] / options.tile);
      column_in_tile[c] = std::int32_t(index.tile_position[c] % options.tile);
    }
    tile_ptr = std::move(index.tile_ptr);
    tile_row_block = std::move(index.tile_row_block);
    n_row_blocks = index.n_row_blocks;
    segment_ptr = index.segment_ptr;
    segment_tile_ptr = std::move(index.segment_tile_ptr);
    segment_tile = std::move(index.segment_tile);
    tile_row = to_memory_space<MemorySpace>(space, index.row);
    tile_val = to_memory_space<MemorySpace>(space, index.val);
    stats = index.stats;
    scratch = std::make_unique<ScratchPool>(std::size_t(n_rows), std::size_t(n_cols));
    // the host copies of the tile index are released on return
    kokkos_ext::fence(space, "hst::Operator");
  }
};

} // namespace hst::detail
