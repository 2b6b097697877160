// The operator and its tile index: construction, shape, and tiles that do not
// depend on how the caller numbered rows and columns.

#include "HSTTestHelpers.hpp"

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <vector>

namespace
{

using namespace hst_test;

template <class ExecutionSpace>
struct OperatorTest : ::testing::Test
{};
TYPED_TEST_SUITE(OperatorTest, DeviceTypes);

TYPED_TEST(OperatorTest, deduces_types_from_the_matrix)
{
  using ExecutionSpace = TypeParam;
  auto const A = to_matrix<ExecutionSpace>(
      hst::workload::rectangular_band<Scalar, Ordinal>(300, 700, 2));
  hst::Operator op(A);
  static_assert(
      std::is_same_v<decltype(op), hst::Operator<Scalar, Ordinal,
                                                 typename ExecutionSpace::memory_space>>);
  EXPECT_EQ(op.num_rows(), 300);
  EXPECT_EQ(op.num_cols(), 700);
  EXPECT_EQ(op.nnz(), std::size_t(A.nnz()));
  EXPECT_EQ(op.options().tile, 8);
  EXPECT_EQ(op.tile_stats().column_tiles, (700 + 7) / 8);

  hst::OperatorOptions options;
  options.tile = 16;
  options.row_block = 64;
  hst::Operator custom(ExecutionSpace{}, A, options);
  EXPECT_EQ(custom.tile_stats().column_tiles, (700 + 15) / 16);
  EXPECT_EQ(custom.tile_stats().row_blocks, (300 + 63) / 64);
}

// Tiles of a shuffled mesh, with and without the locality order.
struct Tiling
{
  hst::TileStats natural, shuffled, shuffled_caller_order;
};

template <class ExecutionSpace>
Tiling tile(Triplets const &t, int row_block)
{
  hst::OperatorOptions options;
  options.row_block = row_block;
  hst::OperatorOptions caller_order = options;
  caller_order.locality = false;
  auto const mixed = to_matrix<ExecutionSpace>(hst::workload::shuffled(t, 99));
  return {hst::Operator(to_matrix<ExecutionSpace>(t), options).tile_stats(),
          hst::Operator(mixed, options).tile_stats(),
          hst::Operator(mixed, caller_order).tile_stats()};
}

void expect_numbering_does_not_matter(char const *mesh, Tiling const &s)
{
  std::cout << mesh
            << ", tiles natural/shuffled/shuffled-caller-order: " << s.natural.tiles
            << " / " << s.shuffled.tiles << " / " << s.shuffled_caller_order.tiles
            << "; empty segments " << s.natural.empty_segments << " / "
            << s.shuffled.empty_segments << " / "
            << s.shuffled_caller_order.empty_segments << "\n";
  // A shuffled mesh tiles about as well as the natural one ...
  EXPECT_LE(double(s.shuffled.tiles), 1.15 * double(s.natural.tiles));
  EXPECT_LE(double(s.shuffled.empty_segments),
            1.15 * double(s.natural.empty_segments) + 0.02 * double(s.natural.tiles) * 8);
  EXPECT_GE(s.shuffled.mean_tile_nnz, 0.85 * s.natural.mean_tile_nnz);
  // ... while tiles cut along the caller's (shuffled) numbering are many and
  // nearly empty.
  EXPECT_GE(double(s.shuffled_caller_order.tiles), 3.0 * double(s.shuffled.tiles));
  EXPECT_LT(s.shuffled_caller_order.mean_tile_nnz, s.shuffled.mean_tile_nnz / 3);
}

TYPED_TEST(OperatorTest, shuffled_2d_mesh_tiles_like_the_natural_one)
{
  expect_numbering_does_not_matter(
      "2D 150x150",
      tile<TypeParam>(hst::workload::grid_2d<Scalar, Ordinal>(150, 150), 256));
}

TYPED_TEST(OperatorTest, shuffled_3d_mesh_tiles_like_the_natural_one)
{
  expect_numbering_does_not_matter(
      "3D 24^3", tile<TypeParam>(hst::workload::grid_3d<Scalar, Ordinal>(24), 512));
}

std::size_t count_entries(Triplets const &t)
{
  std::size_t nnz = 0;
  for (auto const &row : t.rows)
    nnz += row.size();
  return nnz;
}

// A rebuilt from its tile index alone: every tile entry mapped back to (row,
// column, value) through the column tiles (tile_ptr), the tiles' row blocks
// (tile_row_block), their segments (segment_ptr: one per column j of the
// tile), the entries (tile_row, tile_val) and the column placement
// (column_tile, column_in_tile), then compared entry by entry with the input.
template <class ExecutionSpace>
void expect_tiles_rebuild_the_matrix(Triplets const &t,
                                     hst::OperatorOptions const &options)
{
  using memory_space = typename ExecutionSpace::memory_space;
  using Entry = std::tuple<Ordinal, Ordinal, Scalar>;
  auto const A = to_matrix<ExecutionSpace>(t);
  hst::detail::OperatorData<Scalar, Ordinal, memory_space> const data(ExecutionSpace{}, A,
                                                                      options);
  int const width = options.tile;
  auto const tile_row =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, data.tile_row);
  auto const tile_val =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, data.tile_val);
  auto const &segment_ptr = data.segment_ptr;

  // Column placement: (column tile, place in it) -> column, one column each.
  std::int64_t const column_tiles = (std::int64_t(t.n_cols) + width - 1) / width;
  ASSERT_EQ(data.column_tiles(), column_tiles);
  ASSERT_EQ(data.column_tile.size(), std::size_t(t.n_cols));
  ASSERT_EQ(data.column_in_tile.size(), std::size_t(t.n_cols));
  std::vector<Ordinal> column_at(std::size_t(column_tiles) * width, Ordinal(-1));
  for (Ordinal c = 0; c < t.n_cols; ++c)
  {
    auto const T = data.column_tile[c];
    auto const j = data.column_in_tile[c];
    ASSERT_TRUE(T >= 0 && T < column_tiles && j >= 0 && j < width)
        << "column " << c << " placed at tile " << T << ", place " << j;
    auto &slot = column_at[std::size_t(T) * width + j];
    ASSERT_EQ(slot, Ordinal(-1))
        << "columns " << slot << " and " << c << " share a place";
    slot = c;
  }

  // The row blocks of the locality order (rows cut into blocks of row_block
  // consecutive positions), recomputed from the order itself.
  std::vector<std::int32_t> row_block_of(std::size_t(t.n_rows), -1);
  {
    auto const row_map =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, A.graph.row_map);
    auto const entries =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, A.graph.entries);
    hst::detail::LocalityOrder<Ordinal> order;
    if (options.locality)
      order = hst::detail::locality_order(t.n_rows, t.n_cols, row_map, entries,
                                          data.csc_host, std::int64_t(options.row_block));
    else
      for (Ordinal r = 0; r < t.n_rows; ++r)
        order.rows.push_back(r);
    ASSERT_EQ(order.rows.size(), std::size_t(t.n_rows));
    for (std::size_t pos = 0; pos < order.rows.size(); ++pos)
      row_block_of[order.rows[pos]] = std::int32_t(pos / options.row_block);
  }

  ASSERT_EQ(std::size_t(data.tile_ptr.back()), data.tile_row_block.size());
  ASSERT_EQ(segment_ptr.extent(0), data.tile_row_block.size() * width + 1);
  ASSERT_EQ(segment_ptr(segment_ptr.extent(0) - 1), count_entries(t));
  ASSERT_EQ(tile_row.extent(0), count_entries(t));
  std::vector<Entry> rebuilt;
  std::size_t misplaced = 0;
  for (std::int64_t T = 0; T < column_tiles; ++T)
    for (auto p = data.tile_ptr[T]; p < data.tile_ptr[T + 1]; ++p)
    {
      auto const block = data.tile_row_block[p];
      ASSERT_TRUE(block >= 0 && block < data.n_row_blocks);
      if (p > data.tile_ptr[T]) // one tile per row block, in row-block order
      {
        ASSERT_LT(data.tile_row_block[p - 1], block);
      }
      for (int j = 0; j < width; ++j)
      {
        auto const s = std::size_t(p) * width + j;
        ASSERT_LE(segment_ptr(s), segment_ptr(s + 1));
        auto const c = column_at[std::size_t(T) * width + j];
        if (c < 0) // a place past the last column holds nothing
        {
          ASSERT_EQ(segment_ptr(s), segment_ptr(s + 1));
        }
        for (auto e = segment_ptr(s); e < segment_ptr(s + 1); ++e)
        {
          auto const r = tile_row(e);
          ASSERT_TRUE(r >= 0 && r < t.n_rows) << "row " << r;
          if (row_block_of[r] != block && ++misplaced <= 5)
            ADD_FAILURE() << "row " << r << " of column " << c
                          << " in a tile of row block " << block << ", its block is "
                          << row_block_of[r];
          rebuilt.emplace_back(r, c, tile_val(e));
        }
      }
    }

  EXPECT_EQ(misplaced, 0u) << "entries outside their tile's row block";

  // Each column's list of nonempty segments (segment_tile_ptr, segment_tile):
  // exactly the tiles of its column tile where its segment holds entries,
  // ascending, so that a walk of the list skips nothing and visits no empty
  // segment.
  ASSERT_EQ(data.segment_tile_ptr.size(), std::size_t(t.n_cols) + 1);
  ASSERT_EQ(data.segment_tile_ptr.front(), 0u);
  for (Ordinal c = 0; c < t.n_cols; ++c)
  {
    auto const T = data.column_tile[c];
    auto const j = data.column_in_tile[c];
    auto const position = std::size_t(T) * width + j;
    std::vector<std::int32_t> nonempty;
    for (auto p = data.tile_ptr[T]; p < data.tile_ptr[T + 1]; ++p)
      if (segment_ptr(std::size_t(p) * width + j) !=
          segment_ptr(std::size_t(p) * width + j + 1))
        nonempty.push_back(p);
    auto const begin = data.segment_tile_ptr[position];
    auto const end = data.segment_tile_ptr[position + 1];
    ASSERT_LE(begin, end) << "column " << c;
    ASSERT_LE(end, data.segment_tile.size());
    std::vector<std::int32_t> const listed(
        data.segment_tile.begin() + std::ptrdiff_t(begin),
        data.segment_tile.begin() + std::ptrdiff_t(end));
    ASSERT_EQ(listed, nonempty)
        << "column " << c << " (column tile " << T << ", place " << j << ")";
  }
  ASSERT_EQ(data.segment_tile_ptr.back(), data.segment_tile.size());

  std::vector<Entry> expected;
  for (Ordinal r = 0; r < t.n_rows; ++r)
    for (auto const &[c, v] : t.rows[r])
      expected.emplace_back(r, c, v);
  std::sort(expected.begin(), expected.end());
  std::sort(rebuilt.begin(), rebuilt.end());
  ASSERT_EQ(rebuilt.size(), expected.size());
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < expected.size() && mismatches < 5; ++i)
    if (rebuilt[i] != expected[i])
    {
      ++mismatches;
      ADD_FAILURE() << "entry " << i << ": rebuilt (" << std::get<0>(rebuilt[i]) << ", "
                    << std::get<1>(rebuilt[i]) << ", " << std::get<2>(rebuilt[i])
                    << "), input (" << std::get<0>(expected[i]) << ", "
                    << std::get<1>(expected[i]) << ", " << std::get<2>(expected[i])
                    << ")";
    }
  EXPECT_EQ(mismatches, 0u);
}

TYPED_TEST(OperatorTest, every_entry_lands_in_exactly_one_tile)
{
  using ExecutionSpace = TypeParam;
  auto const t = hst::workload::with_empty_lines(
      hst::workload::power_law<Scalar, Ordinal>(2000, 6, 4), 9, 11);
  hst::Operator op(to_matrix<ExecutionSpace>(t));
  EXPECT_EQ(op.nnz(), count_entries(t));
  EXPECT_LE(op.tile_stats().empty_segments, op.tile_stats().tiles * 8);

  hst::OperatorOptions options; // tile 8, one row block of 1024 rows and a part
  expect_tiles_rebuild_the_matrix<ExecutionSpace>(t, options);
  options.tile = 5; // the last column tile part empty
  options.row_block = 64;
  expect_tiles_rebuild_the_matrix<ExecutionSpace>(t, options);
  options.locality = false;
  expect_tiles_rebuild_the_matrix<ExecutionSpace>(t, options);
  expect_tiles_rebuild_the_matrix<ExecutionSpace>(
      hst::workload::rectangular_band<Scalar, Ordinal>(300, 701, 2), options);
}

} // namespace
