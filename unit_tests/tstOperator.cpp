// The operator and its tile index: construction, shape, and tiles that do not
// depend on how the caller numbered rows and columns.

#include "HSTTestHelpers.hpp"

#include <type_traits>

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

TYPED_TEST(OperatorTest, every_entry_lands_in_exactly_one_tile)
{
  using ExecutionSpace = TypeParam;
  auto const t = hst::workload::with_empty_lines(
      hst::workload::power_law<Scalar, Ordinal>(2000, 6, 4), 9, 11);
  hst::Operator op(to_matrix<ExecutionSpace>(t));
  auto const &s = op.tile_stats();
  std::size_t nnz = 0;
  for (auto const &row : t.rows)
    nnz += row.size();
  EXPECT_EQ(op.nnz(), nnz);
  EXPECT_NEAR(s.mean_tile_nnz * double(s.tiles), double(nnz), 1e-6 * double(nnz));
  EXPECT_LE(s.empty_segments, s.tiles * 8);
}

} // namespace
