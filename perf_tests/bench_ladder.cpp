// The ladder (MISSION.md, "What faster means") on the operator suite at B = 8:
// (a) full recompute with KokkosSparse::spmv, (b) the library slice,
// (c) direct scatter, (d) exact set, (e) scheduled. One benchmark iteration
// is one pass of a 200-step drift workload at churn 0.01 and the default k
// (perf_tests/Harness.hpp: step 0 untimed, fences on the instance, manual
// time); every iteration's answer is checked against (a).
//
// Counters: us_per_step; x_prev and x_full, the speedup over the rung above
// and over (a) (medians of earlier rungs' iterations in this run); rel_error;
// prepare_ms (making the rung and its first step; for HST arms plus the
// hst::Operator build, operator_ms) and break_even, the steps after which
// that preparation has paid for itself against (a). A table of medians closes
// the run.
//
// --hst_layout=left|right (default left) is the Kokkos layout of x, y and
// each step's k x B dx for every rung of the run; it is in the JSON context
// (hst_layout) and the closing table's title.
//
//   bench_ladder [--hst_suite=quick|full] [--hst_operators=NAME,...]
//                [--hst_layout=left|right]
//                [--benchmark_out=ladder.json --benchmark_out_format=json] ...

#include <benchmark/benchmark.h>

#include "Harness.hpp"
#include <workload/Suite.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace
{

using namespace hst::bench;
using SuiteOperator = hst::workload::SuiteOperator<Scalar, Ordinal>;
constexpr int steps = 200;

// One operator: A, its hst::Operator and the staged workload in layout L.
// Built on first use, released before Kokkos is finalized.
template <class L>
struct Problem
{
  std::optional<HSTOperator> op;
  double operator_seconds = 0;
  Staged<L> staged;
};

std::map<std::string, SuiteOperator> catalogue;
template <class L>
std::map<std::string, std::unique_ptr<Problem<L>>> problems;

template <class L>
Problem<L> const &problem(std::string const &name)
{
  auto &slot = problems<L>[name];
  if (!slot)
  {
    slot = std::make_unique<Problem<L>>();
    auto const A = hst::workload::to_crs<Matrix>(catalogue.at(name).build());
    slot->operator_seconds = time_operator_build(A, slot->op);
    hst::workload::WorkloadOptions w;
    w.motion = hst::workload::Motion::drift;
    w.churn = 0.01;
    w.width = 8;
    w.seed = 20261202;
    slot->staged = stage<L>(A, w, steps);
  }
  return *slot;
}

// Per operator and rung, every iteration's us/step and preparation seconds.
struct Samples
{
  std::vector<double> us, prepare_s;
};
std::map<std::string, std::map<Rung, Samples>> samples;

bool is_arm(Rung r) { return r != Rung::full && r != Rung::slice; }

template <class L>
double preparation_seconds(Problem<L> const &p, Rung r, double rung_prepare_s)
{
  return rung_prepare_s + (is_arm(r) ? p.operator_seconds : 0.0);
}

double break_even(double prepare_s, double us, double full_us)
{
  return full_us > us ? std::ceil(1e6 * prepare_s / (full_us - us)) : std::nan("");
}

template <class L>
void run_rung_benchmark(benchmark::State &state, std::string const &name, Rung rung)
{
  auto const &p = problem<L>(name);
  typename Staged<L>::MultiVector y("hst::ladder::y", p.staged.A.numRows(),
                                    p.staged.width);
  auto &mine = samples[name][rung];
  std::vector<double> us, prep;
  double error = 0;
  for (auto _ : state)
  {
    Pass pass;
    with_rung(rung, p.staged, *p.op,
              [&](auto make) { pass = timed_pass(p.staged, make, y); });
    state.SetIterationTime(1e-6 * pass.us_per_step * (p.staged.steps - 1));
    error = std::max(error, pass.rel_error);
    if (!(pass.rel_error <= 1e-12))
    {
      state.SkipWithError("answer differs from the full recompute");
      break;
    }
    us.push_back(pass.us_per_step);
    prep.push_back(pass.prepare_seconds);
  }
  mine.us.insert(mine.us.end(), us.begin(), us.end());
  mine.prepare_s.insert(mine.prepare_s.end(), prep.begin(), prep.end());

  double const t = median(us);
  auto const &rungs = all_rungs();
  auto const at = std::find(rungs.begin(), rungs.end(), rung);
  double const full = median(samples[name][Rung::full].us);
  state.counters["us_per_step"] = t;
  state.counters["rel_error"] = error;
  state.counters["x_full"] = full / t;
  if (at != rungs.begin())
    state.counters["x_prev"] = median(samples[name][*(at - 1)].us) / t;
  double const prepare = preparation_seconds(p, rung, median(prep));
  state.counters["prepare_ms"] = 1e3 * prepare;
  if (is_arm(rung))
    state.counters["operator_ms"] = 1e3 * p.operator_seconds;
  if (rung != Rung::full)
    state.counters["break_even"] = break_even(prepare, t, full);
  state.counters["k"] = p.staged.k;
  state.counters["changed_nnz"] = p.staged.changed_nnz;
}

template <class L>
void print_table()
{
  std::printf("\nLadder medians (B = 8, drift, churn 0.01, default k, %d steps, x, y and "
              "dx %s)\n",
              steps, layout_of<L>() == Layout::left ? "LayoutLeft" : "LayoutRight");
  for (auto const &[name, by_rung] : samples)
  {
    auto const &p = *problems<L>.at(name);
    std::printf("\n%s: %d rows, %zu nnz, k = %d, mean nnz(A[:,S]) = %.0f\n", name.c_str(),
                int(p.staged.A.numRows()), std::size_t(p.staged.A.nnz()), p.staged.k,
                p.staged.changed_nnz);
    std::printf("%-42s %12s %9s %9s %14s %11s\n", "rung", "us/step", "x above", "x full",
                "prepare ms", "break-even");
    double const full = median(by_rung.count(Rung::full) ? by_rung.at(Rung::full).us
                                                         : std::vector<double>{});
    double above = std::nan("");
    for (Rung r : all_rungs())
    {
      if (!by_rung.count(r))
        continue;
      double const t = median(by_rung.at(r).us);
      double const prepare = preparation_seconds(p, r, median(by_rung.at(r).prepare_s));
      double const even = break_even(prepare, t, full);
      char x_above[32] = "-";
      if (!std::isnan(above))
        std::snprintf(x_above, sizeof x_above, "%.2f", above / t);
      std::printf("%-42s %12.2f %9s %9.1f %14.2f %11s\n", describe(r), t, x_above,
                  full / t, 1e3 * prepare,
                  r == Rung::full    ? "-"
                  : std::isnan(even) ? "never"
                                     : std::to_string(long(even)).c_str());
      above = t;
    }
  }
}

// Takes --hst_suite, --hst_operators and --hst_layout out of argv; returns the
// operators and sets `layout`.
std::vector<SuiteOperator> take_hst_flags(int &argc, char *argv[], Layout &layout)
{
  auto scale = hst::workload::SuiteScale::quick;
  std::vector<std::string> names;
  int out = 1;
  for (int i = 1; i < argc; ++i)
  {
    std::string const arg = argv[i];
    if (arg == "--hst_suite=full")
      scale = hst::workload::SuiteScale::full;
    else if (arg == "--hst_suite=quick")
      scale = hst::workload::SuiteScale::quick;
    else if (arg.rfind("--hst_operators=", 0) == 0)
    {
      std::stringstream list(arg.substr(std::strlen("--hst_operators=")));
      for (std::string item; std::getline(list, item, ',');)
        names.push_back(item);
    }
    else if (arg.rfind("--hst_layout=", 0) == 0)
    {
      auto const parsed = parse_layout(arg.substr(std::strlen("--hst_layout=")));
      if (!parsed)
        throw std::invalid_argument("bench_ladder: '" + arg +
                                    "': the layout is left or right");
      layout = *parsed;
    }
    else if (arg.rfind("--hst_", 0) == 0)
      throw std::invalid_argument("bench_ladder: unknown argument '" + arg +
                                  "' (--hst_suite=quick|full, --hst_operators=NAME,..., "
                                  "--hst_layout=left|right)");
    else
      argv[out++] = argv[i];
  }
  argc = out;
  std::vector<SuiteOperator> ops;
  if (names.empty())
    return hst::workload::operator_suite<Scalar, Ordinal>(scale);
  for (auto const &name : names)
    ops.push_back(hst::workload::suite_operator<Scalar, Ordinal>(name));
  return ops;
}

template <class L>
void register_all(std::vector<SuiteOperator> const &ops)
{
  for (auto const &op : ops)
  {
    catalogue[op.name] = op;
    for (Rung rung : all_rungs())
      benchmark::RegisterBenchmark(("ladder/" + op.name + "/" + to_string(rung)).c_str(),
                                   [name = op.name, rung](benchmark::State &s) {
                                     run_rung_benchmark<L>(s, name, rung);
                                   })
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
  }
}

} // namespace

int main(int argc, char *argv[])
{
  Kokkos::ScopeGuard kokkos(argc, argv);
  Layout layout = Layout::left;
  std::vector<SuiteOperator> ops;
  try
  {
    ops = take_hst_flags(argc, argv, layout);
  }
  catch (std::exception const &e)
  {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 2;
  benchmark::AddCustomContext("kokkos_version", std::to_string(KOKKOS_VERSION));
  benchmark::AddCustomContext("execution_space", ExecutionSpace::name());
  benchmark::AddCustomContext("hst_layout", to_string(layout));
  with_layout(layout, [&](auto l) {
    using L = decltype(l);
    register_all<L>(ops);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    print_table<L>();
    samples.clear();
    problems<L>.clear();
  });
  return 0;
}
