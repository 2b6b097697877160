// Focused kernel micro-benchmark: the three arms on one 2D 5-point grid
// workload (drift by default), y in LayoutLeft or LayoutRight, natural or
// shuffled numbering. Each repetition runs every arm over the same staged
// steps (arm order rotates per repetition), so arms are compared as ratios
// within one run; prints the median us/step of each arm and the median of the
// per-repetition ratios to the scatter arm.
//
//   bench_kernels [--side 316] [--shuffled 0|1] [--layout left|right]
//                 [--k 300] [--churn 0.01] [--motion drift|jump|frozen]
//                 [--steps 200] [--untimed 1] [--reps 7]
//                 [--arms scatter,exact,scheduled,adaptive,full]
//                 [--min-parallel-work N]
//
// An arm name with the suffix "@1" (scatter@1, exact@1, scheduled@1) runs
// that arm on a second operator whose steps all run on the calling thread:
// on OpenMP, the same process's one-thread baseline, interleaved with the
// parallel arms in the same repetitions.
//
// --min-parallel-work sets OperatorOptions::min_parallel_work (on OpenMP:
// 0 makes every step a parallel launch, a huge value runs every step on the
// calling thread). Steps 0 .. untimed-1 run first, untimed (step 0: an arm's first
// compile); the rest are timed. The adaptive arm is the session settled: no periodic
// re-check, and its step-time samples (taken, as their cost is part of the
// settled step) never re-probe; with --untimed 100 its probe is outside the
// timed steps, and it prints the arm it chose.
//
// Under callgrind, run one arm with --reps 1 and
//   valgrind --tool=callgrind --collect-atstart=no
//            --toggle-collect='*timed_steps*' bench_kernels --arms scheduled
// to count only the timed steps (planning and kernels, not setup); with
// --arms adaptive --untimed 100 and then the arm it chose, the difference is
// what the settled session adds, in instructions.

#include <hst/HST.hpp>

#include <KokkosSparse_spmv.hpp>
#include <Kokkos_Core.hpp>
#include <Kokkos_Timer.hpp>

#include "Harness.hpp" // first: it includes KokkosSparse_spmv.hpp (see there)
#include <workload/Check.hpp>
#include <workload/Generators.hpp>
#include <workload/Workload.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace
{

using hst::bench::ExecutionSpace;
using hst::bench::Matrix;
using hst::bench::median;
using hst::bench::MemorySpace;
using hst::bench::Ordinal;
using hst::bench::Scalar;
constexpr int width = 8;

struct Args
{
  int side = 316;
  bool shuffled = false;
  bool right = false;
  long k = 300;
  double churn = 0.01;
  std::string motion = "drift";
  int steps = 200;
  int untimed = 1;
  int reps = 7;
  std::string arms = "scatter,exact,scheduled";
  std::int64_t min_parallel_work = hst::OperatorOptions{}.min_parallel_work;
};

Args parse(int argc, char **argv)
{
  Args a;
  for (int i = 1; i + 1 < argc; i += 2)
  {
    std::string const key = argv[i], value = argv[i + 1];
    if (key == "--side")
      a.side = std::atoi(value.c_str());
    else if (key == "--shuffled")
      a.shuffled = value == "1";
    else if (key == "--layout")
      a.right = value == "right";
    else if (key == "--k")
      a.k = std::atol(value.c_str());
    else if (key == "--churn")
      a.churn = std::atof(value.c_str());
    else if (key == "--motion")
    {
      if (!hst::workload::motion_named(value))
      {
        std::fprintf(stderr, "--motion: unknown motion '%s' (drift, jump, frozen)\n",
                     value.c_str());
        std::exit(2);
      }
      a.motion = value;
    }
    else if (key == "--steps")
      a.steps = std::atoi(value.c_str());
    else if (key == "--untimed")
      a.untimed = std::atoi(value.c_str());
    else if (key == "--reps")
      a.reps = std::atoi(value.c_str());
    else if (key == "--arms")
      a.arms = value;
    else if (key == "--min-parallel-work")
      a.min_parallel_work = std::atoll(value.c_str());
    else
    {
      std::fprintf(stderr, "unknown argument %s\n", key.c_str());
      std::exit(2);
    }
  }
  if (a.untimed < 1 || a.untimed >= a.steps)
  {
    std::fprintf(stderr, "--untimed must lie in [1, steps)\n");
    std::exit(2);
  }
  return a;
}

template <class Layout>
struct Run
{
  using Y = Kokkos::View<Scalar **, Layout, MemorySpace>;
  Matrix A;
  hst::Operator<Scalar, Ordinal, MemorySpace> op;
  Kokkos::View<Ordinal **, Kokkos::LayoutRight, MemorySpace> cols;
  Kokkos::View<Scalar ***, Kokkos::LayoutRight, MemorySpace> dx;
  Kokkos::View<Scalar **, Kokkos::LayoutLeft, MemorySpace> y_full;
  int steps;
  int first; // the first timed step

  auto step_cols(int s) const { return Kokkos::subview(cols, s, Kokkos::ALL); }
  auto step_dx(int s) const { return Kokkos::subview(dx, s, Kokkos::ALL, Kokkos::ALL); }
};

// Only the timed steps: what callgrind's --toggle-collect selects.
template <class Arm, class R, class Y>
[[gnu::noinline]] double timed_steps(Arm &arm, R const &run, Y const &y)
{
  ExecutionSpace space;
  space.fence();
  Kokkos::Timer timer;
  for (int s = run.first; s < run.steps; ++s)
    arm.apply_cols(space, run.step_cols(s), run.step_dx(s), y);
  space.fence();
  return timer.seconds();
}

// Full recompute for reference: accumulate dx into x, y = A x.
template <class R, class X, class Y>
[[gnu::noinline]] double timed_steps_full(R const &run, X const &x, Y const &y)
{
  ExecutionSpace space;
  space.fence();
  Kokkos::Timer timer;
  for (int s = run.first; s < run.steps; ++s)
  {
    auto const c = run.step_cols(s);
    auto const d = run.step_dx(s);
    Kokkos::parallel_for(
        "bench::accumulate_x", Kokkos::RangePolicy<ExecutionSpace>(space, 0, c.extent(0)),
        KOKKOS_LAMBDA(int i) {
          for (int b = 0; b < width; ++b)
            x(c(i), b) += d(i, b);
        });
    KokkosSparse::spmv("N", 1.0, run.A, x, 0.0, y);
  }
  space.fence();
  return timer.seconds();
}

template <class Layout>
int run_all(Args const &a)
{
  using R = Run<Layout>;
  using Y = typename R::Y;
  auto grid = hst::workload::grid_2d<Scalar, Ordinal>(a.side, a.side);
  auto A = hst::workload::to_crs<Matrix>(a.shuffled ? hst::workload::shuffled(grid, 42)
                                                    : grid);
  hst::workload::WorkloadOptions w;
  w.churn = a.churn;
  w.k = a.k;
  w.width = width;
  w.motion = *hst::workload::motion_named(a.motion); // checked by parse()
  hst::workload::Workload<Scalar, Ordinal> workload(A, w);
  auto const k = workload.columns().size();
  Kokkos::View<Ordinal **, Kokkos::LayoutRight, MemorySpace> cols("cols", a.steps, k);
  Kokkos::View<Scalar ***, Kokkos::LayoutRight, MemorySpace> dx("dx", a.steps, k, width);
  auto cols_host = Kokkos::create_mirror_view(cols);
  auto dx_host = Kokkos::create_mirror_view(dx);
  // The reference in LayoutLeft (Kokkos Kernels 3.4's LayoutRight spmv warns).
  Kokkos::View<Scalar **, Kokkos::LayoutLeft, MemorySpace> x("x", A.numCols(), width);
  Kokkos::View<Scalar **, Kokkos::LayoutLeft, MemorySpace> y_full("y_full", A.numRows(),
                                                                  width);
  auto x_host = Kokkos::create_mirror_view(x);
  for (int s = 0; s < a.steps; ++s, workload.advance())
    for (std::size_t i = 0; i < k; ++i)
    {
      cols_host(s, i) = workload.columns()[i];
      for (int b = 0; b < width; ++b)
      {
        dx_host(s, i, b) = workload.dx()[i * width + b];
        if (s >= a.untimed)
          x_host(cols_host(s, i), b) += dx_host(s, i, b);
      }
    }
  Kokkos::deep_copy(cols, cols_host);
  Kokkos::deep_copy(dx, dx_host);
  Kokkos::deep_copy(x, x_host);
  KokkosSparse::spmv("N", 1.0, A, x, 0.0, y_full);
  hst::OperatorOptions options;
  options.min_parallel_work = a.min_parallel_work;
  hst::Operator<Scalar, Ordinal, MemorySpace> op(A, options);
  R run{A, std::move(op), cols, dx, y_full, a.steps, a.untimed};
  hst::OperatorOptions one_thread_options;
  one_thread_options.min_parallel_work = std::numeric_limits<std::int64_t>::max();
  std::optional<hst::Operator<Scalar, Ordinal, MemorySpace>> op_one_thread;
  if (a.arms.find("@1") != std::string::npos)
    op_one_thread.emplace(A, one_thread_options);
  // Steps 0 .. untimed-1 of an arm, then y = 0: what the timed steps follow.
  auto untimed_steps = [&](auto &arm, Y const &y) {
    for (int s = 0; s < a.untimed; ++s)
      arm.apply_cols(run.step_cols(s), run.step_dx(s), y);
    Kokkos::deep_copy(y, 0.0);
  };

  std::vector<std::string> names;
  {
    std::stringstream list(a.arms);
    for (std::string name; std::getline(list, name, ',');)
      names.push_back(name);
  }
  std::map<std::string, std::vector<double>> us;
  Y y("y", A.numRows(), width);
  Kokkos::View<Scalar **, Layout, MemorySpace> x_full("x_full", A.numCols(), width);
  double worst = 0;
  for (int rep = 0; rep < a.reps; ++rep)
    for (std::size_t j = 0; j < names.size(); ++j)
    {
      auto const &label = names[(j + rep) % names.size()];
      bool const one_thread = label.size() > 2 && label.substr(label.size() - 2) == "@1";
      auto const name = one_thread ? label.substr(0, label.size() - 2) : label;
      auto &op = one_thread ? *op_one_thread : run.op;
      Kokkos::deep_copy(y, 0.0);
      double seconds = 0;
      if (name == "scatter")
      {
        auto arm = op.scatter(width);
        untimed_steps(arm, y);
        seconds = timed_steps(arm, run, y);
        if (rep == 0 && !one_thread)
          std::printf("work items, scatter: %zu columns (host: 1 per column on one "
                      "thread, 1 row range per thread in parallel); device kernel: %zu "
                      "teams, threads over each column's entries x %d lanes\n",
                      run.cols.extent(1), run.cols.extent(1),
                      hst::detail::vector_lanes(width));
      }
      else if (name == "exact")
      {
        auto arm = op.baseline(width);
        untimed_steps(arm, y);
        seconds = timed_steps(arm, run, y);
        if (rep == 0 && !one_thread)
          std::printf("work items, exact set: %lld touched rows (%lld entries); device "
                      "kernel: %lld teams of 32 rows x %d lanes\n",
                      (long long)arm.touched_rows(), (long long)arm.entries(),
                      (long long)(arm.touched_rows() + 31) / 32,
                      hst::detail::vector_lanes(width));
      }
      else if (name == "adaptive")
      {
        hst::AdaptiveOptions o;
        o.recheck_period = 0;
        o.time_shift_ratio = 1e9;
        auto arm = op.adaptive(run.step_cols(0), width, o);
        untimed_steps(arm, y);
        seconds = timed_steps(arm, run, y);
        auto const &r = arm.report();
        bool const probed_timed = r.probing || r.decisions.empty() ||
                                  r.decisions.back().probe_start >= a.untimed;
        if (rep == 0)
          std::printf("adaptive: active %s, %zu decision(s)%s\n",
                      hst::to_string(arm.active()), r.decisions.size(),
                      probed_timed ? " (it probed in the timed steps)" : "");
      }
      else if (name == "scheduled")
      {
        auto arm = op.session(run.step_cols(0), width);
        untimed_steps(arm, y);
        seconds = timed_steps(arm, run, y);
        auto const &st = arm.stats();
        if (rep == 0)
          std::printf("scheduled: %lld replans, %lld tiles compiled, %lld retired; now "
                      "%lld column tiles, %lld tiles, %lld row blocks (k = %zu)\n",
                      (long long)st.replans, (long long)st.tiles_compiled,
                      (long long)st.tiles_retired, (long long)st.column_tiles,
                      (long long)st.tiles, (long long)st.row_blocks, run.cols.extent(1));
        if (rep == 0 && !one_thread)
          std::printf("work items, scheduled: %lld row blocks, %lld pieces (%lld "
                      "entries); device kernel: >= %lld teams of <= 32 pieces, "
                      "threads over pieces x %d lanes\n",
                      (long long)st.row_blocks, (long long)st.pieces,
                      (long long)st.entries,
                      (long long)std::max(st.row_blocks, (st.pieces + 31) / 32),
                      hst::detail::vector_lanes(width));
      }
      else if (name == "full" && std::is_same_v<Layout, Kokkos::LayoutLeft>)
      {
        if constexpr (std::is_same_v<Layout, Kokkos::LayoutLeft>)
        {
          Kokkos::deep_copy(x_full, 0.0);
          seconds = timed_steps_full(run, x_full, y);
        }
      }
      else
      {
        std::fprintf(stderr, "unknown arm %s\n", name.c_str());
        return 2;
      }
      worst = std::max(worst, hst::workload::relative_difference(y, y_full));
      us[label].push_back(1e6 * seconds / (a.steps - a.untimed));
    }

  std::printf("grid %dx%d %s y=%s k=%zu churn=%g %s steps=%d (timed from %d) reps=%d "
              "max_rel_diff=%.2e %s concurrency=%d min_parallel_work=%lld\n",
              a.side, a.side, a.shuffled ? "shuffled" : "natural",
              a.right ? "LayoutRight" : "LayoutLeft", k, a.churn, a.motion.c_str(),
              a.steps, a.untimed, a.reps, worst, ExecutionSpace::name(),
              hst::kokkos_ext::concurrency(ExecutionSpace{}),
              static_cast<long long>(a.min_parallel_work));
  for (auto const &name : names)
  {
    std::vector<double> ratio;
    if (us.count("scatter"))
      for (int rep = 0; rep < a.reps; ++rep)
        ratio.push_back(us[name][rep] / us["scatter"][rep]);
    std::printf("  %-12s median %9.2f us/step  min %9.2f", name.c_str(), median(us[name]),
                *std::min_element(us[name].begin(), us[name].end()));
    if (!ratio.empty())
      std::printf("  /scatter %.3f", median(ratio));
    std::printf("\n");
  }
  return worst <= 1e-12 ? 0 : 1;
}

} // namespace

int main(int argc, char *argv[])
{
  Kokkos::ScopeGuard kokkos(argc, argv);
  Args const a = parse(argc, argv);
  return a.right ? run_all<Kokkos::LayoutRight>(a) : run_all<Kokkos::LayoutLeft>(a);
}
