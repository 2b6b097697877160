// The adaptive session's own costs (issue 4), B = 8:
//
// adaptive/settled/<operator>/<motion>: what the settled session adds to the
//   arm it chose. Each iteration runs a 600-step workload twice, once through
//   the adaptive session and once through the arm it chose, called directly;
//   steps 0..99 (the probe) are untimed, steps 100..599 timed. The periodic
//   re-check is off and the step-time samples cannot trigger, so the timed
//   window is settled (an iteration that re-probes in it is an error); the
//   compile-rate detector and the sampled steps stay on, as their cost is part
//   of the settled step. Counter overhead_pct: median over iterations of
//   100 (t_adaptive / t_arm - 1).
//
// adaptive/shift/<operator>: a run of 300 drift steps, 300 jump steps and 300
//   drift steps (churn 0.01, default k; the set jumps where a phase begins).
//   Each arm and the adaptive session (defaults, probe included) run the whole
//   run; each phase is timed between fences. Counters: us/step of the
//   adaptive session and of the best fixed arm over the whole run, of the
//   per-phase oracle (the best arm of each phase, switching for free), the
//   ratios, and after how many steps of each phase the session's decision
//   changed (follow_*; -1 if it did not change within the phase).
//
// adaptive/making/<operator>/<cache>: making the scheduled arm for the
//   expected set (Operator::session: its tiles compiled in and its first
//   plan), which a probe does on the step the arm first runs. warm: the same
//   making just before; cold: a 64 MiB buffer walked between makings
//   (untimed), as the operator's tile index is when the probe reaches the
//   arm after the other arms' steps (its 200 iterations are fixed: each
//   also walks the buffer). Manual time: the making alone.
//
// --hst_layout=left|right (default left): the Kokkos layout of y and each
// step's k x B dx (in the JSON context as hst_layout).
//
//   bench_adaptive [--hst_layout=left|right]
//                  [--benchmark_out=adaptive.json --benchmark_out_format=json]

#include <benchmark/benchmark.h>

#include "Harness.hpp"
#include <workload/Suite.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace
{

using namespace hst::bench;
using hst::workload::Motion;

Rung rung_of(hst::Arm arm)
{
  switch (arm)
  {
  case hst::Arm::scheduled:
    return Rung::scheduled;
  case hst::Arm::exact_set:
    return Rung::exact;
  case hst::Arm::scatter:
    return Rung::scatter;
  }
  return Rung::scatter;
}

template <class L>
struct Problem
{
  std::optional<HSTOperator> op;
  Staged<L> staged;
};

template <class L>
std::map<std::string, std::unique_ptr<Problem<L>>> problems;

hst::workload::WorkloadOptions options(Motion motion, std::uint64_t seed)
{
  hst::workload::WorkloadOptions w;
  w.motion = motion;
  w.churn = 0.01;
  w.width = 8;
  w.seed = seed;
  return w;
}

template <class L>
Problem<L> const &problem(std::string const &key, std::string const &op_name,
                          std::vector<Phase> const &phases)
{
  auto &slot = problems<L>[key];
  if (!slot)
  {
    slot = std::make_unique<Problem<L>>();
    auto const A =
        hst::workload::to_crs<Matrix>(hst::workload::suite_operator(op_name).build());
    time_operator_build(A, slot->op);
    slot->staged = stage<L>(A, phases);
  }
  return *slot;
}

constexpr int settled_steps = 600, probe_window = 100;

template <class L>
void settled(benchmark::State &state, std::string const &op_name, Motion motion)
{
  auto const &p = problem<L>(op_name + "/" + hst::workload::to_string(motion), op_name,
                             {{options(motion, 7), settled_steps}});
  typename Staged<L>::MultiVector y("hst::bench::y", p.staged.A.numRows(),
                                    p.staged.width);
  hst::AdaptiveOptions adaptive_options;
  // Settled for the whole timed window: no periodic re-check, and step-time
  // samples are still taken (their fences and clock reads are part of the
  // settled cost) but never start a re-probe.
  adaptive_options.recheck_period = 0;
  adaptive_options.time_shift_ratio = 1e9;
  std::vector<double> overhead;
  hst::Arm chosen = hst::Arm::scatter;
  for (auto _ : state)
  {
    bool reprobed = false;
    Pass const adaptive = timed_pass(
        p.staged,
        [&] {
          return p.op->adaptive(p.staged.step_cols(0), p.staged.width, adaptive_options);
        },
        y, probe_window,
        [&](auto const &session) {
          chosen = session.active();
          auto const &decisions = session.report().decisions;
          reprobed = session.report().probing ||
                     (!decisions.empty() && decisions.back().probe_start >= probe_window);
        });
    Pass direct;
    with_rung(rung_of(chosen), p.staged, *p.op, [&](auto make) {
      direct = timed_pass(p.staged, make, y, probe_window, [](auto const &) {});
    });
    if (reprobed || !(adaptive.rel_error <= 1e-12) || !(direct.rel_error <= 1e-12))
    {
      state.SkipWithError(reprobed ? "the session re-probed in the timed window"
                                   : "answer differs from the full recompute");
      return;
    }
    state.SetIterationTime(1e-6 * adaptive.us_per_step * (settled_steps - probe_window));
    overhead.push_back(100.0 * (adaptive.us_per_step / direct.us_per_step - 1.0));
  }
  state.SetLabel(std::string("chose ") + hst::to_string(chosen));
  state.counters["overhead_pct"] = median(overhead);
}

constexpr int phase_steps = 300;
constexpr std::array<Motion, 3> shift_motions = {Motion::drift, Motion::jump,
                                                 Motion::drift};

// Runs every step of the staged run into y and returns the seconds of each
// phase, fenced at the phase boundaries.
template <class L, class Rung>
std::array<double, 3> phase_seconds(Staged<L> const &p, Rung &rung,
                                    typename Staged<L>::MultiVector const &y,
                                    ExecutionSpace const &space)
{
  std::array<double, 3> seconds{};
  Kokkos::deep_copy(space, y, 0.0);
  space.fence();
  for (int phase = 0; phase < 3; ++phase)
  {
    Kokkos::Timer timer;
    for (int s = phase * phase_steps; s < (phase + 1) * phase_steps; ++s)
      rung.apply_cols(space, p.step_cols(s), p.step_dx(s), y);
    space.fence();
    seconds[phase] = timer.seconds();
  }
  return seconds;
}

template <class L>
void shift(benchmark::State &state, std::string const &op_name)
{
  std::vector<Phase> phases;
  for (std::size_t i = 0; i < shift_motions.size(); ++i)
    phases.push_back({options(shift_motions[i], 11 + i), phase_steps});
  auto const &p = problem<L>(op_name + "/shift", op_name, phases);
  typename Staged<L>::MultiVector y("hst::bench::y", p.staged.A.numRows(),
                                    p.staged.width);
  ExecutionSpace space;
  std::map<Rung, std::vector<std::array<double, 3>>> arm_seconds;
  std::vector<std::array<double, 3>> adaptive_seconds;
  std::array<double, 3> follow{-1, -1, -1};
  std::string decisions;
  for (auto _ : state)
  {
    for (Rung r : arm_rungs())
      with_rung(r, p.staged, *p.op, [&](auto make) {
        auto arm = make();
        arm_seconds[r].push_back(phase_seconds(p.staged, arm, y, space));
      });
    auto session = p.op->adaptive(p.staged.step_cols(0), p.staged.width);
    auto const seconds = phase_seconds(p.staged, session, y, space);
    if (!(hst::workload::relative_difference(y, p.staged.y_full) <= 1e-12))
    {
      state.SkipWithError("answer differs from the full recompute");
      return;
    }
    adaptive_seconds.push_back(seconds);
    state.SetIterationTime(seconds[0] + seconds[1] + seconds[2]);
    // The first decision in each phase that changes the arm chosen before it.
    auto const &report = session.report();
    follow = {-1, -1, -1};
    decisions.clear();
    for (int phase = 0; phase < 3; ++phase)
    {
      std::optional<hst::Arm> before;
      for (auto const &d : report.decisions)
      {
        if (d.step <= phase * phase_steps)
          before = d.chosen;
        else if (d.step < (phase + 1) * phase_steps && follow[phase] < 0 &&
                 (!before || d.chosen != *before))
          follow[phase] = double(d.step - phase * phase_steps);
      }
    }
    for (auto const &d : report.decisions)
      decisions += std::to_string(d.step) + ":" + hst::to_string(d.chosen) + " ";
  }
  auto phase_median = [](std::vector<std::array<double, 3>> const &runs, int phase) {
    std::vector<double> v;
    for (auto const &r : runs)
      v.push_back(r[std::size_t(phase)]);
    return median(v);
  };
  double const steps = 3.0 * phase_steps;
  double best_fixed = std::numeric_limits<double>::infinity(), oracle = 0, adaptive = 0;
  for (int phase = 0; phase < 3; ++phase)
  {
    double best_phase = std::numeric_limits<double>::infinity();
    for (auto const &[r, runs] : arm_seconds)
      best_phase = std::min(best_phase, phase_median(runs, phase));
    oracle += best_phase;
    adaptive += phase_median(adaptive_seconds, phase);
  }
  for (auto const &[r, runs] : arm_seconds)
  {
    double total = 0;
    for (int phase = 0; phase < 3; ++phase)
      total += phase_median(runs, phase);
    best_fixed = std::min(best_fixed, total);
  }
  state.counters["us_adaptive"] = 1e6 * adaptive / steps;
  state.counters["us_best_fixed"] = 1e6 * best_fixed / steps;
  state.counters["us_oracle"] = 1e6 * oracle / steps;
  state.counters["x_best_fixed"] = best_fixed / adaptive;
  state.counters["x_oracle"] = oracle / adaptive;
  state.counters["follow_jump"] = follow[1];
  state.counters["follow_drift"] = follow[2];
  state.SetLabel("decisions (step:arm) " + decisions);
}

template <class L>
void making(benchmark::State &state, std::string const &op_name, bool cold)
{
  auto const &p = problem<L>(op_name + "/" + hst::workload::to_string(Motion::drift),
                             op_name, {{options(Motion::drift, 7), settled_steps}});
  static std::vector<unsigned char> evict(std::size_t(64) << 20, 1);
  std::uint64_t touched = 0;
  for (auto _ : state)
  {
    if (cold)
      for (std::size_t i = 0; i < evict.size(); i += 64)
        touched += evict[i]++;
    Kokkos::fence();
    Kokkos::Timer timer;
    auto arm = p.op->session(p.staged.step_cols(0), p.staged.width);
    state.SetIterationTime(timer.seconds());
    benchmark::DoNotOptimize(arm.stats().tiles);
  }
  benchmark::DoNotOptimize(touched);
}

template <class L>
void register_all()
{
  for (std::string op :
       {"grid2d_5pt_316x316", "grid3d_7pt_32x32x32", "mesh_geometric_30000"})
  {
    for (Motion m : {Motion::drift, Motion::jump, Motion::frozen})
      benchmark::RegisterBenchmark(
          ("adaptive/settled/" + op + "/" + hst::workload::to_string(m)).c_str(),
          [op, m](benchmark::State &s) { settled<L>(s, op, m); })
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("adaptive/shift/" + op).c_str(),
                                 [op](benchmark::State &s) { shift<L>(s, op); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
    for (bool cold : {false, true})
    {
      auto *const b = benchmark::RegisterBenchmark(
          ("adaptive/making/" + op + (cold ? "/cold" : "/warm")).c_str(),
          [op, cold](benchmark::State &s) { making<L>(s, op, cold); });
      b->UseManualTime()->Unit(benchmark::kMicrosecond);
      if (cold) // each iteration also walks the 64 MiB buffer (~3 ms)
        b->Iterations(200);
    }
  }
}

} // namespace

int main(int argc, char *argv[])
{
  Kokkos::ScopeGuard kokkos(argc, argv);
  // --hst_layout=left|right, taken out of argv before Google Benchmark reads it.
  Layout layout = Layout::left;
  int kept = 1;
  for (int i = 1; i < argc; ++i)
  {
    if (std::strncmp(argv[i], "--hst_layout=", std::strlen("--hst_layout=")) != 0)
    {
      argv[kept++] = argv[i];
      continue;
    }
    auto const parsed = parse_layout(argv[i] + std::strlen("--hst_layout="));
    if (!parsed)
    {
      std::fprintf(stderr, "bench_adaptive: '%s': the layout is left or right\n",
                   argv[i]);
      return 2;
    }
    layout = *parsed;
  }
  argc = kept;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 2;
  benchmark::AddCustomContext("kokkos_version", std::to_string(KOKKOS_VERSION));
  benchmark::AddCustomContext("execution_space", ExecutionSpace::name());
  benchmark::AddCustomContext("hst_layout", to_string(layout));
  with_layout(layout, [](auto l) {
    using L = decltype(l);
    register_all<L>();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    problems<L>.clear();
  });
  return 0;
}
