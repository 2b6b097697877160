// Steady-state applies allocate nothing (Kokkos Tools allocation callback and
// a counting global operator new, AllocationWatch.hpp), and every kernel HST launches is
// labelled "hst::...".

#include <hst/workload/Workload.hpp>

#include "AllocationWatch.hpp"
#include "HSTTestHelpers.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

namespace
{

using namespace hst_test;

template <class ExecutionSpace>
struct Allocations : ::testing::Test
{};
TYPED_TEST_SUITE(Allocations, DeviceTypes);

TYPED_TEST(Allocations, steady_state_applies_allocate_nothing)
{
  using ExecutionSpace = TypeParam;
  using memory_space = typename ExecutionSpace::memory_space;
  ExecutionSpace space;
  int const width = 8;
  auto const A = to_matrix<ExecutionSpace>(
      hst::workload::shuffled(hst::workload::grid_2d<Scalar, Ordinal>(100, 100), 5));
  hst::workload::WorkloadOptions w;
  w.churn = 0.05;
  hst::workload::Workload<Scalar, Ordinal> workload(A, w);
  std::vector<std::vector<Ordinal>> sets;
  std::vector<std::vector<Scalar>> values;
  std::vector<Ordinal> every_column;
  for (int step = 0; step < 100; ++step, workload.advance())
  {
    sets.push_back(workload.columns());
    values.push_back(workload.dx());
    every_column.insert(every_column.end(), sets.back().begin(), sets.back().end());
  }
  std::sort(every_column.begin(), every_column.end());
  every_column.erase(std::unique(every_column.begin(), every_column.end()),
                     every_column.end());

  hst::Operator op(A);
  hst::SessionOptions keep_all;
  keep_all.retire_after = 1000;
  // The session is compiled for every tile the sequence will use.
  auto scheduled = op.session(to_view<memory_space>(every_column), width, keep_all);
  auto exact_set = op.baseline(width);
  auto scatter = op.scatter(width);
  std::size_t const k = sets[0].size();
  Kokkos::View<Ordinal *, memory_space> cols("cols", k);
  Kokkos::View<Scalar **, Kokkos::LayoutLeft, memory_space> dx("dx", k, width);
  Kokkos::View<Scalar **, Kokkos::LayoutLeft, memory_space> y("y", A.numRows(), width);
  auto cols_host = Kokkos::create_mirror_view(cols);
  auto dx_host = Kokkos::create_mirror_view(dx);

  auto run_sequence = [&](bool watch) {
    long allocations = 0, heap = 0, launched = 0, foreign = 0;
    for (std::size_t step = 0; step < sets.size(); ++step)
    {
      for (std::size_t i = 0; i < k; ++i)
      {
        cols_host(i) = sets[step][i];
        for (int b = 0; b < width; ++b)
          dx_host(i, b) = values[step][i * width + b];
      }
      Kokkos::deep_copy(space, cols, cols_host);
      Kokkos::deep_copy(space, dx, dx_host);
      space.fence();
      if (!watch)
      {
        scheduled.apply_cols(space, cols, dx, y);
        exact_set.apply_cols(space, cols, dx, y);
        scatter.apply_cols(space, cols, dx, y);
        continue;
      }
      {
        AllocationWatch watching;
        scheduled.apply_cols(space, cols, dx, y);
        exact_set.apply_cols(space, cols, dx, y);
        scatter.apply_cols(space, cols, dx, y);
        space.fence();
        allocations += AllocationWatch::kokkos_allocations();
        heap += AllocationWatch::heap_allocations();
        launched += AllocationWatch::kernels();
        foreign += AllocationWatch::foreign_kernels();
      }
      // Repeating a set (no recompile at all) allocates nothing either.
      AllocationWatch watching;
      scheduled.apply_cols(space, cols, dx, y);
      exact_set.apply_cols(space, cols, dx, y);
      space.fence();
      allocations += AllocationWatch::kokkos_allocations();
      heap += AllocationWatch::heap_allocations();
    }
    return std::array<long, 4>{allocations, heap, launched, foreign};
  };

  run_sequence(false); // first pass: buffers grow to the sequence's needs
  auto const [allocations, heap, launched, foreign] = run_sequence(true);
  EXPECT_EQ(allocations, 0) << "Kokkos allocations during steady-state applies";
  EXPECT_EQ(heap, 0) << "heap allocations during steady-state applies";
  EXPECT_EQ(launched, 3 * 100) << "one kernel per arm per step";
  EXPECT_EQ(foreign, 0) << "kernels whose label does not start with hst::";
  EXPECT_EQ(exact_set.compiles(), 2 * 100);
}

// The watch itself sees allocations: a test that cannot fail proves nothing.
TYPED_TEST(Allocations, the_watch_sees_allocations)
{
  using memory_space = typename TypeParam::memory_space;
  long allocations = 0, heap = 0;
  {
    AllocationWatch watching;
    Kokkos::View<double *, memory_space> v("hst::test", 10);
    std::vector<int> grown(100);
    allocations = AllocationWatch::kokkos_allocations();
    heap = AllocationWatch::heap_allocations();
  }
  EXPECT_EQ(allocations, 1);
  EXPECT_GE(heap, 1);
}

} // namespace
