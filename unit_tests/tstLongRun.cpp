// Long runs (ctest label "long"): 1e5 steps of drift and of jump through every
// arm, y checked against a full recompute (KokkosSparse::spmv of A x) every
// 1e4 steps; the scheduled arm's retirement keeps its tiles and its memory
// bounded; hst::resync restores y = A x. Steps: HST_LONG_STEPS (default 1e5).

#include "HSTTestHelpers.hpp"
#include <workload/Check.hpp>
#include <workload/Workload.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace
{

using namespace hst_test;
using ExecutionSpace = Kokkos::DefaultExecutionSpace;
using memory_space = ExecutionSpace::memory_space;
using MultiVector = Kokkos::View<Scalar **, Kokkos::LayoutLeft, memory_space>;
using hst::workload::Motion;

int long_steps()
{
  char const *env = std::getenv("HST_LONG_STEPS");
  return env ? std::max(1, std::atoi(env)) : 100000;
}

// The caller's side of a run: the workload, x = sum of all dx, the Views
// refilled every step.
struct Driver
{
  Matrix<ExecutionSpace> A;
  hst::workload::Workload<Scalar, Ordinal> workload;
  int width;
  Kokkos::View<Ordinal *, memory_space> cols;
  MultiVector dx, x;
  typename Kokkos::View<Ordinal *, memory_space>::HostMirror cols_host;
  typename MultiVector::HostMirror dx_host, x_host;

  Driver(Matrix<ExecutionSpace> const &A_, hst::workload::WorkloadOptions const &w)
      : A(A_)
      , workload(A_, w)
      , width(w.width)
      , cols("hst_test::cols", workload.columns().size())
      , dx("hst_test::dx", workload.columns().size(), w.width)
      , x("hst_test::x", A_.numCols(), w.width)
      , cols_host(Kokkos::create_mirror_view(cols))
      , dx_host(Kokkos::create_mirror_view(dx))
      , x_host(Kokkos::create_mirror_view(x))
  {}

  // Stages the current step's cols and dx and adds dx to x (on the host).
  void stage(ExecutionSpace const &space)
  {
    for (std::size_t i = 0; i < cols.extent(0); ++i)
    {
      cols_host(i) = workload.columns()[i];
      for (int b = 0; b < width; ++b)
      {
        dx_host(i, b) = workload.dx()[i * std::size_t(width) + std::size_t(b)];
        x_host(std::size_t(cols_host(i)), b) += dx_host(i, b);
      }
    }
    Kokkos::deep_copy(space, cols, cols_host);
    Kokkos::deep_copy(space, dx, dx_host);
  }

  // A x by KokkosSparse::spmv from the full x.
  MultiVector recompute(ExecutionSpace const &space)
  {
    Kokkos::deep_copy(space, x, x_host);
    MultiVector y("hst_test::y_full", A.numRows(), width);
    space.fence(); // spmv runs on the default instance (Kokkos Kernels 3.4)
    KokkosSparse::spmv("N", 1.0, A, x, 0.0, y);
    Kokkos::fence();
    return y;
  }
};

hst::workload::WorkloadOptions options(Motion motion)
{
  hst::workload::WorkloadOptions w;
  w.motion = motion;
  w.churn = 0.05;
  w.width = 8;
  w.seed = motion == Motion::drift ? 11 : 12;
  return w;
}

void long_run(Motion motion)
{
  ExecutionSpace space;
  int const steps = long_steps();
  int const check_every = std::max(1, std::min(10000, steps / 10));
  auto const A =
      to_matrix<ExecutionSpace>(hst::workload::grid_2d<Scalar, Ordinal>(100, 100));
  Driver d(A, options(motion));
  int const width = d.width;
  auto const k = std::int64_t(d.cols.extent(0));
  hst::Operator op(A);
  auto expected = to_view<memory_space>(d.workload.columns());
  auto scheduled = op.session(expected, width);
  auto exact_set = op.baseline(width);
  auto scatter = op.scatter(width);
  auto adaptive = op.adaptive(expected, width);
  std::vector<std::string> const names = {"scheduled", "exact_set", "scatter",
                                          "adaptive"};
  std::vector<MultiVector> y;
  for (auto const &name : names)
    y.emplace_back("hst_test::y_" + name, A.numRows(), width);

  // Retirement: a column tile holds a column of the set or was used within
  // the last retire_after steps, and at most ceil(churn k) columns enter per
  // step, so the schedule never holds more column tiles than this.
  auto const retire_after = std::int64_t(scheduled.options().retire_after);
  auto const entering = std::int64_t(std::ceil(options(motion).churn * double(k)));
  std::int64_t const tile_bound = k + (retire_after + 1) * entering;
  ASSERT_LT(tile_bound, std::int64_t(op.tile_stats().column_tiles))
      << "the bound must be below what a schedule without retirement reaches";
  std::int64_t max_tiles = 0;
  std::size_t early_bytes = 0, late_bytes = 0;
  double worst = 0;

  for (int step = 1; step <= steps; ++step, d.workload.advance())
  {
    d.stage(space);
    scheduled.apply_cols(space, d.cols, d.dx, y[0]);
    exact_set.apply_cols(space, d.cols, d.dx, y[1]);
    scatter.apply_cols(space, d.cols, d.dx, y[2]);
    adaptive.apply_cols(space, d.cols, d.dx, y[3]);
    space.fence(); // the host refills cols and dx next step

    max_tiles = std::max(max_tiles, scheduled.stats().column_tiles);
    auto const bytes = scheduled.memory().schedule;
    (step <= check_every ? early_bytes : late_bytes) =
        std::max(step <= check_every ? early_bytes : late_bytes, bytes);
    if (step % check_every == 0 || step == steps)
    {
      auto const reference = d.recompute(space);
      for (std::size_t a = 0; a < y.size(); ++a)
      {
        double const error = hst::workload::relative_difference(y[a], reference);
        worst = std::max(worst, error);
        ASSERT_LE(error, 1e-12) << names[a] << " at step " << step;
      }
    }
  }
  auto const memory = scheduled.memory();
  std::printf(
      "%s, %d steps, k = %lld, column tiles %lld: worst relative difference %.3e; "
      "scheduled arm: at most %lld column tiles scheduled (bound %lld), %lld retired; "
      "schedule bytes max %zu in the first %d steps, %zu after; row-block bytes %zu\n",
      motion == Motion::drift ? "drift" : "jump", steps, (long long)k,
      (long long)op.tile_stats().column_tiles, worst, (long long)max_tiles,
      (long long)tile_bound, (long long)scheduled.stats().tiles_retired, early_bytes,
      check_every, late_bytes, memory.row_blocks);
  EXPECT_LE(max_tiles, tile_bound);
  if (steps > check_every)
  {
    EXPECT_GT(scheduled.stats().tiles_retired, 0);
    // No growth over the run: the schedule holds by the end no more than a
    // quarter above the most it held over the first check_every steps.
    EXPECT_LE(double(late_bytes), 1.25 * double(early_bytes));
  }
}

TEST(LongRun, drift_every_arm_within_1e_12_of_recompute_memory_bounded)
{
  long_run(Motion::drift);
}

TEST(LongRun, jump_every_arm_within_1e_12_of_recompute_memory_bounded)
{
  long_run(Motion::jump);
}

TEST(Resync, sets_y_to_A_x_and_later_steps_continue_from_it)
{
  ExecutionSpace space;
  auto const A =
      to_matrix<ExecutionSpace>(hst::workload::circuit<Scalar, Ordinal>(3000, 5));
  Driver d(A, options(Motion::drift));
  hst::Operator op(A);
  auto session = op.session(to_view<memory_space>(d.workload.columns()), d.width);
  MultiVector y("hst_test::y", A.numRows(), d.width);
  // A y that is wrong everywhere: resync must overwrite all of it.
  Kokkos::deep_copy(y, 1e3);
  for (int step = 0; step < 50; ++step, d.workload.advance())
  {
    d.stage(space);
    session.apply_cols(space, d.cols, d.dx, y);
    space.fence();
  }
  EXPECT_GT(hst::workload::relative_difference(y, d.recompute(space)), 1e-3);
  Kokkos::deep_copy(space, d.x, d.x_host);
  hst::resync(space, A, d.x, y);
  space.fence();
  EXPECT_LE(hst::workload::relative_difference(y, d.recompute(space)), 1e-15);
  for (int step = 0; step < 50; ++step, d.workload.advance())
  {
    d.stage(space);
    session.apply_cols(space, d.cols, d.dx, y);
    space.fence();
  }
  EXPECT_LE(hst::workload::relative_difference(y, d.recompute(space)), 1e-14);
  // LayoutRight x and y, default instance.
  Kokkos::View<Scalar **, Kokkos::LayoutRight, memory_space> x_right(
      "hst_test::x_right", A.numCols(), d.width),
      y_right("hst_test::y_right", A.numRows(), d.width);
  Kokkos::deep_copy(x_right, d.x);
  hst::resync(A, x_right, y_right);
  Kokkos::fence();
  EXPECT_LE(hst::workload::relative_difference(y_right, d.recompute(space)), 1e-15);
}

TEST(Resync, bad_extents_throw_naming_the_argument_and_leave_y_untouched)
{
  auto const A = to_matrix<ExecutionSpace>(hst::workload::grid_2d<Scalar, Ordinal>(7, 5));
  MultiVector x("hst_test::x", A.numCols(), 4), y("hst_test::y", A.numRows(), 4);
  Kokkos::deep_copy(x, 1.0);
  Kokkos::deep_copy(y, 7.0);
  MultiVector short_x("hst_test::x", A.numCols() - 1, 4), short_y("hst_test::y", 3, 4),
      narrow_y("hst_test::y", A.numRows(), 3);
  expect_invalid([&] { hst::resync(A, short_x, y); }, {"hst::resync", "'x'", "34 rows"});
  expect_invalid([&] { hst::resync(A, x, short_y); }, {"hst::resync", "'y'", "3 rows"});
  expect_invalid([&] { hst::resync(A, x, narrow_y); },
                 {"hst::resync", "'y'", "3 columns"});
  auto const host = to_host_rows(y);
  EXPECT_TRUE(std::all_of(host.begin(), host.end(), [](Scalar v) { return v == 7.0; }));
}

} // namespace
