// The ladder on a naturally numbered and a shuffled (badly numbered) 2D mesh:
// full recompute (KokkosSparse::spmv), direct scatter, exact set, scheduled.
// One benchmark iteration runs a whole 200-step drift workload; us_per_step is
// the counter to read. Each arm's answer is checked against the full
// recompute on the first iteration.
//
//   bench_ladder [--benchmark_out=ladder.json --benchmark_out_format=json]

#include <hst/HST.hpp>
#include <hst/workload/Check.hpp>
#include <hst/workload/Generators.hpp>
#include <hst/workload/Workload.hpp>

#include <KokkosSparse_spmv.hpp>
#include <Kokkos_Core.hpp>
#include <Kokkos_Timer.hpp>

#include <benchmark/benchmark.h>

#include <cmath>
#include <map>
#include <memory>
#include <string>

namespace
{

using Scalar = double;
using Ordinal = int;
using ExecutionSpace = Kokkos::DefaultExecutionSpace;
using MemorySpace = ExecutionSpace::memory_space;
using Matrix = KokkosSparse::CrsMatrix<Scalar, Ordinal, ExecutionSpace>;
using MultiVector = Kokkos::View<Scalar **, Kokkos::LayoutLeft, MemorySpace>;
constexpr int width = 8;
constexpr int steps = 200;

// One operator with its workload staged on the device and the full
// recompute's answer.
struct Problem
{
  Matrix A;
  hst::Operator<Scalar, Ordinal, MemorySpace> op;
  Kokkos::View<Ordinal **, Kokkos::LayoutRight, MemorySpace> cols;
  Kokkos::View<Scalar ***, Kokkos::LayoutRight, MemorySpace> dx;
  MultiVector y_full;

  auto step_cols(int s) const { return Kokkos::subview(cols, s, Kokkos::ALL); }
  auto step_dx(int s) const { return Kokkos::subview(dx, s, Kokkos::ALL, Kokkos::ALL); }
};

Problem make_problem(hst::workload::Triplets<Scalar, Ordinal> const &t)
{
  auto A = hst::workload::to_crs<Matrix>(t);
  hst::workload::WorkloadOptions w;
  w.churn = 0.01;
  w.width = width;
  hst::workload::Workload<Scalar, Ordinal> workload(A, w);
  auto const k = workload.columns().size();
  Kokkos::View<Ordinal **, Kokkos::LayoutRight, MemorySpace> cols("cols", steps, k);
  Kokkos::View<Scalar ***, Kokkos::LayoutRight, MemorySpace> dx("dx", steps, k, width);
  auto cols_host = Kokkos::create_mirror_view(cols);
  auto dx_host = Kokkos::create_mirror_view(dx);
  MultiVector x("x", A.numCols(), width), y_full("y_full", A.numRows(), width);
  auto x_host = Kokkos::create_mirror_view(x);
  for (int s = 0; s < steps; ++s, workload.advance())
    for (std::size_t i = 0; i < k; ++i)
    {
      cols_host(s, i) = workload.columns()[i];
      for (int b = 0; b < width; ++b)
      {
        dx_host(s, i, b) = workload.dx()[i * width + b];
        x_host(cols_host(s, i), b) += dx_host(s, i, b);
      }
    }
  Kokkos::deep_copy(cols, cols_host);
  Kokkos::deep_copy(dx, dx_host);
  Kokkos::deep_copy(x, x_host);
  KokkosSparse::spmv("N", 1.0, A, x, 0.0, y_full);
  hst::Operator op(A);
  return {A, std::move(op), cols, dx, y_full};
}

// Built on first use, released before Kokkos is finalized.
std::map<std::string, std::unique_ptr<Problem>> problems;

Problem const &problem(std::string const &name)
{
  auto &slot = problems[name];
  if (!slot)
  {
    auto grid = hst::workload::grid_2d<Scalar, Ordinal>(316, 316);
    slot = std::make_unique<Problem>(
        make_problem(name == "grid_2d" ? grid : hst::workload::shuffled(grid, 42)));
  }
  return *slot;
}

// Runs `step(s, y)` for every step of the workload per iteration; checks y
// against the full recompute after the first.
template <class Step>
void run_steps(benchmark::State &state, Problem const &p, Step &&step)
{
  ExecutionSpace space;
  MultiVector y("y", p.A.numRows(), width);
  bool checked = false;
  double seconds = 0;
  for (auto _ : state)
  {
    Kokkos::deep_copy(space, y, 0.0);
    space.fence();
    Kokkos::Timer timer;
    for (int s = 0; s < steps; ++s)
      step(space, s, y);
    space.fence();
    double const elapsed = timer.seconds();
    seconds += elapsed;
    state.SetIterationTime(elapsed);
    if (!checked)
    {
      checked = true;
      double const error = hst::workload::relative_difference(y, p.y_full);
      state.counters["rel_error"] = error;
      if (!(error <= 1e-12))
        state.SkipWithError("answer differs from the full recompute");
    }
  }
  state.counters["us_per_step"] =
      1e6 * seconds / (double(state.iterations()) * double(steps));
}

void full_recompute(benchmark::State &state, std::string const &name)
{
  auto const &p = problem(name);
  MultiVector x("x", p.A.numCols(), width);
  run_steps(state, p, [&](ExecutionSpace const &space, int s, MultiVector const &y) {
    if (s == 0)
      Kokkos::deep_copy(space, x, 0.0);
    auto const c = p.step_cols(s);
    auto const d = p.step_dx(s);
    Kokkos::parallel_for(
        "bench::accumulate_x", Kokkos::RangePolicy<ExecutionSpace>(space, 0, c.extent(0)),
        KOKKOS_LAMBDA(int i) {
          for (int b = 0; b < width; ++b)
            x(c(i), b) += d(i, b);
        });
    KokkosSparse::spmv("N", 1.0, p.A, x, 0.0, y); // 3.4's spmv takes no instance
  });
}

template <class MakeArm>
void arm(benchmark::State &state, std::string const &name, MakeArm make)
{
  auto const &p = problem(name);
  auto a = make(p);
  run_steps(state, p, [&](ExecutionSpace const &space, int s, MultiVector const &y) {
    a.apply_cols(space, p.step_cols(s), p.step_dx(s), y);
  });
}

void register_all()
{
  for (std::string name : {"grid_2d", "grid_2d_shuffled"})
  {
    auto add = [&](std::string const &rung, auto &&fn) {
      benchmark::RegisterBenchmark(("ladder/" + name + "/" + rung).c_str(), fn)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    };
    add("full_spmv", [name](benchmark::State &s) { full_recompute(s, name); });
    add("scatter", [name](benchmark::State &s) {
      arm(s, name, [](Problem const &p) { return p.op.scatter(width); });
    });
    add("exact_set", [name](benchmark::State &s) {
      arm(s, name, [](Problem const &p) { return p.op.baseline(width); });
    });
    add("scheduled", [name](benchmark::State &s) {
      arm(s, name, [](Problem const &p) { return p.op.session(p.step_cols(0), width); });
    });
  }
}

} // namespace

int main(int argc, char *argv[])
{
  Kokkos::ScopeGuard kokkos(argc, argv);
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("kokkos_version", std::to_string(KOKKOS_VERSION));
  benchmark::AddCustomContext("execution_space", ExecutionSpace::name());
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  problems.clear();
  return 0;
}
