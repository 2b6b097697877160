// adaptive-trace: where an adaptive session's time goes, step by step, on one
// case of the sweep (issue 14).
//
// hst-sweep times whole runs; this tool times each step. It stages one
// suite operator under one motion and churn (as hst-sweep does: same seed,
// k and width), then runs the three arms and the adaptive session over those
// steps, each made afresh per round (making inside step 0), in the same order
// each round, every step fenced and timed on its own. It prints, per round,
// the session's run time and its decisions (step:arm); then, for each step,
// the median over the rounds of each arm's and the session's time, and the
// session's excess over the best fixed arm (by the sum of its medians),
// cumulated: the probe steps, a re-probe and the settled steps show where
// the session pays. Printed: steps 0-11, every 40th, and any step whose
// excess is above --above microseconds; then the last round's report.
//
// The per-step fences cost each rung alike; the order of the rungs within a
// round is fixed, so a rung's first step also reads the cache the rung
// before it left (compare first steps with care). Not a benchmark: the
// sweep's tables come from hst-sweep.
//
//   adaptive-trace --operator road_316x316 --motion jump --rho 0.002
//                  [--steps 200] [--rounds 9] [--B 8] [--above 2]

#include "Harness.hpp"
#include <workload/Suite.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace
{
using namespace hst::bench;
using Left = Kokkos::LayoutLeft;
using SuiteOperator = hst::workload::SuiteOperator<Scalar, Ordinal>;

struct Arguments
{
  std::string op;
  hst::workload::Motion motion = hst::workload::Motion::drift;
  double rho = 0.01;
  int steps = 200;
  int rounds = 9;
  int width = 8;
  double above = 2.0; // us
};

[[noreturn]] void usage_error(std::string const &message)
{
  std::cerr
      << "adaptive-trace: " << message
      << "\nusage: adaptive-trace --operator NAME --motion drift|jump|frozen --rho R"
         "\n                      [--steps 200] [--rounds 9] [--B 8] [--above 2]\n";
  std::exit(2);
}

Arguments parse(int argc, char *argv[])
{
  Arguments a;
  for (int i = 1; i < argc; ++i)
  {
    std::string const flag = argv[i];
    if (i + 1 >= argc)
      usage_error("argument '" + flag + "' needs a value");
    std::string const value = argv[++i];
    if (flag == "--operator")
      a.op = value;
    else if (flag == "--motion")
    {
      auto const m = hst::workload::motion_named(value);
      if (!m)
        usage_error("argument '--motion': unknown motion '" + value +
                    "' (drift, jump, frozen)");
      a.motion = *m;
    }
    else if (flag == "--rho")
      a.rho = number_argument(flag, value, usage_error);
    else if (flag == "--steps")
      a.steps = count_argument(flag, value, 2, usage_error);
    else if (flag == "--rounds")
      a.rounds = count_argument(flag, value, 1, usage_error);
    else if (flag == "--B")
      a.width = count_argument(flag, value, 1, usage_error);
    else if (flag == "--above")
      a.above = number_argument(flag, value, usage_error);
    else
      usage_error("unknown argument '" + flag + "'");
  }
  if (a.op.empty())
    usage_error("argument '--operator' is required");
  return a;
}

} // namespace

int main(int argc, char *argv[])
{
  Kokkos::ScopeGuard guard(argc, argv);
  Arguments const a = parse(argc, argv);
  std::optional<SuiteOperator> entry;
  try
  {
    entry = hst::workload::suite_operator<Scalar, Ordinal>(a.op);
  }
  catch (std::invalid_argument const &e)
  {
    usage_error(e.what());
  }
  Matrix const A = hst::workload::to_crs<Matrix>(entry->build());
  HSTOperator const op(A);
  hst::workload::WorkloadOptions w;
  w.motion = a.motion;
  w.churn = a.rho;
  w.width = a.width;
  w.seed = 20261202; // hst-sweep's
  auto const p = stage<Left>(A, w, a.steps);
  typename Staged<Left>::MultiVector y("hst::trace::y", A.numRows(), a.width);
  ExecutionSpace space;

  std::vector<Rung> const rungs = {Rung::scatter, Rung::exact, Rung::scheduled,
                                   Rung::adaptive};
  // us[rung][round][step]
  std::map<Rung, std::vector<std::vector<double>>> us;
  std::string last_report;
  for (int round = 0; round < a.rounds; ++round)
    for (Rung rung : rungs)
    {
      std::vector<double> t(std::size_t(p.steps));
      with_rung(rung, p, op, [&](auto make) {
        Kokkos::deep_copy(space, y, 0.0);
        space.fence();
        Kokkos::Timer timer;
        auto arm = make();
        for (int s = 0; s < p.steps; ++s)
        {
          arm.apply_cols(space, p.step_cols(s), p.step_dx(s), y);
          space.fence();
          t[std::size_t(s)] = 1e6 * timer.seconds();
          timer.reset();
        }
        if constexpr (std::is_same_v<decltype(arm),
                                     decltype(op.adaptive(p.step_cols(0), a.width))>)
        {
          double run = 0;
          for (double x : t)
            run += x;
          std::printf("round %d: session %.0f us, decisions", round, run);
          for (auto const &d : arm.report().decisions)
            std::printf(" %lld:%s", static_cast<long long>(d.step),
                        hst::to_string(d.chosen));
          std::printf("\n");
          std::ostringstream report;
          report << arm.report();
          last_report = report.str();
        }
      });
      us[rung].push_back(std::move(t));
    }

  // med[rung][step]: each step's median over the rounds, and their sums
  std::map<Rung, std::vector<double>> med;
  std::map<Rung, double> total;
  for (Rung rung : rungs)
    for (int s = 0; s < p.steps; ++s)
    {
      std::vector<double> v;
      for (auto const &round : us[rung])
        v.push_back(round[std::size_t(s)]);
      med[rung].push_back(median(std::move(v)));
      total[rung] += med[rung].back();
    }
  auto const step_median = [&](Rung rung, int s) { return med[rung][std::size_t(s)]; };
  Rung best = Rung::scatter;
  for (Rung rung : {Rung::exact, Rung::scheduled})
    if (total[rung] < total[best])
      best = rung;
  std::printf("\n%s, %s at rho %g, k %d, B %d, %d steps, %d rounds\n", a.op.c_str(),
              hst::workload::to_string(a.motion), a.rho, p.k, a.width, p.steps, a.rounds);
  std::printf(
      "sums of per-step medians (us): scatter %.1f, exact_set %.1f, scheduled %.1f, "
      "session %.1f; best %s, best / session %.3f\n",
      total[Rung::scatter], total[Rung::exact], total[Rung::scheduled],
      total[Rung::adaptive], to_string(best), total[best] / total[Rung::adaptive]);
  std::printf("\n step   scatter  exact_set  scheduled    session   excess  cumulated\n");
  double cumulated = 0;
  for (int s = 0; s < p.steps; ++s)
  {
    double const excess = step_median(Rung::adaptive, s) - step_median(best, s);
    cumulated += excess;
    if (s < 12 || s % 40 == 0 || std::abs(excess) > a.above)
      std::printf("%5d %9.2f %10.2f %10.2f %10.2f %8.2f %10.1f\n", s,
                  step_median(Rung::scatter, s), step_median(Rung::exact, s),
                  step_median(Rung::scheduled, s), step_median(Rung::adaptive, s), excess,
                  cumulated);
  }
  std::printf("\nlast round's report:\n%s\n", last_report.c_str());
  return 0;
}
