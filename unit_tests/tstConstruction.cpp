// Making a session costs nothing of the operator's size (issue 14): the
// bytes allocated to make an adaptive session, or an arm, are the same on two
// operators of 16x different size with the same expected set; the per-column
// scratch the arms share is leased exclusively.

#include <hst/detail/IndexMap.hpp>
#include <hst/detail/Scratch.hpp>

#include "AllocationWatch.hpp"
#include "HSTTestHelpers.hpp"
#include <workload/Generators.hpp>

#include <atomic>
#include <map>
#include <random>
#include <thread>
#include <vector>

namespace
{

using namespace hst_test;

template <class ExecutionSpace>
struct Construction : ::testing::Test
{};
TYPED_TEST_SUITE(Construction, DeviceTypes);

// Bytes allocated by f(): on the heap with no Kokkos tool attached, and by
// Kokkos (through a Tools callback) in a second call.
struct Bytes
{
  long heap = 0;
  long kokkos = 0;
};
template <class F>
Bytes bytes_of(F &&f)
{
  Bytes b;
  {
    HeapWatch watch;
    EXPECT_FALSE(watch.tools_loaded()) << "a Kokkos tool is loaded: the heap count "
                                          "would include its allocations";
    f();
    b.heap = HeapWatch::heap_bytes();
  }
  {
    AllocationWatch watch;
    f();
    b.kokkos = AllocationWatch::kokkos_bytes();
  }
  return b;
}

// An 8 x 8 patch of grid points away from the boundary: the same columns,
// stencils and set on every grid of at least 40 x 40 points.
std::vector<Ordinal> patch(Ordinal nx)
{
  std::vector<Ordinal> cols;
  for (Ordinal y = 20; y < 28; ++y)
    for (Ordinal x = 20; x < 28; ++x)
      cols.push_back(y * nx + x);
  return cols;
}

// What making each kind of session allocates on an nx x nx grid.
struct Made
{
  Bytes adaptive, baseline, scatter, scheduled;
};
template <class ExecutionSpace>
Made made_on_grid(Ordinal nx)
{
  using memory_space = typename ExecutionSpace::memory_space;
  ExecutionSpace space;
  auto const A =
      to_matrix<ExecutionSpace>(hst::workload::grid_2d<Scalar, Ordinal>(nx, nx));
  hst::Operator op(space, A);
  auto const expected = to_view<memory_space>(patch(nx));
  int const width = 8;
  Made m;
  m.adaptive = bytes_of([&] { auto s = op.adaptive(space, expected, width); });
  m.baseline = bytes_of([&] { auto s = op.baseline(width); });
  m.scatter = bytes_of([&] { auto s = op.scatter(width); });
  m.scheduled = bytes_of([&] { auto s = op.session(space, expected, width); });
  return m;
}

TYPED_TEST(Construction, making_a_session_allocates_nothing_of_the_operator_size)
{
  // 1e4 and 1.6e5 columns, the same 64 expected columns.
  auto const small = made_on_grid<TypeParam>(100);
  auto const large = made_on_grid<TypeParam>(400);
  EXPECT_EQ(small.adaptive.heap, large.adaptive.heap);
  EXPECT_EQ(small.adaptive.kokkos, large.adaptive.kokkos);
  EXPECT_EQ(small.baseline.heap, large.baseline.heap);
  EXPECT_EQ(small.baseline.kokkos, large.baseline.kokkos);
  EXPECT_EQ(small.scatter.heap, large.scatter.heap);
  EXPECT_EQ(small.scatter.kokkos, large.scatter.kokkos);
  EXPECT_EQ(small.scheduled.heap, large.scheduled.heap);
  EXPECT_EQ(small.scheduled.kokkos, large.scheduled.kokkos);
}

// A lease is exclusive: a second lease taken while the first is held gets
// another scratch (made then), and a later lease reuses what was made.
TEST(ScratchPool, a_held_scratch_is_never_leased_twice)
{
  hst::detail::ScratchPool pool(10, 20);
  hst::detail::HostScratch *first = nullptr, *second = nullptr;
  {
    auto const a = pool.acquire();
    auto const b = pool.acquire();
    first = &*a;
    second = &*b;
    EXPECT_NE(first, second);
    EXPECT_EQ(pool.spares(), 1u);
  }
  {
    auto const a = pool.acquire();
    EXPECT_EQ(&*a, first);
    auto const b = pool.acquire();
    EXPECT_EQ(&*b, second);
    EXPECT_EQ(pool.spares(), 1u);
  }
}

// Two host threads stamping columns through leases of one pool never see
// each other's stamps (what two sessions of one Operator on two threads do).
TEST(ScratchPool, two_threads_never_share_a_scratch)
{
  std::size_t const n = 4096;
  hst::detail::ScratchPool pool(1, n);
  std::atomic<long> clashes{0};
  auto work = [&] {
    for (int round = 0; round < 2000; ++round)
    {
      auto const lease = pool.acquire();
      std::uint32_t const g = lease->new_column_generation();
      std::uint32_t *const stamp = lease->column_stamp();
      for (std::size_t c = 0; c < n; ++c)
        stamp[c] = g;
      std::this_thread::yield();
      for (std::size_t c = 0; c < n; ++c)
        clashes += stamp[c] != g;
    }
  };
  std::thread other(work);
  work();
  other.join();
  EXPECT_EQ(clashes, 0);
}

// Column tiles opened by entering columns (the jump deferral's count), with
// tiles of 4 consecutive columns: an entering column counts only in a tile
// that no column of the earlier set lies in (a staying or a leaving one),
// and each opened tile once.
TEST(ScratchPool, opened_tiles_counts_each_new_tile_of_entering_columns_once)
{
  hst::detail::ScratchPool pool(1, 64);
  auto const tile_of = [](int c) { return c / 4; };
  std::vector<int> const before = {0, 5, 9, 40};
  // 1: tile 0 (column 0 stays); 6: tile 1 (column 5 left it, still held
  // before); 20, 21: tile 5, opened once; 33: tile 8, opened; 41: tile 10
  // (column 40 stays).
  std::vector<int> const after = {0, 1, 6, 20, 21, 33, 40, 41};
  EXPECT_EQ(hst::detail::opened_tiles(pool, before, after.data(), after.size(), tile_of),
            2u);
  EXPECT_EQ(
      hst::detail::opened_tiles(pool, before, before.data(), before.size(), tile_of), 0u)
      << "the same set opens nothing";
  std::vector<int> const none;
  EXPECT_EQ(hst::detail::opened_tiles(pool, none, after.data(), after.size(), tile_of),
            5u)
      << "from an empty set every tile is new: 0, 1, 5, 8 and 10, none twice";
  // The column stamps left by another use of the scratch do not count.
  EXPECT_EQ(hst::detail::opened_tiles(pool, after, before.data(), before.size(), tile_of),
            1u)
      << "9 enters tile 2";
}

// The arms' maps (column tile -> slot, segment -> piece, row block -> local
// id) agree with std::map over random inserts, updates and erases, with keys
// from a small range so that probe runs collide and erases shift them.
TEST(IndexMap, agrees_with_std_map)
{
  hst::detail::IndexMap map;
  std::map<std::int64_t, std::int32_t> oracle;
  std::mt19937_64 random(14);
  for (int op = 0; op < 200000; ++op)
  {
    std::int64_t const key = std::int64_t(random() % 512) * 8; // collisions
    switch (random() % 3)
    {
    case 0:
      map.set(key, std::int32_t(op));
      oracle[key] = std::int32_t(op);
      break;
    case 1:
      map.erase(key);
      oracle.erase(key);
      break;
    default:
      break;
    }
    std::int64_t const probe = std::int64_t(random() % 512) * 8;
    auto const it = oracle.find(probe);
    ASSERT_EQ(map.find(probe), it == oracle.end() ? -1 : it->second) << "op " << op;
    ASSERT_EQ(map.size(), oracle.size()) << "op " << op;
  }
  for (std::int64_t key = 0; key < 512 * 8; ++key)
  {
    auto const it = oracle.find(key);
    ASSERT_EQ(map.find(key), it == oracle.end() ? -1 : it->second) << "key " << key;
  }
}

} // namespace
