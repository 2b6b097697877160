// Oracle tests: every arm agrees with a full recompute (KokkosSparse::spmv of
// A times the accumulated x) after 200-step workloads, on every layout, batch
// width and thread count, to the bit where the arm promises it.
// (tstArmSteps.cpp, the same executable: single steps against a host loop.)

#include "HSTTestHelpers.hpp"
#include <workload/Workload.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace
{

using namespace hst_test;
using hst::workload::Motion;

bool same_bits(std::vector<Scalar> const &a, std::vector<Scalar> const &b)
{
  return a.size() == b.size() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(Scalar)) == 0;
}

template <class ExecutionSpace>
struct Arms : ::testing::Test
{};
TYPED_TEST_SUITE(Arms, DeviceTypes);

struct Case
{
  std::string name;
  Triplets A;
};

std::vector<Case> operator_cases()
{
  using namespace hst::workload;
  auto const grid2 = grid_2d<Scalar, Ordinal>(60, 60);
  auto const grid3 = grid_3d<Scalar, Ordinal>(15);
  return {{"grid_2d", grid2},
          {"grid_2d_shuffled", shuffled(grid2, 7)},
          {"grid_3d", grid3},
          {"grid_3d_shuffled", shuffled(grid3, 11)},
          {"power_law", power_law<Scalar, Ordinal>(3000, 8, 5)},
          {"rectangular_wide", rectangular_band<Scalar, Ordinal>(1500, 4000, 3)},
          {"rectangular_tall", rectangular_band<Scalar, Ordinal>(4000, 1500, 2)},
          {"empty_rows_and_columns",
           with_empty_lines(grid_2d<Scalar, Ordinal>(50, 50), 7, 5)}};
}

// Final y of each arm (scheduled, exact set, scatter) and of a full recompute,
// after `steps` steps of one workload, all row-major on the host.
struct Outcome
{
  std::vector<Scalar> scheduled, exact_set, scatter, full;
};

template <class ExecutionSpace, class DxLayout, class YLayout>
Outcome run_workload(Triplets const &t, hst::workload::WorkloadOptions const &w,
                     int steps,
                     hst::OperatorOptions const &options = every_step_parallel())
{
  using memory_space = typename ExecutionSpace::memory_space;
  ExecutionSpace space;
  auto const A = to_matrix<ExecutionSpace>(t);
  hst::workload::Workload<Scalar, Ordinal> workload(A, w);
  int const width = w.width;
  std::size_t const k = workload.columns().size();

  hst::Operator op(A, options);
  auto scheduled = op.session(to_view<memory_space>(workload.columns()), width);
  auto exact_set = op.baseline(width);
  auto scatter = op.scatter(width);

  Kokkos::View<Ordinal *, memory_space> cols("cols", k);
  Kokkos::View<Scalar **, DxLayout, memory_space> dx("dx", k, width);
  auto cols_host = Kokkos::create_mirror_view(cols);
  auto dx_host = Kokkos::create_mirror_view(dx);
  Kokkos::View<Scalar **, YLayout, memory_space> y_scheduled("y", t.n_rows, width),
      y_exact("y", t.n_rows, width), y_scatter("y", t.n_rows, width);
  std::vector<Scalar> x(std::size_t(t.n_cols) * width, 0.0);

  for (int step = 0; step < steps; ++step)
  {
    // The caller refills the same Views each step.
    for (std::size_t i = 0; i < k; ++i)
    {
      cols_host(i) = workload.columns()[i];
      for (int b = 0; b < width; ++b)
      {
        dx_host(i, b) = workload.dx()[i * width + b];
        x[std::size_t(cols_host(i)) * width + b] += dx_host(i, b);
      }
    }
    Kokkos::deep_copy(space, cols, cols_host);
    Kokkos::deep_copy(space, dx, dx_host);
    scheduled.apply_cols(space, cols, dx, y_scheduled);
    exact_set.apply_cols(space, cols, dx, y_exact);
    scatter.apply_cols(space, cols, dx, y_scatter);
    space.fence();
    workload.advance();
  }

  return {to_host_rows(y_scheduled), to_host_rows(y_exact), to_host_rows(y_scatter),
          full_recompute(A, x, width)};
}

TYPED_TEST(Arms, agree_with_full_recompute_after_200_steps)
{
  using ExecutionSpace = TypeParam;
  for (auto const &c : operator_cases())
    for (Motion motion : {Motion::drift, Motion::jump, Motion::frozen})
    {
      SCOPED_TRACE(c.name + " " + hst::workload::to_string(motion));
      hst::workload::WorkloadOptions w;
      w.motion = motion;
      w.churn = 0.05;
      w.seed = 3;
      auto const out =
          run_workload<ExecutionSpace, Kokkos::LayoutRight, Kokkos::LayoutRight>(c.A, w,
                                                                                 200);
      EXPECT_LE(relative_error(out.scheduled, out.full), 1e-13);
      EXPECT_LE(relative_error(out.exact_set, out.full), 1e-13);
      EXPECT_LE(relative_error(out.scatter, out.full), 1e-13);
    }
}

TYPED_TEST(Arms, layouts_and_batch_widths)
{
  using ExecutionSpace = TypeParam;
  auto const t = hst::workload::grid_2d<Scalar, Ordinal>(40, 40);
  for (int width : {1, 2, 8, 13, 16})
  {
    SCOPED_TRACE("B = " + std::to_string(width));
    hst::workload::WorkloadOptions w;
    w.width = width;
    w.churn = 0.1;
    auto const left =
        run_workload<ExecutionSpace, Kokkos::LayoutLeft, Kokkos::LayoutLeft>(t, w, 40);
    auto const mixed =
        run_workload<ExecutionSpace, Kokkos::LayoutRight, Kokkos::LayoutLeft>(t, w, 40);
    for (auto const *out : {&left, &mixed})
    {
      EXPECT_LE(relative_error(out->scheduled, out->full), 1e-13);
      EXPECT_LE(relative_error(out->exact_set, out->full), 1e-13);
      EXPECT_LE(relative_error(out->scatter, out->full), 1e-13);
    }
  }
}

TYPED_TEST(Arms, results_are_bitwise_reproducible)
{
  using ExecutionSpace = TypeParam;
  auto const t =
      hst::workload::shuffled(hst::workload::grid_2d<Scalar, Ordinal>(50, 50), 2);
  hst::workload::WorkloadOptions w;
  w.churn = 0.05;
  auto const first =
      run_workload<ExecutionSpace, Kokkos::LayoutRight, Kokkos::LayoutRight>(t, w, 100);
  auto const second =
      run_workload<ExecutionSpace, Kokkos::LayoutRight, Kokkos::LayoutRight>(t, w, 100);
  auto const &same = same_bits;
  EXPECT_TRUE(same(first.exact_set, second.exact_set));
  // On devices the scheduled and scatter kernels add atomically: the order of
  // a row's terms, hence its last bits, may differ between runs.
  if constexpr (hst::detail::is_synchronous_host_space<ExecutionSpace>)
  {
    EXPECT_TRUE(same(first.scheduled, second.scheduled));
    EXPECT_TRUE(same(first.scatter, second.scatter));
  }
}

// Host backends: every arm's sums are the same bits whether a step runs on all
// threads or on the calling thread alone (devices add atomically in the
// scheduled and scatter arms). Large steps (churn 0.25, B = 8 and B = 5), so
// that each thread gets work.
TYPED_TEST(Arms, sums_do_not_depend_on_the_thread_count)
{
  using ExecutionSpace = TypeParam;
  if constexpr (!hst::detail::is_synchronous_host_space<ExecutionSpace>)
    GTEST_SKIP() << "device kernels add atomically";
  else
  {
    std::printf("concurrency %d\n", hst::kokkos_ext::concurrency(ExecutionSpace{}));
    for (auto const &c : operator_cases())
      for (int width : {8, 5})
      {
        SCOPED_TRACE(c.name + " B = " + std::to_string(width));
        hst::workload::WorkloadOptions w;
        w.width = width;
        w.churn = 0.25;
        w.k = std::max<std::int64_t>(8, std::int64_t(c.A.n_cols) / 5);
        auto const parallel =
            run_workload<ExecutionSpace, Kokkos::LayoutRight, Kokkos::LayoutLeft>(
                c.A, w, 30, every_step_parallel());
        auto const one_thread =
            run_workload<ExecutionSpace, Kokkos::LayoutRight, Kokkos::LayoutLeft>(
                c.A, w, 30, every_step_on_one_thread());
        EXPECT_TRUE(same_bits(parallel.scheduled, one_thread.scheduled));
        EXPECT_TRUE(same_bits(parallel.exact_set, one_thread.exact_set));
        EXPECT_TRUE(same_bits(parallel.scatter, one_thread.scatter));
        EXPECT_LE(relative_error(parallel.scatter, parallel.full), 1e-13);
      }
  }
}

// Which y the host kernels add to one column at a time: LayoutLeft (or
// strided) with columns a multiple of 64 KiB apart, B > 1.
TEST(ColumnsCollide, only_columns_a_multiple_of_64_KiB_apart)
{
  using hst::detail::columns_collide;
  using Left = Kokkos::View<Scalar **, Kokkos::LayoutLeft, Kokkos::HostSpace>;
  using Right = Kokkos::View<Scalar **, Kokkos::LayoutRight, Kokkos::HostSpace>;
  EXPECT_TRUE(columns_collide(Left("y", 8192, 8)));
  EXPECT_TRUE(columns_collide(Left("y", 8192, 2)));
  EXPECT_TRUE(columns_collide(Left("y", 3 * 8192, 5)));
  EXPECT_TRUE(columns_collide(Left("y", 1 << 17, 2)));
  EXPECT_FALSE(columns_collide(Left("y", 8191, 8)));
  EXPECT_FALSE(columns_collide(Left("y", 4096, 8))); // 32 KiB apart
  EXPECT_FALSE(columns_collide(Left("y", 1000000, 8)));
  EXPECT_FALSE(columns_collide(Left("y", 8192, 1)));
  EXPECT_FALSE(columns_collide(Right("y", 8192, 8)));
}

// Host backends: the layout of y does not change the sums. A LayoutLeft y
// whose columns collide (row counts that are multiples of 8192) is added
// one column at a time, any other y row-wise; each y(r, b) gets the same
// terms in the same order, so the bits agree, on all threads and on one (the
// LayoutRight run's on all threads: see sums_do_not_depend_on_the_thread_count).
// Widths 8 and 13 (known and generic B; B = 1 never collides).
TYPED_TEST(Arms, sums_do_not_depend_on_the_layout_of_y)
{
  using ExecutionSpace = TypeParam;
  if constexpr (!hst::detail::is_synchronous_host_space<ExecutionSpace>)
    GTEST_SKIP() << "device kernels add atomically";
  else
  {
    using namespace hst::workload;
    struct LayoutCase
    {
      Case c;
      std::int64_t k;
    };
    std::vector<LayoutCase> const cases = {
        // long columns: several runs per row block and per scatter run
        {{"rectangular_8192x600", rectangular_band<Scalar, Ordinal>(8192, 600, 3)}, 200},
        // columns of one or two entries: scatter runs end at 64 columns
        {{"rectangular_8192x6000", rectangular_band<Scalar, Ordinal>(8192, 6000, 0)},
         300},
        {{"grid_2d_60x60 (row-wise)", grid_2d<Scalar, Ordinal>(60, 60)}, 1200}};
    for (auto const &[c, k] : cases)
      for (int width : {8, 13})
      {
        hst::workload::WorkloadOptions w;
        w.width = width;
        w.churn = 0.25;
        w.k = k;
        auto const right =
            run_workload<ExecutionSpace, Kokkos::LayoutRight, Kokkos::LayoutRight>(c.A, w,
                                                                                   3);
        for (auto const &options : {every_step_parallel(), every_step_on_one_thread()})
        {
          SCOPED_TRACE(c.name + " B = " + std::to_string(width) +
                       (options.min_parallel_work == 0 ? " parallel" : " one thread"));
          auto const left =
              run_workload<ExecutionSpace, Kokkos::LayoutRight, Kokkos::LayoutLeft>(
                  c.A, w, 3, options);
          EXPECT_TRUE(same_bits(left.scheduled, right.scheduled));
          EXPECT_TRUE(same_bits(left.exact_set, right.exact_set));
          EXPECT_TRUE(same_bits(left.scatter, right.scatter));
          EXPECT_LE(relative_error(left.scheduled, left.full), 1e-13);
          EXPECT_LE(relative_error(left.scatter, left.full), 1e-13);
        }
      }
  }
}

} // namespace
