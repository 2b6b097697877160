// Adaptive session: probes the arms on live steps and keeps the fastest,
// follows a workload that shifts, re-probes on request and periodically with
// back-off, reports its decisions, and costs nothing when settled. Decisions
// are checked under a fake clock in which time passes only while an arm works
// (priced per step, per compiled tile and per compiled set), so every expected
// step and time is exact. The session compares arms by time per entry of
// A[:, S]: the frozen sets below are 64 interior columns of the 5-point grid,
// 320 entries, so 1 us/step reads there as 3.125 ns/entry.

#include <hst/kokkos_ext/Compat.hpp>

#include "AllocationWatch.hpp"
#include "HSTTestHelpers.hpp"
#include <workload/Workload.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iomanip>
#include <new>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace
{

using namespace hst_test;
namespace hw = hst::workload;
using hst::Arm;
using Set = std::vector<Ordinal>;

template <class ExecutionSpace>
struct Adaptive : ::testing::Test
{};
TYPED_TEST_SUITE(Adaptive, DeviceTypes);

template <class ExecutionSpace>
using Session =
    hst::AdaptiveSession<Scalar, Ordinal, typename ExecutionSpace::memory_space>;

constexpr std::size_t slot(Arm a) { return std::size_t(a); }

// Prices of the fake clock, in microseconds.
struct Prices
{
  std::array<double, 3> step{1, 1, 1}; ///< per step of each arm (indexed by Arm)
  double tile = 0;                     ///< per tile the scheduled arm compiles
  double compile = 0;                  ///< per set the exact-set arm compiles
};

// The work the held arms of a session have done so far.
struct Work
{
  std::array<std::int64_t, 3> steps{};
  std::int64_t tiles = 0, compiles = 0;
};
template <class S>
Work work_of(S const &session)
{
  // the exact-set arm's compiles: those of a changed set and those the
  // session asks for on its probe steps
  return {session.report().arm_steps,
          session.scheduled() ? session.scheduled()->stats().tiles_compiled : 0,
          session.exact_set()
              ? session.exact_set()->compiles() + session.exact_set()->recompiles()
              : 0};
}
double price_us(Prices const &p, Work const &from, Work const &to)
{
  double us = 0;
  for (std::size_t a = 0; a < 3; ++a)
    us += p.step[a] * double(to.steps[a] - from.steps[a]);
  return us + p.tile * double(to.tiles - from.tiles) +
         p.compile * double(to.compiles - from.compiles);
}

// Test time that passes only while an arm works: each read charges the work
// the held arms did since the previous read, at the current prices. A timed
// probe step therefore measures exactly its own work, compiles included.
template <class S>
struct WorkClock
{
  explicit WorkClock(Prices const &p)
      : prices(p)
  {}

  Prices prices;
  S const *session = nullptr;
  double now_us = 0;
  long reads = 0;
  Work seen;

  double read()
  {
    ++reads;
    Work const now = work_of(*session);
    now_us += price_us(prices, seen, now);
    seen = now;
    return 1e-6 * now_us;
  }
};

// The clock reads of a session: two per timed step (probe and sampled
// steps), and two more per compile of the exact-set arm timed apart while
// probing (the tests that use it count those compiles themselves too).
long clock_reads(hst::AdaptiveReport const &r)
{
  return 2 * long(r.probe_steps + r.sampled_steps + r.probe_compiles);
}

// Column sets and dx values, step by step.
struct Steps
{
  std::vector<Set> cols;
  std::vector<std::vector<Scalar>> dx;
  void take(hw::Workload<Scalar, Ordinal> &w, int n)
  {
    for (int s = 0; s < n; ++s, w.advance())
    {
      cols.push_back(w.columns());
      dx.push_back(w.dx());
    }
  }
  std::size_t size() const { return cols.size(); }
};

constexpr int width = 4;
constexpr std::int64_t k = 64;

Triplets grid() { return hw::grid_2d<Scalar, Ordinal>(100, 100); }

// Stored entries of each column of grid().
std::vector<std::int64_t> const &column_entries()
{
  static std::vector<std::int64_t> const counts = [] {
    Triplets const t = grid();
    std::vector<std::int64_t> c(std::size_t(t.n_cols), 0);
    for (auto const &row : t.rows)
      for (auto const &[col, value] : row)
        ++c[std::size_t(col)];
    return c;
  }();
  return counts;
}
// The work the session weighs a step by: the entries of A[:, S].
double entries(Set const &cols)
{
  std::int64_t n = 0;
  for (Ordinal c : cols)
    n += column_entries()[std::size_t(c)];
  return double(n);
}

hw::WorkloadOptions motion(hw::Motion m, std::uint64_t seed)
{
  hw::WorkloadOptions w;
  w.motion = m;
  w.churn = 0.05;
  w.k = k;
  w.width = width;
  w.seed = seed;
  return w;
}

// Small windows and periods, so that the expected steps are easy to follow.
// Probes: arms exact_set, scheduled, scatter; at most 1 warm-up step per
// block, 3 measured steps per arm, cut at 2x. Settled: a decision at step D
// times steps D + 1 + 32 j - 1 = D + 32 j (j >= 1), and the step after a
// shifted sample; 2 samples in a row above 1.5x the arm's probe mean start a
// re-probe. The scheduled arm is probed on frozen sets too: these tests have
// the clock rank every arm (the deferral on a frozen set has its own tests).
// No confirmation of the scheduled arm (it has its own test), so that each
// probe's length is that of its rounds.
hst::AdaptiveOptions small_options()
{
  hst::AdaptiveOptions o;
  o.defer_scheduled = false;
  o.scheduled_confirm_steps = 0;
  o.arms = {Arm::exact_set, Arm::scheduled, Arm::scatter};
  o.warmup_steps = 1;
  o.measure_steps = 3;
  o.cut_ratio = 2.0;
  o.window_steps = 8;
  o.shift_windows = 2;
  o.recheck_period = 48;
  o.recheck_max_period = 192;
  o.sample_period = 32;
  o.time_shift_ratio = 1.5;
  return o;
}
// The longest probe (no arm cut, every block warms up), as documented:
// N (w + 1) + N (w + m - 1) + e (m > 1 ? 2 : 1) + (c > 0 ? 2 (w + c) + e : 0)
// = 15 for small_options() in a first probe (e = 0, c = 0); e and c count
// when the scheduled arm is allowed, c in a re-probe only, where e holds
// scheduled_settle_steps too (and, not counted here, scheduled_rise_warmup
// in one that a rising step time began).
std::int64_t max_probe_length(hst::AdaptiveOptions const &o, bool reprobe = false)
{
  std::int64_t const n = std::int64_t(o.arms.size());
  std::int64_t const w = o.warmup_steps, m = o.measure_steps;
  bool const scheduled =
      std::find(o.arms.begin(), o.arms.end(), Arm::scheduled) != o.arms.end();
  std::int64_t const e =
      scheduled ? o.scheduled_extra_warmup + (reprobe ? o.scheduled_settle_steps : 0) : 0;
  std::int64_t const c = scheduled && reprobe ? o.scheduled_confirm_steps : 0;
  return n * (w + 1) + (m > 1 ? n * (w + m - 1) : 0) + e * (m > 1 ? 2 : 1) +
         (c > 0 ? 2 * (w + c) + e : 0);
}

// Prices under which drift favours the scheduled arm (few new tiles), jump
// the scatter arm (the scheduled arm compiles ~3 tiles a step, the exact-set
// arm a set a step) and a frozen set the exact-set arm (nothing to compile).
Prices work_prices()
{
  Prices p;
  p.step[slot(Arm::scheduled)] = 1.0;
  p.step[slot(Arm::exact_set)] = 0.8;
  p.step[slot(Arm::scatter)] = 2.0;
  p.tile = 0.5;
  p.compile = 1.4;
  return p;
}
Prices flat_prices(double scheduled, double exact_set, double scatter)
{
  Prices p;
  p.step = {scheduled, exact_set, scatter};
  return p;
}

// An operator, an adaptive session on it under a WorkClock (or the real
// clock), the caller's Views, and the accumulated x for a full recompute.
template <class ExecutionSpace>
struct Harness
{
  using memory_space = typename ExecutionSpace::memory_space;
  using ColsView = Kokkos::View<Ordinal *, memory_space>;
  using DxView = Kokkos::View<Scalar **, Kokkos::LayoutLeft, memory_space>;
  ExecutionSpace space;
  Triplets t;
  Matrix<ExecutionSpace> A;
  hst::Operator<Scalar, Ordinal, memory_space> op;
  WorkClock<Session<ExecutionSpace>> clock;
  Session<ExecutionSpace> session;
  ColsView cols;
  DxView dx;
  Kokkos::View<Scalar **, Kokkos::LayoutRight, memory_space> y;
  typename ColsView::HostMirror cols_host;
  typename DxView::HostMirror dx_host;
  std::vector<Scalar> x;

  Harness(Set const &expected, hst::AdaptiveOptions options, Prices const &prices,
          bool fake_clock = true)
      : t(grid())
      , A(to_matrix<ExecutionSpace>(t))
      , op(A)
      , clock(prices)
      , session(op.adaptive(space, to_view<memory_space>(expected), width,
                            fake_clock ? with_clock(options) : options))
      , cols("cols", k)
      , dx("dx", k, width)
      , y("y", t.n_rows, width)
      , cols_host(Kokkos::create_mirror_view(cols))
      , dx_host(Kokkos::create_mirror_view(dx))
      , x(std::size_t(t.n_cols) * width, 0.0)
  {
    clock.session = &session;
  }

  hst::AdaptiveOptions with_clock(hst::AdaptiveOptions options)
  {
    options.clock = [c = &clock] { return c->read(); };
    return options;
  }

  // Fills the caller's Views with one step's set and values.
  void fill(Set const &c, std::vector<Scalar> const &d)
  {
    for (std::size_t i = 0; i < c.size(); ++i)
    {
      cols_host(i) = c[i];
      for (int b = 0; b < width; ++b)
        dx_host(i, b) = d[i * width + b];
    }
    Kokkos::deep_copy(space, cols, cols_host);
    Kokkos::deep_copy(space, dx, dx_host);
  }

  void step(Set const &c, std::vector<Scalar> const &d)
  {
    fill(c, d);
    session.apply_cols(space, cols, dx, y);
    for (std::size_t i = 0; i < c.size(); ++i)
      for (int b = 0; b < width; ++b)
        x[std::size_t(c[i]) * width + b] += d[i * width + b];
  }

  // Runs steps [from, to) of `s`; `before(step)` runs ahead of each.
  void run(Steps const &s, std::size_t from, std::size_t to,
           std::function<void(std::size_t)> const &before = {})
  {
    for (std::size_t i = from; i < to; ++i)
    {
      if (before)
        before(i);
      step(s.cols[i], s.dx[i]);
    }
  }

  // Runs all of `s`, the clock's prices changing to each listed value at the
  // start of its step.
  void run_repriced(Steps const &s,
                    std::vector<std::pair<std::size_t, Prices>> const &changes)
  {
    run(s, 0, s.size(), [&](std::size_t i) {
      for (auto const &[step, prices] : changes)
        if (i == step)
          clock.prices = prices;
    });
  }

  // max relative difference between y and A x by KokkosSparse::spmv.
  double error_vs_full_recompute()
  {
    return relative_error(to_host_rows(y), full_recompute(A, x, width));
  }
};

// drift (steps [0, t1)), jump ([t1, t2)), drift again ([t2, t3)): the second
// drift resumes the first one's set.
constexpr std::size_t t1 = 100, t2 = 200, t3 = 320;
Steps drift_jump_drift(Triplets const &t)
{
  auto const A = to_matrix<Kokkos::DefaultHostExecutionSpace>(t);
  hw::Workload<Scalar, Ordinal> drift(A, motion(hw::Motion::drift, 1));
  hw::Workload<Scalar, Ordinal> jump(A, motion(hw::Motion::jump, 2));
  Steps s;
  s.take(drift, int(t1));
  s.take(jump, int(t2 - t1));
  s.take(drift, int(t3 - t2));
  return s;
}

Steps one_motion(hw::Motion m, int n, std::uint64_t seed = 1)
{
  auto const A = to_matrix<Kokkos::DefaultHostExecutionSpace>(grid());
  hw::Workload<Scalar, Ordinal> w(A, motion(m, seed));
  Steps s;
  s.take(w, n);
  return s;
}

// A frozen set for `frozen_steps` steps, then a drift from that same set
// (same seed) for `drift_steps`: the set first moves at step frozen_steps + 1.
Steps frozen_then_drift(int frozen_steps, int drift_steps)
{
  auto const A = to_matrix<Kokkos::DefaultHostExecutionSpace>(grid());
  hw::Workload<Scalar, Ordinal> frozen(A, motion(hw::Motion::frozen, 5));
  hw::Workload<Scalar, Ordinal> drift(A, motion(hw::Motion::drift, 5));
  EXPECT_EQ(frozen.columns(), drift.columns());
  Steps s;
  s.take(frozen, frozen_steps);
  s.take(drift, drift_steps);
  return s;
}

bool starts_with(std::string const &s, std::string const &prefix)
{
  return s.compare(0, prefix.size(), prefix) == 0;
}

TYPED_TEST(Adaptive, initial_probe_picks_the_arm_the_clock_makes_fastest)
{
  using ExecutionSpace = TypeParam;
  // A frozen set, which the session expects. Every arm's first block warms
  // up (a new session: each arm is idle, cold in cache); the later blocks
  // meet the set each arm already ran on (the scheduled arm was planned for
  // it when made) and do not. All arms within 2x: none is cut.
  auto const s = one_motion(hw::Motion::frozen, 30);
  auto const options = small_options();
  struct Case
  {
    Prices prices;
    Arm fastest;
    std::vector<Arm> round2; // by round-1 time
  };
  Arm const X = Arm::exact_set, H = Arm::scheduled, C = Arm::scatter;
  for (auto const &c : {Case{flat_prices(1.0, 1.5, 1.8), H, {H, X, C}},
                        Case{flat_prices(1.6, 1.2, 1.5), X, {X, C, H}},
                        Case{flat_prices(1.5, 1.4, 1.0), C, {C, X, H}}})
  {
    SCOPED_TRACE(to_string(c.fastest));
    Harness<ExecutionSpace> h(s.cols[0], options, c.prices);
    std::vector<Arm> ran;
    h.run(s, 0, s.size(), [&](std::size_t) { ran.push_back(h.session.running()); });

    // Round 1: each arm a warm-up step and 1 measured step; round 2: 2 more
    // measured steps each, fastest first.
    std::vector<Arm> expected = {X, X, H, H, C, C};
    for (Arm a : c.round2)
      expected.insert(expected.end(), {a, a});
    std::int64_t const L = std::int64_t(expected.size());
    ASSERT_EQ(L, 12);
    expected.resize(s.size(), c.fastest);
    EXPECT_EQ(ran, expected);

    auto const &r = h.session.report();
    ASSERT_EQ(r.decisions.size(), 1u);
    auto const &d = r.decisions[0];
    EXPECT_EQ(d.chosen, c.fastest);
    EXPECT_EQ(h.session.active(), c.fastest);
    EXPECT_FALSE(h.session.probing());
    EXPECT_EQ(d.probe_start, 0);
    EXPECT_EQ(d.step, L);
    EXPECT_EQ(d.reason, "initial probe");
    EXPECT_EQ(d.measured_steps, (std::array<int, 3>{3, 3, 3}));
    EXPECT_EQ(d.warmup_steps, (std::array<int, 3>{1, 1, 1})); // indexed by Arm
    for (std::size_t a = 0; a < 3; ++a)
      EXPECT_NEAR(d.us_per_step[a], c.prices.step[a], 1e-9);
    EXPECT_EQ(r.probe_steps, L);
    EXPECT_EQ(r.steps, std::int64_t(s.size()));
    double probe_us = 0;
    for (std::int64_t i = 0; i < L; ++i)
      probe_us += c.prices.step[slot(ran[std::size_t(i)])];
    EXPECT_NEAR(1e6 * r.probe_seconds, probe_us, 1e-6);
    EXPECT_NEAR(1e6 * r.probe_excess_seconds,
                probe_us - L * c.prices.step[slot(c.fastest)], 1e-6);
    // Only probe steps read the clock, twice each, and twice more around the
    // exact-set arm's compile: its first step's only (the set never moves, so
    // none is asked for on its later steps).
    EXPECT_EQ(r.probe_compiles, 1);
    EXPECT_EQ(h.clock.reads, 2 * L + 2);
    EXPECT_EQ(h.clock.reads, clock_reads(r));
    EXPECT_LE(h.error_vs_full_recompute(), 1e-13);
  }
}

TYPED_TEST(Adaptive, clearly_worse_arms_are_cut_after_one_measured_step)
{
  using ExecutionSpace = TypeParam;
  auto const s = one_motion(hw::Motion::frozen, 30);
  Harness<ExecutionSpace> h(s.cols[0], small_options(), flat_prices(1.0, 5.0, 4.0));
  std::vector<Arm> ran;
  h.run(s, 0, s.size(), [&](std::size_t) { ran.push_back(h.session.running()); });
  Arm const X = Arm::exact_set, H = Arm::scheduled, C = Arm::scatter;
  // Round 1 as above; exact set (5 > 2 x 1) and scatter (4 > 2 x 1) are cut;
  // round 2: the scheduled arm's last 2 measured steps.
  std::vector<Arm> expected = {X, X, H, H, C, C, H, H};
  expected.resize(s.size(), H);
  EXPECT_EQ(ran, expected);
  auto const &r = h.session.report();
  ASSERT_EQ(r.decisions.size(), 1u);
  auto const &d = r.decisions[0];
  EXPECT_EQ(d.step, 8);
  EXPECT_EQ(d.chosen, H);
  EXPECT_EQ(d.measured_steps, (std::array<int, 3>{3, 1, 1}));
  EXPECT_NEAR(d.us_per_step[slot(X)], 5.0, 1e-9);
  EXPECT_NEAR(d.us_per_step[slot(C)], 4.0, 1e-9);
  ASSERT_EQ(entries(s.cols[0]), 320);
  EXPECT_NEAR(d.ns_per_entry[slot(X)], 5e3 / 320, 1e-9);
  EXPECT_NEAR(d.ns_per_entry[slot(H)], 1e3 / 320, 1e-9);
  EXPECT_EQ(d.reason,
            "initial probe; exact_set cut after round 1 (15.625 ns/entry > 2.00 "
            "x 3.125 ns/entry); scatter cut after round 1 (12.500 ns/entry > "
            "2.00 x 3.125 ns/entry)");
  // Excess: 2 exact-set steps at 4 us more, 2 scatter steps at 3 us more.
  EXPECT_NEAR(1e6 * r.probe_excess_seconds, 2 * 4.0 + 2 * 3.0, 1e-6);

  // With the cut disabled, every arm runs all its measured steps.
  auto options = small_options();
  options.cut_ratio = HUGE_VAL;
  Harness<ExecutionSpace> all(s.cols[0], options, flat_prices(1.0, 5.0, 4.0));
  all.run(s, 0, s.size());
  auto const &e = all.session.report().decisions.at(0);
  EXPECT_EQ(e.step, 12);
  EXPECT_EQ(e.chosen, H);
  EXPECT_EQ(e.measured_steps, (std::array<int, 3>{3, 3, 3}));
  EXPECT_EQ(e.reason, "initial probe");
}

TYPED_TEST(Adaptive, round_two_stops_an_arm_whose_mean_passes_the_cut)
{
  using ExecutionSpace = TypeParam;
  // Round 1 (steps 0..5, each arm a warm-up and a measured step) keeps all
  // three arms (1.0, 1.5, 1.9 us); round 2 on the same frozen set, without
  // warm-up, runs scheduled (6, 7), exact set (8, 9), then scatter from
  // step 10, whose price rises to 4 us there: its mean (1.9 + 4) / 2 = 2.95
  // us exceeds 2 x 1.0, so it stops after 2 of its 3 measured steps.
  auto const s = one_motion(hw::Motion::frozen, 30);
  Harness<ExecutionSpace> h(s.cols[0], small_options(), flat_prices(1.0, 1.5, 1.9));
  std::vector<Arm> ran;
  h.run(s, 0, s.size(), [&](std::size_t i) {
    if (i == 10)
      h.clock.prices = flat_prices(1.0, 1.5, 4.0);
    ran.push_back(h.session.running());
  });
  Arm const X = Arm::exact_set, H = Arm::scheduled, C = Arm::scatter;
  std::vector<Arm> expected = {X, X, H, H, C, C, H, H, X, X, C};
  expected.resize(s.size(), H);
  EXPECT_EQ(ran, expected);
  auto const &d = h.session.report().decisions.at(0);
  EXPECT_EQ(d.step, 11);
  EXPECT_EQ(d.chosen, H);
  EXPECT_EQ(d.measured_steps, (std::array<int, 3>{3, 3, 2}));
  EXPECT_NEAR(d.us_per_step[slot(C)], 2.95, 1e-9);
  EXPECT_EQ(d.reason, "initial probe; scatter stopped after 2 of 3 steps (9.219 ns/entry "
                      "> 2.00 x 3.125 ns/entry)"); // 2.95 and 1 us over 320 entries
}

TYPED_TEST(Adaptive, blocks_warm_up_only_where_the_arm_meets_a_new_set)
{
  using ExecutionSpace = TypeParam;
  auto options = small_options();
  options.recheck_period = options.recheck_max_period = 0;
  Prices const prices = flat_prices(1.0, 1.2, 1.4); // no arm cut
  // The first decision of a session on 40 steps of drift.
  auto const first_decision_on_drift = [&](hst::AdaptiveOptions const &o) {
    auto const s = one_motion(hw::Motion::drift, 40);
    Harness<ExecutionSpace> h(s.cols[0], o, prices);
    h.run(s, 0, s.size());
    return h.session.report().decisions.at(0);
  };
  {
    SCOPED_TRACE("frozen");
    auto const s = one_motion(hw::Motion::frozen, 40);
    // The session expects another set, so that the scheduled arm, planned
    // for that one when made, meets a new set on its first step (see
    // scheduled_arm_planned_for_the_set_does_not_warm_up for the other case).
    auto const other = one_motion(hw::Motion::frozen, 1, 2).cols[0];
    ASSERT_NE(other, s.cols[0]);
    Harness<ExecutionSpace> h(other, options, prices);
    h.run(s, 0, 20);
    h.session.reprobe();
    h.run(s, 20, s.size());
    auto const &r = h.session.report();
    ASSERT_EQ(r.decisions.size(), 2u);
    // A new session: every arm's first block warms up (the exact-set arm
    // also compiles there, the scheduled arm re-plans); round 2 none.
    EXPECT_EQ(r.decisions[0].warmup_steps, (std::array<int, 3>{1, 1, 1}));
    EXPECT_EQ(r.decisions[0].step, 12);
    EXPECT_EQ(r.decisions[0].chosen, Arm::scheduled);
    // Again on the same set: the arms idle since the decision warm up once
    // (cold in cache); the active scheduled arm has nothing to catch up.
    // 9 measured steps.
    EXPECT_EQ(r.decisions[1].warmup_steps, (std::array<int, 3>{0, 1, 1}));
    EXPECT_EQ(r.decisions[1].step, 20 + 11);
  }
  {
    SCOPED_TRACE("drift");
    // The set moves every step: from the exact-set arm's second step on, the
    // probe knows it, and every block (round 1 and 2) begins with a warm-up.
    auto const d = first_decision_on_drift(options);
    EXPECT_EQ(d.warmup_steps, (std::array<int, 3>{2, 2, 2}));
    EXPECT_EQ(d.measured_steps, (std::array<int, 3>{3, 3, 3}));
    EXPECT_EQ(d.step, max_probe_length(options));
    EXPECT_EQ(d.chosen, Arm::scheduled);
  }
  {
    SCOPED_TRACE("drift, the scheduled arm warms up longer");
    // scheduled_extra_warmup: each of its two blocks, on a set the probe has
    // seen move, warms up 1 + 1 steps; the other arms' 1.
    auto extra = options;
    extra.scheduled_extra_warmup = 1;
    auto const d = first_decision_on_drift(extra);
    EXPECT_EQ(d.warmup_steps, (std::array<int, 3>{4, 2, 2}));
    EXPECT_EQ(d.measured_steps, (std::array<int, 3>{3, 3, 3}));
    EXPECT_EQ(d.step, max_probe_length(extra));
    EXPECT_EQ(d.step, 17);
  }
  {
    SCOPED_TRACE("no warm-up");
    options.warmup_steps = 0;
    auto const d = first_decision_on_drift(options);
    EXPECT_EQ(d.warmup_steps, (std::array<int, 3>{0, 0, 0}));
    EXPECT_EQ(d.step, 9);
  }
}

TYPED_TEST(Adaptive, scheduled_arm_planned_for_the_set_does_not_replan)
{
  using ExecutionSpace = TypeParam;
  // The session expects the frozen set: the scheduled arm was planned for it
  // when made, so none of its blocks meets a new set and it never re-plans;
  // like every arm of a new session it warms up once, in cache. 3 x 3
  // measured steps and 3 warm-up steps.
  auto options = small_options();
  options.recheck_period = options.recheck_max_period = 0;
  auto const s = one_motion(hw::Motion::frozen, 20);
  Harness<ExecutionSpace> h(s.cols[0], options, flat_prices(1.0, 1.2, 1.4));
  h.run(s, 0, s.size());
  auto const &d = h.session.report().decisions.at(0);
  EXPECT_EQ(d.warmup_steps, (std::array<int, 3>{1, 1, 1}));
  EXPECT_EQ(d.measured_steps, (std::array<int, 3>{3, 3, 3}));
  EXPECT_EQ(d.step, 12);
  EXPECT_EQ(h.session.scheduled()->stats().replans, 0);
}

TYPED_TEST(Adaptive, arms_timed_on_sets_of_different_work_are_compared_per_entry)
{
  using ExecutionSpace = TypeParam;
  // Edge columns of the grid hold 4 entries, interior ones 5. Steps 0..3
  // run on 64 edge columns (256 entries), the rest on 64 interior columns
  // (320). Every arm's step is priced by its entries: exact set 1.2, scheduled
  // 1.1, scatter 1.0 ns/entry. With one measured step per arm, the exact-set
  // and scheduled arms are measured on the light set (steps 1, 3: 0.3072 and
  // 0.2816 us), the scatter arm on the heavy one (step 5: 0.320 us): per
  // step it looks the slowest, per entry it is the cheapest.
  Set light, heavy;
  for (Ordinal c = 0; c < Ordinal(column_entries().size()); ++c)
  {
    auto const n = column_entries()[std::size_t(c)];
    if (n == 4 && light.size() < std::size_t(k))
      light.push_back(c);
    else if (n == 5 && heavy.size() < std::size_t(k))
      heavy.push_back(c);
  }
  ASSERT_EQ(entries(light), 256);
  ASSERT_EQ(entries(heavy), 320);
  Steps s;
  for (int i = 0; i < 20; ++i)
  {
    s.cols.push_back(i < 4 ? light : heavy);
    s.dx.push_back(std::vector<Scalar>(std::size_t(k) * width, 0.25 * (i + 1)));
  }
  auto options = small_options();
  options.measure_steps = 1;
  std::array<double, 3> const ns = {1.1, 1.2, 1.0}; // indexed by Arm
  Harness<ExecutionSpace> h(s.cols[0], options, flat_prices(1, 1, 1));
  h.run(s, 0, s.size(), [&](std::size_t i) {
    double const e = entries(s.cols[i]);
    h.clock.prices = flat_prices(1e-3 * ns[0] * e, 1e-3 * ns[1] * e, 1e-3 * ns[2] * e);
  });
  auto const &d = h.session.report().decisions.at(0);
  EXPECT_EQ(d.step, 6);
  EXPECT_EQ(d.chosen, Arm::scatter);
  EXPECT_NEAR(d.us_per_step[slot(Arm::scheduled)], 0.2816, 1e-9);
  EXPECT_NEAR(d.us_per_step[slot(Arm::scatter)], 0.320, 1e-9);
  for (std::size_t a = 0; a < 3; ++a)
    EXPECT_NEAR(d.ns_per_entry[a], ns[a], 1e-9) << to_string(Arm(a));
  EXPECT_LE(h.error_vs_full_recompute(), 1e-13);
}

// The charge tests: two disjoint sets of k interior columns (5 entries
// each, 320 in all); the exact-set and scatter arms, one measured step; the
// exact-set arm 1 us a step plus 3 us per set compile, the scatter arm 1.5 us.
std::pair<Set, Set> two_interior_sets()
{
  Set first, second;
  for (Ordinal c = 0; c < Ordinal(column_entries().size()); ++c)
    if (column_entries()[std::size_t(c)] == 5)
    {
      if (first.size() < std::size_t(k))
        first.push_back(c);
      else if (second.size() < std::size_t(k))
        second.push_back(c);
    }
  EXPECT_EQ(entries(first), 320);
  EXPECT_EQ(entries(second), 320);
  return {first, second};
}
hst::AdaptiveOptions charge_options()
{
  auto options = small_options();
  options.arms = {Arm::exact_set, Arm::scatter};
  options.measure_steps = 1;
  return options;
}
Prices charge_prices()
{
  Prices prices = flat_prices(9.0, 1.0, 1.5);
  prices.compile = 3.0;
  return prices;
}

TYPED_TEST(Adaptive, exact_set_is_charged_the_compiles_its_measured_step_missed)
{
  using ExecutionSpace = TypeParam;
  // Two sets of 64 interior columns (320 entries each), two steps each in
  // turn: the set changes between steps 1 and 2, 3 and 4, ... The exact-set
  // arm costs 1 us a step plus 3 us per set compile; its warm-up (step 0)
  // compiles, its measured step (1) does not. The scatter arm costs 1.5 us.
  // The probe's steps 0..3 show one change in three pairs, so the exact-set
  // arm is charged (2/3) 1 + (1/3) 4 = 2 us a step: the scatter arm wins.
  auto const [first, second] = two_interior_sets();
  auto const options = charge_options();
  auto const prices = charge_prices();
  for (bool const moving : {true, false})
  {
    SCOPED_TRACE(moving ? "changes every two steps" : "frozen");
    Steps s;
    for (int i = 0; i < 20; ++i)
    {
      s.cols.push_back(moving && (i / 2) % 2 == 1 ? second : first);
      s.dx.push_back(std::vector<Scalar>(std::size_t(k) * width, 0.5 * (i + 1)));
    }
    Harness<ExecutionSpace> h(s.cols[0], options, prices);
    h.run(s, 0, s.size());
    auto const &d = h.session.report().decisions.at(0);
    EXPECT_EQ(d.step, 4);
    EXPECT_NEAR(d.us_per_step[slot(Arm::exact_set)], 1.0, 1e-9);
    if (moving)
    {
      EXPECT_EQ(d.chosen, Arm::scatter);
      EXPECT_NEAR(d.ns_per_entry[slot(Arm::exact_set)], 2e3 / 320, 1e-9);
      EXPECT_EQ(d.reason, "initial probe; exact_set charged a compile on 0.33 of its "
                          "steps (the set changed on that share of the probe's steps)");
    }
    else
    {
      EXPECT_EQ(d.chosen, Arm::exact_set);
      EXPECT_NEAR(d.ns_per_entry[slot(Arm::exact_set)], 1e3 / 320, 1e-9);
      EXPECT_EQ(d.reason, "initial probe");
    }
    EXPECT_LE(h.error_vs_full_recompute(), 1e-13);
  }
}

TYPED_TEST(Adaptive, exact_set_is_charged_a_timed_warm_compile_not_its_cold_first_step)
{
  using ExecutionSpace = TypeParam;
  // The steps of the test above, with the exact-set arm's first compile (its
  // warm-up, step 0: a new arm, cold in cache) at 12 us and the later ones
  // at 3 us, and the scatter arm at 2.5 us. Its measured step (1) does not
  // change the set; when the set moves (step 2, the scatter arm's), the
  // session compiles the exact-set arm for it between steps and times that
  // compile: 1 us a step plus (1/3) 3 us = 2 us, and it wins. (Priced from
  // the cold compile it would cost 1 + (1/3) 12 = 5 us and lose.)
  auto const [first, second] = two_interior_sets();
  auto const options = charge_options();
  Prices prices = flat_prices(9.0, 1.0, 2.5);
  Steps s;
  for (int i = 0; i < 20; ++i)
  {
    s.cols.push_back((i / 2) % 2 == 1 ? second : first);
    s.dx.push_back(std::vector<Scalar>(std::size_t(k) * width, 0.5 * (i + 1)));
  }
  Harness<ExecutionSpace> h(s.cols[0], options, prices);
  h.run(s, 0, s.size(),
        [&](std::size_t i) { h.clock.prices.compile = i == 0 ? 12.0 : 3.0; });
  auto const &r = h.session.report();
  SCOPED_TRACE(::testing::Message() << r);
  auto const &d = r.decisions.at(0);
  EXPECT_EQ(d.step, 4);
  EXPECT_EQ(d.chosen, Arm::exact_set);
  // the step as the arm runs it: the compile asked for is not its own
  EXPECT_NEAR(d.us_per_step[slot(Arm::exact_set)], 1.0, 1e-9);
  EXPECT_NEAR(d.ns_per_entry[slot(Arm::exact_set)], 2e3 / 320, 1e-9);
  EXPECT_EQ(d.reason, "initial probe; exact_set charged a compile on 0.33 of its steps "
                      "(the set changed on that share of the probe's steps)");
  // It compiled twice in the probe: on its first step (a new arm), and
  // between steps 2 and 3, asked for.
  ASSERT_NE(h.session.exact_set(), nullptr);
  EXPECT_EQ(h.session.exact_set()->recompiles(), 1);
  EXPECT_EQ(r.probe_compiles, 2);
  // The probe paid for that compile: 13 + 1 (exact set), 3 (the compile),
  // 2.5 + 2.5 (scatter).
  EXPECT_NEAR(1e6 * r.probe_seconds, 13.0 + 1.0 + 3.0 + 2.5 + 2.5, 1e-9);
  EXPECT_EQ(h.clock.reads, clock_reads(r));
  EXPECT_LE(h.error_vs_full_recompute(), 1e-13);
}

TYPED_TEST(Adaptive, reprobe_for_the_exact_set_compile_rate_charges_at_least_that_rate)
{
  using ExecutionSpace = TypeParam;
  // The exact-set arm (1 us a step, 3 us more per set compile) wins a probe
  // on a frozen set against the scatter arm (1.5 us), then the set changes
  // on every step: its compile-rate detector re-probes. From the re-probe's
  // first step on the set is frozen again: the re-probe's own pairs see no
  // change, its measured step does not compile, and only the settled window
  // (rate 1) says what the arm paid: it is charged at that rate, 4 us a
  // step, and the scatter arm wins.
  auto const [first, second] = two_interior_sets();
  auto options = charge_options();
  options.sample_period = 0; // the compile-rate detector alone
  auto const prices = charge_prices();
  auto steps = [&](std::int64_t frozen_from) {
    Steps s;
    for (int i = 0; i < 60; ++i)
    {
      if (i < frozen_from)
        s.cols.push_back(i >= 4 && i % 2 == 1 ? second : first);
      else if (i == frozen_from) // one change, then none
        s.cols.push_back(s.cols.back() == first ? second : first);
      else
        s.cols.push_back(s.cols.back());
      s.dx.push_back(std::vector<Scalar>(std::size_t(k) * width, 0.5 * (i + 1)));
    }
    return s;
  };
  // Where the re-probe starts on a set that keeps changing ...
  std::int64_t start = 0;
  {
    Steps const s = steps(60);
    Harness<ExecutionSpace> h(s.cols[0], options, prices);
    h.run(s, 0, s.size());
    auto const &decisions = h.session.report().decisions;
    ASSERT_GE(decisions.size(), 2u);
    EXPECT_EQ(decisions[0].chosen, Arm::exact_set);
    start = decisions[1].probe_start;
  }
  // ... and the same steps up to it, then one change and a frozen set: the
  // re-probe's first step compiles (the arm's warm-up), none after it.
  Steps const s = steps(start);
  Harness<ExecutionSpace> h(s.cols[0], options, prices);
  h.run(s, 0, s.size());
  auto const &decisions = h.session.report().decisions;
  ASSERT_GE(decisions.size(), 2u);
  auto const &d = decisions[1];
  EXPECT_EQ(d.probe_start, start);
  EXPECT_EQ(d.chosen, Arm::scatter);
  EXPECT_NEAR(d.us_per_step[slot(Arm::exact_set)], 1.0, 1e-9);
  EXPECT_NEAR(d.ns_per_entry[slot(Arm::exact_set)], 4e3 / 320, 1e-9);
  EXPECT_EQ(d.reason, "exact_set compile rate 1.00 compiles/step vs 0.00 at probe; "
                      "exact_set charged a compile on 1.00 of its steps (its compile "
                      "rate when settled)");
  EXPECT_LE(h.error_vs_full_recompute(), 1e-13);
}

TYPED_TEST(Adaptive, probe_charges_compiles_to_the_step_that_makes_them)
{
  using ExecutionSpace = TypeParam;
  // Under jump the scheduled arm compiles tiles in its measured steps; at
  // 0.5 us a step it would win, at 0.5 us plus 1 us a tile it must not. No
  // cut, so that every arm runs all its measured steps.
  auto const s = one_motion(hw::Motion::jump, 30);
  Prices prices = flat_prices(0.5, 2.0, 1.5);
  prices.tile = 1.0;
  auto options = small_options();
  options.cut_ratio = HUGE_VAL;
  Harness<ExecutionSpace> h(s.cols[0], options, prices);
  // The scheduled arm is made (compiled for the expected set) before the
  // clock of its first step is read: those tiles are not that step's.
  using memory_space = typename ExecutionSpace::memory_space;
  std::int64_t const made_tiles =
      h.op.session(to_view<memory_space>(s.cols[0]), width).stats().tiles_compiled;
  ASSERT_GT(made_tiles, 0);
  std::vector<Arm> ran;
  std::vector<std::int64_t> tiles; // tiles compiled by each step
  double probe_cost_us = 0;
  for (std::size_t i = 0; i < s.size(); ++i)
  {
    bool const probing = h.session.probing();
    ran.push_back(h.session.running());
    Work before = work_of(h.session);
    bool const unmade = h.session.scheduled() == nullptr;
    h.step(s.cols[i], s.dx[i]);
    if (unmade && h.session.scheduled() != nullptr)
      before.tiles += made_tiles;
    if (probing)
      probe_cost_us += price_us(prices, before, work_of(h.session));
    tiles.push_back(work_of(h.session).tiles - before.tiles);
  }
  auto const &r = h.session.report();
  auto const &d = r.decisions.at(0);
  // The set jumps every step: each block of an arm begins with a warm-up
  // step (round 1: steps 0..5, two per arm; round 2: one block per arm); its
  // other steps are measured, and the scheduled arm's tiles charged there.
  std::size_t const round2 = 3 * 2;
  std::array<std::size_t, 3> seen_in_round{};
  std::int64_t measured_tiles = 0, measured = 0;
  double probe_entries = 0, scatter_entries = 0;
  for (std::size_t i = 0; i < std::size_t(d.step); ++i)
  {
    if (i == round2)
      seen_in_round = {};
    probe_entries += entries(s.cols[i]);
    if (seen_in_round[slot(ran[i])]++ == 0)
      continue; // the block's warm-up
    if (ran[i] == Arm::scheduled)
      measured_tiles += tiles[i], ++measured;
    if (ran[i] == Arm::scatter)
      scatter_entries += entries(s.cols[i]);
  }
  ASSERT_EQ(measured, 3);
  EXPECT_EQ(d.warmup_steps[slot(Arm::scheduled)], 2);
  double const tiles_per_step = double(measured_tiles) / 3;
  ASSERT_GT(tiles_per_step, 1.0) << "the jump workload should compile tiles";
  EXPECT_NEAR(d.us_per_step[slot(Arm::scheduled)], 0.5 + tiles_per_step, 1e-9);
  EXPECT_NEAR(d.us_per_step[slot(Arm::exact_set)], 2.0, 1e-9);
  EXPECT_NEAR(d.us_per_step[slot(Arm::scatter)], 1.5, 1e-9);
  EXPECT_EQ(d.chosen, Arm::scatter);
  EXPECT_EQ(d.step, max_probe_length(options));
  EXPECT_NEAR(1e6 * r.probe_seconds, probe_cost_us, 1e-6);
  // Scatter: 3 measured steps at 1.5 us; the excess is the probe's time
  // beyond its entries at the scatter arm's time per entry.
  EXPECT_NEAR(d.ns_per_entry[slot(Arm::scatter)], 1e3 * 3 * 1.5 / scatter_entries, 1e-9);
  EXPECT_NEAR(1e6 * r.probe_excess_seconds,
              probe_cost_us - probe_entries * 3 * 1.5 / scatter_entries, 1e-6);
}

TYPED_TEST(Adaptive, work_prices_make_each_arm_win_its_workload)
{
  using ExecutionSpace = TypeParam;
  struct Case
  {
    hw::Motion motion;
    Arm winner;
  };
  for (auto const &c :
       {Case{hw::Motion::drift, Arm::scheduled}, Case{hw::Motion::jump, Arm::scatter},
        Case{hw::Motion::frozen, Arm::exact_set}})
  {
    SCOPED_TRACE(hw::to_string(c.motion));
    auto const s = one_motion(c.motion, 40);
    Harness<ExecutionSpace> h(s.cols[0], small_options(), work_prices());
    h.run(s, 0, s.size());
    auto const &r = h.session.report();
    ASSERT_EQ(r.decisions.size(), 1u) << r;
    EXPECT_EQ(r.decisions[0].chosen, c.winner) << r;
    EXPECT_LE(h.error_vs_full_recompute(), 1e-13);
  }
}

// The drift -> jump -> drift run of several tests, under work_prices().
template <class ExecutionSpace>
struct ShiftRun
{
  Steps s = drift_jump_drift(grid());
  Harness<ExecutionSpace> h{s.cols[0], small_options(), work_prices()};
  ShiftRun() { h.run(s, 0, s.size()); }
};

TYPED_TEST(Adaptive, follows_drift_to_jump_and_back_within_the_documented_bound)
{
  using ExecutionSpace = TypeParam;
  ShiftRun<ExecutionSpace> run;
  auto const &r = run.h.session.report();
  auto const &o = run.h.session.options();
  std::int64_t const L = max_probe_length(o, true);
  SCOPED_TRACE(::testing::Message() << r);

  // Drift: the scheduled arm, and every decision before the jump keeps it.
  ASSERT_GE(r.decisions.size(), 3u);
  for (auto const &d : r.decisions)
  {
    if (d.step < std::int64_t(t1))
    {
      EXPECT_EQ(d.chosen, Arm::scheduled) << "step " << d.step;
    }
  }

  // Jump: the scheduled arm's compile rate starts a re-probe within
  // (H + 1) W + warmup steps; it is decided at most L steps later.
  auto const to_jump =
      std::find_if(r.decisions.begin(), r.decisions.end(),
                   [](auto const &d) { return d.chosen != Arm::scheduled; });
  ASSERT_NE(to_jump, r.decisions.end());
  EXPECT_TRUE(starts_with(to_jump->reason, "scheduled compile rate ")) << to_jump->reason;
  EXPECT_NE(to_jump->reason.find(" tiles/step vs "), std::string::npos);
  EXPECT_EQ(to_jump->chosen, Arm::scatter);
  EXPECT_GE(to_jump->probe_start, std::int64_t(t1));
  EXPECT_LE(to_jump->probe_start,
            std::int64_t(t1) + (o.shift_windows + 1) * o.window_steps + o.warmup_steps);
  EXPECT_GT(to_jump->step, to_jump->probe_start);
  EXPECT_LE(to_jump->step, to_jump->probe_start + L);

  // Drift again: the scatter arm has no compile rate, so the periodic
  // re-check finds it, within recheck_max_period + L steps.
  auto const back = std::find_if(to_jump, r.decisions.end(), [](auto const &d) {
    return d.chosen == Arm::scheduled;
  });
  ASSERT_NE(back, r.decisions.end());
  EXPECT_TRUE(starts_with(back->reason, "periodic re-check")) << back->reason;
  EXPECT_GE(back->probe_start, std::int64_t(t2));
  EXPECT_LE(back->step, std::int64_t(t2) + o.recheck_max_period + L);
  // Every decision between the two kept the scatter arm.
  for (auto d = to_jump; d != back; ++d)
    EXPECT_EQ(d->chosen, Arm::scatter) << "step " << d->step;
  EXPECT_EQ(r.active, r.decisions.back().chosen);
}

TYPED_TEST(Adaptive, decisions_are_identical_across_runs)
{
  using ExecutionSpace = TypeParam;
  ShiftRun<ExecutionSpace> first, second;
  auto const &a = first.h.session.report();
  auto const &b = second.h.session.report();
  ASSERT_EQ(a.decisions.size(), b.decisions.size());
  for (std::size_t i = 0; i < a.decisions.size(); ++i)
  {
    auto const &p = a.decisions[i];
    auto const &q = b.decisions[i];
    EXPECT_EQ(p.probe_start, q.probe_start);
    EXPECT_EQ(p.step, q.step);
    EXPECT_EQ(p.chosen, q.chosen);
    EXPECT_EQ(p.reason, q.reason);
    EXPECT_EQ(
        std::memcmp(p.us_per_step.data(), q.us_per_step.data(), sizeof(p.us_per_step)),
        0);
  }
  EXPECT_EQ(a.arm_steps, b.arm_steps);
  EXPECT_EQ(a.probe_steps, b.probe_steps);
  EXPECT_EQ(a.probe_seconds, b.probe_seconds);
}

TYPED_TEST(Adaptive, results_match_full_recompute_whichever_arm_runs)
{
  using ExecutionSpace = TypeParam;
  ShiftRun<ExecutionSpace> run;
  auto const &r = run.h.session.report();
  EXPECT_EQ(r.steps, std::int64_t(t3));
  EXPECT_EQ(r.arm_steps[0] + r.arm_steps[1] + r.arm_steps[2], r.steps);
  for (std::size_t a = 0; a < 3; ++a)
    EXPECT_GT(r.arm_steps[a], 0) << to_string(Arm(a)) << " never ran";
  EXPECT_LE(run.h.error_vs_full_recompute(), 1e-13);

  // The real clock: whatever it chooses, the answer is the same.
  auto const s = one_motion(hw::Motion::drift, 200, 4);
  Harness<ExecutionSpace> h(s.cols[0], {}, {}, false);
  h.run(s, 0, s.size());
  auto const &real = h.session.report();
  EXPECT_EQ(h.clock.reads, 0);
  ASSERT_GE(real.decisions.size(), 1u);
  EXPECT_GE(real.decisions[0].step, 3);
  EXPECT_LE(real.decisions[0].step, max_probe_length(h.session.options()));
  for (double us : real.decisions[0].us_per_step)
    EXPECT_TRUE(std::isfinite(us) && us > 0) << us;
  EXPECT_GT(real.probe_seconds, 0);
  EXPECT_LE(h.error_vs_full_recompute(), 1e-13);
}

TYPED_TEST(Adaptive, exact_set_compile_rate_sees_a_frozen_set_start_to_move)
{
  using ExecutionSpace = TypeParam;
  std::size_t const moves = 60;
  Steps const s = frozen_then_drift(int(moves), 60);
  auto options = small_options();
  options.recheck_period = options.recheck_max_period = 1000;
  // (Settling, tested apart, off: the scheduled arm's step 78 below, without
  // the tiles of its catch-up, would fall and warm up too.)
  options.scheduled_settle_steps = 0;
  // The scatter arm a little under 2x the scheduled arm's 1.0 us, off the
  // cut's tie (at 2.0 whether it was stopped rested on rounding).
  Prices prices = work_prices();
  prices.step[slot(Arm::scatter)] = 1.9;
  Harness<ExecutionSpace> h(s.cols[0], options, prices);
  h.run(s, 0, s.size());
  auto const &r = h.session.report();
  SCOPED_TRACE(::testing::Message() << r);
  ASSERT_GE(r.decisions.size(), 2u);
  EXPECT_EQ(r.decisions[0].chosen, Arm::exact_set);
  auto const &d = r.decisions[1];
  EXPECT_EQ(d.chosen, Arm::scheduled);
  // The initial probe is decided at 10 (scatter cut: 2.0 > 2 x 0.8), so
  // windows end at 19, 27, ...: the one ending at 67 holds 6 compiles in 8
  // steps (the set moves from step 61 on), the one ending at 75 holds 8, so
  // the re-probe starts at 75. There the exact-set arm's measured step
  // compiles (0.8 + 1.4 us) and the scheduled arm's (step 78, after its
  // warm-up) compiles no tile (1.0 us).
  EXPECT_EQ(d.probe_start, 75);
  ASSERT_EQ(entries(s.cols[76]), 320);
  ASSERT_EQ(entries(s.cols[78]), 320);
  EXPECT_EQ(d.reason, "exact_set compile rate 1.00 compiles/step vs 0.00 at probe; "
                      "exact_set cut after round 1 (6.875 ns/entry > 2.00 x 3.125 "
                      "ns/entry)");
  EXPECT_GE(d.probe_start, std::int64_t(moves));
  EXPECT_LE(d.probe_start, std::int64_t(moves) +
                               (options.shift_windows + 1) * options.window_steps +
                               options.warmup_steps);
}

// A set that moves once and stands again (a rare jump): the re-probe the
// move began runs the scheduled arm though none of its steps sees the set
// move, with or without a cost model (whose samples keep their ids, so the
// re-probe's first step is compared with the sample's).
TYPED_TEST(Adaptive, a_reprobe_for_a_moved_set_runs_the_scheduled_arm_on_a_standing_set)
{
  using ExecutionSpace = TypeParam;
  // Frozen for steps 0..36, the set of step 37 from then on.
  std::size_t const first_move = 37;
  Steps s = frozen_then_drift(int(first_move) - 1, 2);
  ASSERT_EQ(s.cols[first_move - 1], s.cols[0]);
  ASSERT_NE(s.cols[first_move], s.cols[0]);
  for (int i = 0; i < 60; ++i)
  {
    s.cols.push_back(s.cols.back());
    s.dx.push_back(s.dx.back());
  }
  for (bool const model : {false, true})
  {
    SCOPED_TRACE(model ? "with a cost model" : "without a cost model");
    auto options = small_options();
    options.defer_scheduled = true;
    options.recheck_period = options.recheck_max_period = 1000;
    if (model)
    {
      options.model.emplace();
      for (auto &arm : options.model->arm)
        arm = {1e-6, 1e-9, 0}; // every arm alike: nothing skipped, no flips
    }
    Harness<ExecutionSpace> h(s.cols[0], options, flat_prices(1.0, 1.2, 1.4));
    h.run(s, 0, s.size(), [](std::size_t) {});
    auto const &r = h.session.report();
    SCOPED_TRACE(::testing::Message() << r);
    ASSERT_EQ(r.decisions.size(), 2u);
    EXPECT_TRUE(std::isnan(r.decisions[0].us_per_step[slot(Arm::scheduled)]));
    auto const &d1 = r.decisions[1];
    EXPECT_EQ(d1.reason, "the set moved after a probe that deferred scheduled");
    EXPECT_EQ(d1.chosen, Arm::scheduled);
    EXPECT_GT(d1.measured_steps[slot(Arm::scheduled)], 0);
    EXPECT_LE(h.error_vs_full_recompute(), 1e-13);
  }
}

TYPED_TEST(Adaptive, frozen_set_defers_the_scheduled_arm_until_the_set_moves)
{
  using ExecutionSpace = TypeParam;
  // Frozen for steps 0..36 (the drift, same seed, starts from the frozen
  // set: its first move is at step 37), drift to step 95, then the last set
  // again. The clock makes the scheduled arm the cheapest (1.0 us against
  // 1.2 and 1.4): it still waits until the set moves.
  std::size_t const first_move = 37;
  Steps s = frozen_then_drift(int(first_move) - 1, 60);
  for (int i = 0; i < 40; ++i)
  {
    s.cols.push_back(s.cols.back());
    s.dx.push_back(s.dx.back());
  }
  ASSERT_EQ(s.cols[first_move - 1], s.cols[0]);
  ASSERT_NE(s.cols[first_move], s.cols[0]);
  auto options = small_options();
  options.defer_scheduled = true;
  options.recheck_period = options.recheck_max_period = 1000;
  Harness<ExecutionSpace> h(s.cols[0], options, flat_prices(1.0, 1.2, 1.4));
  std::vector<Arm> ran;
  std::size_t const reprobe_at = 110;
  h.run(s, 0, s.size(), [&](std::size_t i) {
    if (i == 8)
    {
      EXPECT_EQ(h.session.scheduled(), nullptr) << "made, though deferred";
    }
    if (i == reprobe_at)
      h.session.reprobe();
    ran.push_back(h.session.running());
  });
  auto const &r = h.session.report();
  SCOPED_TRACE(::testing::Message() << r);
  ASSERT_EQ(r.decisions.size(), 3u);
  Arm const X = Arm::exact_set, H = Arm::scheduled, C = Arm::scatter;

  // Round 1: the scheduled arm goes behind the others, and after four steps
  // on the same set it is deferred; round 2: 2 more measured steps each.
  std::vector<Arm> const initial = {X, X, C, C, X, X, C, C};
  EXPECT_EQ(std::vector<Arm>(ran.begin(), ran.begin() + 8), initial);
  auto const &d0 = r.decisions[0];
  EXPECT_EQ(d0.step, 8);
  EXPECT_EQ(d0.chosen, X);
  EXPECT_EQ(d0.measured_steps, (std::array<int, 3>{0, 3, 3}));
  EXPECT_TRUE(std::isnan(d0.us_per_step[slot(H)]));
  EXPECT_EQ(d0.reason, "initial probe; scheduled deferred (the same set on 4 steps)");

  // Settled from step 8, sampled at 8 + 1 + 31 = 40: the first sample after
  // the move sees another set and the re-probe starts at the next step. It
  // weighs the scheduled arm against the incumbent only (the scatter arm
  // lost to it at step 8). Its exact-set block (a warm-up on the new set, a
  // measured step) sees the set move, so the scheduled arm runs in its
  // turn, and wins.
  auto const &d1 = r.decisions[1];
  EXPECT_EQ(d1.probe_start, 41);
  EXPECT_LE(d1.probe_start, std::int64_t(first_move) + options.sample_period);
  EXPECT_EQ(d1.chosen, H);
  EXPECT_EQ(d1.measured_steps, (std::array<int, 3>{3, 3, 0}));
  EXPECT_EQ(d1.reason, "the set moved after a probe that deferred scheduled");
  EXPECT_EQ(std::vector<Arm>(ran.begin() + 41, ran.begin() + 45),
            (std::vector<Arm>{X, X, H, H}));

  // On the frozen set again, the incumbent scheduled arm is compared, not
  // deferred.
  auto const &d2 = r.decisions[2];
  EXPECT_EQ(d2.probe_start, std::int64_t(reprobe_at));
  EXPECT_EQ(d2.chosen, H);
  EXPECT_EQ(d2.measured_steps[slot(H)], 3);
  EXPECT_EQ(d2.reason, "reprobe() requested");
  EXPECT_LE(h.error_vs_full_recompute(), 1e-13);
}

TYPED_TEST(Adaptive, deferral_needs_the_set_seen_still_and_leaves_a_lone_arm)
{
  using ExecutionSpace = TypeParam;
  auto options = small_options();
  options.defer_scheduled = true;
  Arm const X = Arm::exact_set, H = Arm::scheduled, C = Arm::scatter;
  {
    SCOPED_TRACE("drift: the set moves between the exact-set arm's two steps");
    auto const s = one_motion(hw::Motion::drift, 40);
    Harness<ExecutionSpace> h(s.cols[0], options, flat_prices(1.0, 1.2, 1.4));
    h.run(s, 0, s.size());
    auto const &d = h.session.report().decisions.at(0);
    EXPECT_EQ(d.chosen, H);
    EXPECT_EQ(d.measured_steps, (std::array<int, 3>{3, 3, 3}));
    EXPECT_EQ(d.reason, "initial probe");
  }
  {
    SCOPED_TRACE("the scheduled arm alone runs, frozen or not");
    auto o = options;
    o.arms = {H};
    auto const s = one_motion(hw::Motion::frozen, 10);
    Harness<ExecutionSpace> h(s.cols[0], o, flat_prices(1.0, 1.2, 1.4));
    h.run(s, 0, s.size());
    auto const &d = h.session.report().decisions.at(0);
    EXPECT_EQ(d.chosen, H);
    EXPECT_EQ(d.measured_steps[slot(H)], 3);
  }
  {
    SCOPED_TRACE("listed first, it goes behind the exact-set arm and is deferred");
    auto o = options;
    o.arms = {H, X};
    auto const s = one_motion(hw::Motion::frozen, 10);
    Harness<ExecutionSpace> h(s.cols[0], o, flat_prices(1.0, 1.2, 1.4));
    std::vector<Arm> ran;
    h.run(s, 0, s.size(), [&](std::size_t) { ran.push_back(h.session.running()); });
    EXPECT_EQ(ran, std::vector<Arm>(s.size(), X));
    auto const &d = h.session.report().decisions.at(0);
    EXPECT_EQ(d.chosen, X);
    EXPECT_EQ(d.reason, "initial probe; scheduled deferred (the same set on 2 steps)");
    EXPECT_EQ(h.session.scheduled(), nullptr);
  }
  (void)C;
}

TYPED_TEST(Adaptive, a_jumping_set_defers_the_scheduled_arm_and_a_drift_does_not)
{
  using ExecutionSpace = TypeParam;
  // Churn 0.25 on k = 64 columns of a 100 x 100 grid: under jump 16 columns
  // enter per step, each in a column tile that the previous set does not
  // touch (a share of about 0.25 of the set per step); under drift they
  // enter beside the set, mostly in its tiles. The clock makes the scheduled
  // arm the cheapest, so only the deferral keeps it out. The default
  // defer_jump_share (0.15).
  auto const steps = [](hw::Motion m, int n) {
    auto const A = to_matrix<Kokkos::DefaultHostExecutionSpace>(grid());
    auto w = motion(m, 3);
    w.churn = 0.25;
    hw::Workload<Scalar, Ordinal> workload(A, w);
    Steps s;
    s.take(workload, n);
    return s;
  };
  auto options = small_options();
  options.defer_scheduled = true;
  options.recheck_period = options.recheck_max_period = 1000;
  Arm const X = Arm::exact_set, H = Arm::scheduled, C = Arm::scatter;
  {
    SCOPED_TRACE("jump: deferred at its turn, after the exact-set arm's block");
    auto const s = steps(hw::Motion::jump, 100);
    Harness<ExecutionSpace> h(s.cols[0], options, flat_prices(1.0, 1.2, 1.4));
    std::vector<Arm> ran;
    h.run(s, 0, s.size(), [&](std::size_t) { ran.push_back(h.session.running()); });
    auto const &r = h.session.report();
    // Round 1: exact set (steps 0-1; its second step sees the set move), the
    // scheduled arm's turn at step 2 (one pair of steps seen): deferred;
    // scatter (2-3). Round 2: exact set 3, scatter 3 (warm-ups: the set
    // moves). Then settled on the exact-set arm: the moving set is not
    // watched, so no re-probe follows (its compile rate stays at its
    // probe's, every step).
    ASSERT_EQ(r.decisions.size(), 1u) << r;
    auto const &d = r.decisions[0];
    EXPECT_EQ(d.chosen, X);
    EXPECT_EQ(d.measured_steps, (std::array<int, 3>{0, 3, 3}));
    EXPECT_EQ(std::vector<Arm>(ran.begin(), ran.begin() + 4),
              (std::vector<Arm>{X, X, C, C}));
    EXPECT_TRUE(starts_with(d.reason, "initial probe; scheduled deferred (the set jumps: "
                                      "entering columns opened 0.2"))
        << d.reason;
    EXPECT_NE(d.reason.find(" column tiles per set column per step over 1 pair of "
                            "steps, >= 0.15)"),
              std::string::npos)
        << d.reason;
    EXPECT_EQ(r.arm_steps[slot(H)], 0);
    EXPECT_EQ(h.session.scheduled(), nullptr); // never run, never made
    EXPECT_LE(h.error_vs_full_recompute(), 1e-13);
  }
  {
    SCOPED_TRACE("drift, the same churn: the scheduled arm runs and wins");
    auto const s = steps(hw::Motion::drift, 40);
    Harness<ExecutionSpace> h(s.cols[0], options, flat_prices(1.0, 1.2, 1.4));
    h.run(s, 0, s.size());
    auto const &d = h.session.report().decisions.at(0);
    EXPECT_EQ(d.chosen, H);
    EXPECT_EQ(d.reason, "initial probe");
  }
  {
    SCOPED_TRACE("jump, the rule off (a share above 1)");
    auto o = options;
    o.defer_jump_share = 2;
    auto const s = steps(hw::Motion::jump, 40);
    Harness<ExecutionSpace> h(s.cols[0], o, flat_prices(1.0, 1.2, 1.4));
    h.run(s, 0, s.size());
    auto const &d = h.session.report().decisions.at(0);
    EXPECT_EQ(d.chosen, H);
    EXPECT_EQ(d.reason, "initial probe");
  }
}

TYPED_TEST(Adaptive, one_shifted_window_does_not_start_a_probe)
{
  using ExecutionSpace = TypeParam;
  // The exact-set arm settles on a frozen set; then the set changes on every
  // step of one window (rate 1 vs 0), and later of shift_windows windows.
  auto options = small_options(); // W = 8, H = 2, warm-up 1
  options.recheck_period = options.recheck_max_period = 1000;
  auto const base = one_motion(hw::Motion::drift, 2, 9);
  Steps s;
  auto frozen_until = [&](std::int64_t end) {
    while (std::int64_t(s.size()) < end)
      s.cols.push_back(base.cols[0]), s.dx.push_back(base.dx[0]);
  };
  auto moving_until = [&](std::int64_t end) {
    while (std::int64_t(s.size()) < end)
    {
      s.cols.push_back(base.cols[s.size() % 2]);
      s.dx.push_back(base.dx[0]);
    }
  };
  // The initial probe: a warm-up and a measured step each of exact set,
  // scheduled (1.8 us) and scatter (cut: 3 > 2 x 1), then 2 steps each of
  // exact set and scheduled: decided at 10. Windows begin at 11 and end at
  // 19, 27, ... (a window [b, e) counts the compiles of steps b to e - 1; the
  // set changes on steps 21 to 28 and 45 to 60).
  frozen_until(20);
  moving_until(28); // one shifted window: [19, 27) (6); [27, 35) has 2
  frozen_until(44);
  moving_until(60); // two: [43, 51) (6) and [51, 59) (8)
  frozen_until(82);
  Harness<ExecutionSpace> h(s.cols[0], options, flat_prices(1.8, 1.0, 3.0));
  h.run(s, 0, s.size());
  auto const &r = h.session.report();
  SCOPED_TRACE(::testing::Message() << r);
  ASSERT_EQ(r.decisions.size(), 2u);
  EXPECT_EQ(r.decisions[0].step, 10);
  EXPECT_EQ(r.decisions[1].probe_start, 59);
  EXPECT_TRUE(starts_with(r.decisions[1].reason,
                          "exact_set compile rate 1.00 compiles/step vs 0.00 at probe"))
      << r.decisions[1].reason;
  EXPECT_EQ(r.decisions[1].chosen, Arm::exact_set);
}

// The step-time detector's runs: a frozen set, prices (1.0, 1.8, 4.0) and no
// periodic re-check. The initial probe: a warm-up and a measured step each of
// exact set (1.8 us), scheduled (1.0 us) and scatter (4.0 us > 2 x 1.0,
// cut), then 2 steps each of scheduled and exact set: decided at 10 for the
// scheduled arm, whose probe mean (1.0 us) is the reference. Samples at
// 10 + 32 j: 42, 74, 106, 138, ...
hst::AdaptiveOptions time_options()
{
  auto o = small_options();
  o.recheck_period = o.recheck_max_period = 0;
  return o;
}
Prices const time_prices = flat_prices(1.0, 1.8, 4.0);

TYPED_TEST(Adaptive, step_time_rise_reprobes_within_the_documented_bound)
{
  using ExecutionSpace = TypeParam;
  auto const s = one_motion(hw::Motion::frozen, 200);
  auto const options = time_options(); // P = 32, H = 2, ratio 1.5
  Harness<ExecutionSpace> h(s.cols[0], options, time_prices);
  // The scheduled arm's price rises 3x from step 43, right after the sample
  // at 42: the worst case. The sample at 74 is shifted (3.0 > 1.5 x 1.0),
  // and so is its confirmation at 75, so the re-probe starts at 76 = 43 + P
  // + H - 1, the documented bound. There, on the same frozen set, the arms
  // idle since the decision warm up once: exact set (warm-up + 1.8),
  // scheduled (active: 3.0), scatter (warm-up + 4.0 > 2 x 1.8, cut), then 2
  // steps each of exact set and scheduled: decided at 85 for the exact-set
  // arm, now the cheaper (1.8 < 0.95 x 3.0). Its samples (117, 149, 181)
  // match its mean.
  std::int64_t const shift = 43;
  h.run_repriced(s, {{shift, flat_prices(3.0, 1.8, 4.0)}});
  auto const &r = h.session.report();
  SCOPED_TRACE(::testing::Message() << r);
  ASSERT_EQ(r.decisions.size(), 2u);
  EXPECT_EQ(r.decisions[0].step, 10);
  EXPECT_EQ(r.decisions[0].chosen, Arm::scheduled);
  auto const &d = r.decisions[1];
  EXPECT_EQ(d.probe_start, shift + options.sample_period + options.shift_windows - 1);
  EXPECT_EQ(d.probe_start, 76);
  EXPECT_EQ(d.step, 85);
  EXPECT_LE(d.step, d.probe_start + max_probe_length(options, true));
  EXPECT_EQ(d.chosen, Arm::exact_set);
  EXPECT_EQ(d.reason, "scheduled step time 9.375 ns/entry vs 3.125 ns/entry at probe (2 "
                      "samples); scatter cut after round 1 (12.500 ns/entry > 2.00 x "
                      "5.625 ns/entry)");
  EXPECT_NEAR(d.us_per_step[slot(Arm::scheduled)], 3.0, 1e-9);
  EXPECT_NEAR(d.us_per_step[slot(Arm::exact_set)], 1.8, 1e-9);
  EXPECT_EQ(h.session.active(), Arm::exact_set);
  // Samples at 42, 74, 75, 117, 149, 181: 2 reads each, 2 per probe step
  // and 2 more per exact-set probe step (4 in each probe).
  EXPECT_EQ(r.sampled_steps, 6);
  EXPECT_NEAR(1e6 * r.sampled_seconds, 1.0 + 3.0 + 3.0 + 3 * 1.8, 1e-9);
  EXPECT_EQ(r.probe_steps, 10 + 9);
  // The exact-set arm's first step compiles (timed apart); on this frozen set
  // no compile is asked for after it, in either probe.
  EXPECT_EQ(r.probe_compiles, 1);
  EXPECT_EQ(h.clock.reads, 2 * (r.probe_steps + r.sampled_steps) + 2);
  EXPECT_EQ(h.clock.reads, clock_reads(r));
  std::ostringstream out;
  out << r;
  EXPECT_NE(out.str().find("\n  sampled: 6 settled steps, 12.400 us\n"),
            std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("step 85: exact_set (probed from step 76;"),
            std::string::npos);
  EXPECT_LE(h.error_vs_full_recompute(), 1e-13);

  // The best case: the rise begins at a sample (74) and is confirmed at 75;
  // the same probe, from 76: H steps after the rise instead of P + H - 1.
  Harness<ExecutionSpace> early(s.cols[0], options, time_prices);
  early.run_repriced(s, {{74, flat_prices(3.0, 1.8, 4.0)}});
  auto const &e = early.session.report().decisions;
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[1].probe_start, 74 + options.shift_windows);
  EXPECT_EQ(e[1].chosen, Arm::exact_set);
}

TYPED_TEST(Adaptive, scheduled_arm_warms_up_longer_in_a_reprobe_a_rise_began)
{
  using ExecutionSpace = TypeParam;
  // Drift: the first probe chooses the scatter arm (1.0 us against 2.0);
  // from step 30 its price triples, and the sampled rise starts a re-probe.
  // scheduled_rise_warmup = 1 gives each of the scheduled arm's two blocks
  // there one more warm-up step; the first probe is the same.
  auto const s = one_motion(hw::Motion::drift, 160);
  auto const decisions = [&](int rise_warmup) {
    auto options = time_options();
    options.scheduled_rise_warmup = rise_warmup;
    Harness<ExecutionSpace> h(s.cols[0], options, flat_prices(2.0, 2.0, 1.0));
    h.run_repriced(s, {{30, flat_prices(2.0, 2.0, 3.0)}});
    EXPECT_LE(h.error_vs_full_recompute(), 1e-13);
    return h.session.report().decisions;
  };
  auto const off = decisions(0), on = decisions(1);
  ASSERT_EQ(off.size(), 2u);
  ASSERT_EQ(on.size(), 2u);
  EXPECT_EQ(off[0].chosen, Arm::scatter);
  EXPECT_EQ(on[0].step, off[0].step);
  EXPECT_EQ(on[0].warmup_steps, off[0].warmup_steps);
  EXPECT_EQ(on[1].probe_start, off[1].probe_start);
  EXPECT_EQ(off[1].reason.rfind("scatter step time", 0), 0u) << off[1].reason;
  auto expected = off[1].warmup_steps;
  expected[slot(Arm::scheduled)] += 2;
  EXPECT_EQ(on[1].warmup_steps, expected);
  EXPECT_EQ(on[1].measured_steps, off[1].measured_steps);
  EXPECT_EQ(on[1].step, off[1].step + 2);
}

TYPED_TEST(Adaptive, scheduled_arm_warms_up_while_its_steps_fall_in_a_reprobe)
{
  using ExecutionSpace = TypeParam;
  // Drift: the first probe chooses the scatter arm (1.0 us against 1.8 and
  // 5.0); from step 30 its price triples, and the sampled rise starts a
  // re-probe. There the scheduled arm's steps cost 8 (its catch-up), 4, 3.2,
  // then 2 us: still falling by more than 10% a step until its fourth.
  // scheduled_settle_steps = s takes up to s of them as further warm-up:
  // 0 measures 4 us, 1 measures 3.2 (neither below 3.0: scatter kept), 5
  // measures 2 after three further warm-ups (the second step at 2 does not
  // fall): the scheduled arm.
  auto const s = one_motion(hw::Motion::drift, 160);
  std::array<double, 4> const settling = {8.0, 4.0, 3.2, 2.0};
  auto const decisions = [&](int settle_steps) {
    auto options = time_options();
    options.measure_steps = 1;
    options.scheduled_settle_steps = settle_steps;
    Harness<ExecutionSpace> h(s.cols[0], options, flat_prices(1.8, 5.0, 1.0));
    std::size_t reprobe_steps = 0; // the scheduled arm's, in the re-probe
    h.run(s, 0, s.cols.size(), [&](std::size_t i) {
      if (i == 30)
        h.clock.prices.step[slot(Arm::scatter)] = 3.0;
      if (h.session.probing() && h.session.report().decisions.size() == 1 &&
          h.session.running() == Arm::scheduled)
        h.clock.prices.step[slot(Arm::scheduled)] =
            settling[std::min(reprobe_steps++, settling.size() - 1)];
    });
    EXPECT_LE(h.error_vs_full_recompute(), 1e-13);
    return h.session.report().decisions;
  };
  auto const off = decisions(0), one = decisions(1), on = decisions(5);
  ASSERT_EQ(off.size(), 2u);
  ASSERT_EQ(one.size(), 2u);
  ASSERT_EQ(on.size(), 2u);
  // The first probe (not a re-probe) is the same.
  EXPECT_EQ(off[0].chosen, Arm::scatter);
  EXPECT_EQ(on[0].step, off[0].step);
  EXPECT_EQ(on[0].warmup_steps, off[0].warmup_steps);
  EXPECT_EQ(off[1].reason.rfind("scatter step time", 0), 0u) << off[1].reason;
  EXPECT_EQ(on[1].probe_start, off[1].probe_start);
  EXPECT_EQ(one[1].probe_start, off[1].probe_start);
  std::size_t const h = slot(Arm::scheduled);
  EXPECT_EQ(off[1].chosen, Arm::scatter);
  EXPECT_NEAR(off[1].us_per_step[h], 4.0, 1e-9);
  EXPECT_EQ(one[1].chosen, Arm::scatter);
  EXPECT_NEAR(one[1].us_per_step[h], 3.2, 1e-9);
  EXPECT_EQ(one[1].warmup_steps[h], off[1].warmup_steps[h] + 1);
  EXPECT_EQ(on[1].chosen, Arm::scheduled);
  EXPECT_NEAR(on[1].us_per_step[h], 2.0, 1e-9);
  EXPECT_EQ(on[1].warmup_steps[h], off[1].warmup_steps[h] + 3);
  EXPECT_EQ(on[1].measured_steps, off[1].measured_steps);
  EXPECT_EQ(on[1].step, off[1].step + 3);
}

TYPED_TEST(Adaptive, scheduled_arm_near_a_tie_in_a_reprobe_on_a_moving_set_is_confirmed)
{
  using ExecutionSpace = TypeParam;
  // Drift, one measured step per arm, no settle steps: the first probe
  // chooses the scatter arm (1.0 us against 1.8 and 5.0); from step 30 its
  // price triples, and the sampled rise starts a re-probe. There the
  // scheduled arm's first block (its catch-up, then one measured step) runs
  // at `first_block` us a step. At 3.5, within scheduled_confirm_ratio
  // (1.25) of the scatter arm's 3.0, the two run a second block each (one
  // warm-up step, then 3 measured), the scheduled arm's steps at
  // `confirming` us: 2.0 wins the decision, 3.5 keeps the scatter arm. At 4.0
  // (above 1.25x) there is no confirmation, nor on a set that does not move
  // (frozen), nor with scheduled_confirm_steps = 0, nor in the first probe
  // (the scheduled arm at 1.2 there does not start one).
  struct Probe
  {
    std::vector<hst::AdaptiveDecision> decisions;
    std::int64_t scheduled_reprobe_steps = 0;
  };
  auto const probe = [&](hw::Motion motion, int confirm_steps, double first_block,
                         double confirming, double first_probe_scheduled = 1.8) {
    auto const s = one_motion(motion, 120);
    auto options = time_options();
    options.measure_steps = 1;
    options.scheduled_settle_steps = 0;
    options.scheduled_confirm_steps = confirm_steps;
    Harness<ExecutionSpace> h(s.cols[0], options,
                              flat_prices(first_probe_scheduled, 5.0, 1.0));
    std::int64_t scheduled_steps = 0;
    h.run(s, 0, s.size(), [&](std::size_t i) {
      if (i == 30)
        h.clock.prices.step[slot(Arm::scatter)] = 3.0;
      auto const &r = h.session.report();
      if (h.session.probing() && r.decisions.size() == 1 &&
          h.session.running() == Arm::scheduled)
        h.clock.prices.step[slot(Arm::scheduled)] =
            scheduled_steps++ < 2 ? first_block : confirming;
    });
    auto const &r = h.session.report();
    EXPECT_EQ(h.clock.reads, clock_reads(r));
    EXPECT_LE(h.error_vs_full_recompute(), 1e-13);
    return Probe{r.decisions, scheduled_steps};
  };
  std::size_t const h = slot(Arm::scheduled), c = slot(Arm::scatter);
  std::string const confirmed = "scheduled and scatter confirmed on 3 more steps each";
  auto const off = probe(hw::Motion::drift, 0, 3.5, 2.0);
  ASSERT_EQ(off.decisions.size(), 2u);
  EXPECT_EQ(off.decisions[0].chosen, Arm::scatter);
  EXPECT_EQ(off.decisions[1].reason.rfind("scatter step time", 0), 0u)
      << off.decisions[1].reason;
  EXPECT_EQ(off.decisions[1].chosen, Arm::scatter);
  EXPECT_EQ(off.scheduled_reprobe_steps, 2);

  auto const wins = probe(hw::Motion::drift, 3, 3.5, 2.0);
  ASSERT_EQ(wins.decisions.size(), 2u);
  auto const &w = wins.decisions[1], &o = off.decisions[1];
  EXPECT_EQ(w.probe_start, o.probe_start);
  EXPECT_EQ(w.chosen, Arm::scheduled) << w.reason;
  EXPECT_NEAR(w.us_per_step[h], 2.0, 1e-9);
  EXPECT_NEAR(w.us_per_step[c], 3.0, 1e-9);
  EXPECT_EQ(w.measured_steps[h], 3);
  EXPECT_EQ(w.measured_steps[c], 3);
  // each first block's measured step is counted as warm-up, and so is each
  // confirming block's first step
  EXPECT_EQ(w.warmup_steps[h], o.warmup_steps[h] + 2);
  EXPECT_EQ(w.warmup_steps[c], o.warmup_steps[c] + 2);
  EXPECT_EQ(w.step, o.step + 8);
  EXPECT_EQ(wins.scheduled_reprobe_steps, 6);
  EXPECT_NE(w.reason.find(confirmed), std::string::npos) << w.reason;

  auto const loses = probe(hw::Motion::drift, 3, 3.5, 3.5);
  ASSERT_EQ(loses.decisions.size(), 2u);
  EXPECT_EQ(loses.decisions[1].chosen, Arm::scatter);
  EXPECT_NEAR(loses.decisions[1].us_per_step[h], 3.5, 1e-9);
  EXPECT_EQ(loses.decisions[1].step, o.step + 8);
  EXPECT_NE(loses.decisions[1].reason.find(confirmed), std::string::npos)
      << loses.decisions[1].reason;

  auto const far = probe(hw::Motion::drift, 3, 4.0, 2.0);
  ASSERT_EQ(far.decisions.size(), 2u);
  EXPECT_EQ(far.decisions[1].chosen, Arm::scatter);
  EXPECT_EQ(far.decisions[1].step, o.step);
  EXPECT_EQ(far.scheduled_reprobe_steps, 2);

  auto const still = probe(hw::Motion::frozen, 3, 3.5, 2.0);
  ASSERT_GE(still.decisions.size(), 2u);
  EXPECT_EQ(still.decisions[1].chosen, Arm::scatter);
  EXPECT_EQ(still.decisions[1].reason.find("confirmed"), std::string::npos)
      << still.decisions[1].reason;
  EXPECT_EQ(still.scheduled_reprobe_steps, 2);

  // In the first probe the scheduled arm at 1.2 us, within 1.25x of the
  // scatter arm, is not confirmed.
  auto const first = probe(hw::Motion::drift, 3, 3.5, 2.0, 1.2);
  ASSERT_GE(first.decisions.size(), 1u);
  EXPECT_EQ(first.decisions[0].step, off.decisions[0].step);
  EXPECT_EQ(first.decisions[0].reason.find("confirmed"), std::string::npos)
      << first.decisions[0].reason;
}

TYPED_TEST(Adaptive, step_time_rise_of_an_exact_set_arm_that_compiles_every_step_reprobes)
{
  using ExecutionSpace = TypeParam;
  // Under jump the set changes on every step: the exact-set arm (1 us a
  // step, 0.5 us a compile) is chosen, and every sample of it compiles.
  // They are compared with its cost with a compile (1.5 us), not skipped
  // as samples that compile are where its probe had steps without one. The
  // decision is at step 9, the samples at 41, 73, ...; its step rises to 3
  // us at step 43: the samples at 73 and 74 read 3.5 us > 1.5 x 1.5, and a
  // re-probe starts at 75.
  auto const s = one_motion(hw::Motion::jump, 120);
  auto const options = time_options();
  Prices prices = flat_prices(9.0, 1.0, 4.0);
  prices.compile = 0.5;
  Harness<ExecutionSpace> h(s.cols[0], options, prices);
  Prices risen = prices;
  risen.step[slot(Arm::exact_set)] = 3.0;
  h.run_repriced(s, {{43, risen}});
  auto const &r = h.session.report();
  SCOPED_TRACE(::testing::Message() << r);
  ASSERT_GE(r.decisions.size(), 2u);
  EXPECT_EQ(r.decisions[0].chosen, Arm::exact_set);
  EXPECT_EQ(r.decisions[0].step, 9);
  auto const &d = r.decisions[1];
  EXPECT_EQ(d.probe_start, 75);
  std::string const begins = "exact_set step time";
  EXPECT_EQ(d.reason.substr(0, begins.size()), begins) << d.reason;
  EXPECT_EQ(h.clock.reads, clock_reads(r));
  EXPECT_LE(h.error_vs_full_recompute(), 1e-13);
}

TYPED_TEST(Adaptive, one_slow_sample_or_a_faster_step_does_not_reprobe)
{
  using ExecutionSpace = TypeParam;
  auto const s = one_motion(hw::Motion::frozen, 240);
  Harness<ExecutionSpace> h(s.cols[0], time_options(), time_prices);
  // Samples at 42, 74, ..., 234. The scheduled arm is 3x slower on the
  // sampled steps 74 and 138 only (each is confirmed on the next step,
  // which is not shifted, so the count restarts: samples 75 and 139 too),
  // on steps 80 to 99 (not sampled: not seen), and from 150 on 0.3x as fast
  // (a fall does not count).
  h.run(s, 0, s.size(), [&](std::size_t i) {
    bool const slow = i == 74 || i == 138 || (i >= 80 && i < 100);
    h.clock.prices = flat_prices(slow ? 3.0 : i >= 150 ? 0.3 : 1.0, 1.8, 4.0);
  });
  auto const &r = h.session.report();
  SCOPED_TRACE(::testing::Message() << r);
  ASSERT_EQ(r.decisions.size(), 1u);
  EXPECT_EQ(h.session.active(), Arm::scheduled);
  EXPECT_FALSE(h.session.probing());
  EXPECT_EQ(r.sampled_steps, 9);
  EXPECT_NEAR(1e6 * r.sampled_seconds, 1.0 + 3.0 + 1.0 + 1.0 + 3.0 + 1.0 + 3 * 0.3, 1e-9);
  EXPECT_EQ(h.clock.reads, 2 * (10 + 9) + 2); // the exact-set arm's first compile
  EXPECT_EQ(h.clock.reads, clock_reads(r));
}

TYPED_TEST(Adaptive, samples_that_compile_are_not_compared_with_a_compile_free_reference)
{
  using ExecutionSpace = TypeParam;
  // Exact set 1.0 us a step plus 1.4 us per set compile, scheduled 1.8,
  // scatter 4.0. The initial probe (as in time_options(), with the roles of
  // exact set and scheduled swapped) decides at 10 for the exact-set arm;
  // its measured steps compiled nothing, so its reference is 1.0 us. The set
  // changes on the sampled steps 42, 74, ..., 170 only (and back on the next
  // step): each sample compiles (2.4 us > 1.5 x 1.0) and is skipped. Two
  // compiles per 8-step window stay below the compile-rate detector's floor.
  auto s = one_motion(hw::Motion::frozen, 200);
  Set const other = one_motion(hw::Motion::frozen, 1, 2).cols[0];
  ASSERT_NE(other, s.cols[0]);
  for (std::size_t i = 42; i < s.size(); i += 32)
    s.cols[i] = other;
  Prices prices = flat_prices(1.8, 1.0, 4.0);
  prices.compile = 1.4;
  Harness<ExecutionSpace> h(s.cols[0], time_options(), prices);
  h.run(s, 0, s.size());
  auto const &r = h.session.report();
  SCOPED_TRACE(::testing::Message() << r);
  ASSERT_EQ(r.decisions.size(), 1u);
  EXPECT_EQ(r.decisions[0].step, 10);
  EXPECT_EQ(r.decisions[0].chosen, Arm::exact_set);
  EXPECT_EQ(r.sampled_steps, 5);
  EXPECT_NEAR(1e6 * r.sampled_seconds, 5 * 2.4, 1e-9);
  EXPECT_EQ(h.session.exact_set()->compiles(), 1 + 2 * 5);
  EXPECT_LE(h.error_vs_full_recompute(), 1e-13);
}

TYPED_TEST(Adaptive, settled_compiles_after_a_still_probe_read_no_clock)
{
  using ExecutionSpace = TypeParam;
  // A frozen set for 20 steps, then a drift. The probe (decided at step 8:
  // the other arms cut after round 1) sees no move: the exact-set arm's
  // probe steps after its first compile nothing and ask for none, and the
  // arm is chosen. From step 21 its settled steps compile the moving set:
  // none of them is timed before the first sample (40) or a compile-rate
  // re-probe (windows of 8 steps from step 9, the first full one shifted
  // [25, 33), two needed: not before step 41).
  auto const s = frozen_then_drift(20, 40);
  Harness<ExecutionSpace> h(s.cols[0], time_options(), flat_prices(3.0, 1.0, 3.0));
  h.run(s, 0, 21);
  ASSERT_FALSE(h.session.probing());
  ASSERT_EQ(h.session.active(), Arm::exact_set);
  EXPECT_EQ(h.session.report().decisions.at(0).step, 8);
  auto const compiles = h.session.exact_set()->compiles();
  long const reads = h.clock.reads;
  h.run(s, 21, 40);
  EXPECT_EQ(h.session.exact_set()->compiles() - compiles, 19); // the set moved
  EXPECT_FALSE(h.session.probing());
  EXPECT_EQ(h.clock.reads, reads) << "settled compiles read the clock";
  EXPECT_LE(h.error_vs_full_recompute(), 1e-13);
}

TYPED_TEST(Adaptive, sample_period_zero_turns_the_step_time_detector_off)
{
  using ExecutionSpace = TypeParam;
  auto const s = one_motion(hw::Motion::frozen, 200);
  auto options = time_options();
  options.sample_period = 0;
  Harness<ExecutionSpace> h(s.cols[0], options, time_prices);
  // The rise that re-probes at 76 with samples (see above) goes unseen.
  h.run_repriced(s, {{43, flat_prices(3.0, 1.8, 4.0)}});
  auto const &r = h.session.report();
  SCOPED_TRACE(::testing::Message() << r);
  ASSERT_EQ(r.decisions.size(), 1u);
  EXPECT_EQ(h.session.active(), Arm::scheduled);
  EXPECT_EQ(r.sampled_steps, 0);
  // the probe's steps only, and the exact-set arm's first compile (the set
  // is frozen: none asked for after it)
  EXPECT_EQ(h.clock.reads, 2 * 10 + 2);
  EXPECT_EQ(h.clock.reads, clock_reads(r));
}

TYPED_TEST(Adaptive, reprobe_probes_at_the_next_step)
{
  using ExecutionSpace = TypeParam;
  auto const s = one_motion(hw::Motion::frozen, 80);
  auto options = small_options();
  options.recheck_period = 0; // no periodic re-check
  options.recheck_max_period = 0;
  // Initial probe: 6 + 2 + 2 steps (each arm a warm-up and a measured step;
  // scatter cut); a re-probe on the same frozen set warms up only the arms
  // idle since the decision: 5 + 2 + 2 steps.
  Harness<ExecutionSpace> h(s.cols[0], options, flat_prices(1.0, 1.8, 3.0));
  h.run(s, 0, 30);
  h.session.reprobe(); // same prices: keeps the scheduled arm
  EXPECT_TRUE(h.session.probing());
  EXPECT_EQ(h.session.running(), options.arms[0]);
  EXPECT_EQ(h.session.active(), Arm::scheduled);
  h.run(s, 30, 35);
  h.session.reprobe(); // during a probe: nothing
  h.run(s, 35, 50);
  h.clock.prices = flat_prices(3.0, 1.8, 1.0);
  h.session.reprobe();
  h.run(s, 50, s.size());
  auto const &r = h.session.report();
  SCOPED_TRACE(::testing::Message() << r);
  ASSERT_EQ(r.decisions.size(), 3u);
  EXPECT_EQ(r.decisions[0].step, 10);
  EXPECT_EQ(r.decisions[1].probe_start, 30);
  EXPECT_EQ(r.decisions[1].step, 39);
  EXPECT_TRUE(starts_with(r.decisions[1].reason, "reprobe() requested; scatter cut"))
      << r.decisions[1].reason;
  EXPECT_EQ(r.decisions[1].chosen, Arm::scheduled);
  EXPECT_EQ(r.decisions[2].probe_start, 50);
  EXPECT_EQ(r.decisions[2].step, 59);
  EXPECT_EQ(r.decisions[2].chosen, Arm::scatter);
  EXPECT_TRUE(starts_with(r.decisions[2].reason, "reprobe() requested; scheduled cut"))
      << r.decisions[2].reason;
  EXPECT_EQ(r.probe_steps, 10 + 9 + 9);
}

TYPED_TEST(Adaptive, periodic_recheck_backs_off_and_resets_on_a_change)
{
  using ExecutionSpace = TypeParam;
  auto const s = one_motion(hw::Motion::frozen, 600);
  auto options = small_options(); // P = 48 .. 192
  // The re-checks alone: the step-time detector would see the rise at 300
  // first (samples at 300 and 301 re-probe at 302).
  options.sample_period = 0;
  Harness<ExecutionSpace> h(s.cols[0], options, flat_prices(1.0, 1.8, 3.0));
  // The initial probe takes 10 steps (each arm a warm-up and a measured
  // step, one cut, 2 + 2 more), each re-probe 9 (the two arms idle since the
  // decision warm up; one arm is cut). Re-checks after 48, 96, 192 settled
  // steps: probes from 58, 163, 364; at 300 the prices change, so the probe
  // from 364 switches to scatter and the period resets: probes from 421,
  // 526.
  h.run_repriced(s, {{300, flat_prices(3.0, 1.8, 1.0)}});
  auto const &r = h.session.report();
  SCOPED_TRACE(::testing::Message() << r);
  std::vector<std::int64_t> starts, steps;
  for (auto const &d : r.decisions)
    starts.push_back(d.probe_start), steps.push_back(d.step);
  EXPECT_EQ(starts, (std::vector<std::int64_t>{0, 58, 163, 364, 421, 526}));
  EXPECT_EQ(steps, (std::vector<std::int64_t>{10, 67, 172, 373, 430, 535}));
  for (std::size_t i = 1; i < r.decisions.size(); ++i)
    EXPECT_TRUE(starts_with(r.decisions[i].reason, "periodic re-check; "))
        << r.decisions[i].reason;
  EXPECT_EQ(r.decisions[2].chosen, Arm::scheduled);
  EXPECT_EQ(r.decisions[3].chosen, Arm::scatter);
}

TYPED_TEST(Adaptive, switch_margin_keeps_the_active_arm_against_a_near_tie)
{
  using ExecutionSpace = TypeParam;
  auto const s = one_motion(hw::Motion::frozen, 200);
  auto options = small_options(); // switch_margin 0.05
  Harness<ExecutionSpace> h(s.cols[0], options, flat_prices(1.0, 1.8, 3.0));
  // From step 20 the scatter arm is 4% faster (not enough), from 80 6%.
  h.run_repriced(s,
                 {{20, flat_prices(1.0, 1.8, 0.96)}, {80, flat_prices(1.0, 1.8, 0.94)}});
  auto const &r = h.session.report();
  SCOPED_TRACE(::testing::Message() << r);
  // Decisions at 10 (scatter cut), 58 + 11 = 69 (no arm cut; the two arms
  // idle since the decision warm up; kept: the period doubles to 96) and
  // 165 + 11.
  ASSERT_EQ(r.decisions.size(), 3u);
  EXPECT_EQ(r.decisions[1].step, 69);
  EXPECT_EQ(r.decisions[1].chosen, Arm::scheduled);
  EXPECT_NEAR(r.decisions[1].us_per_step[slot(Arm::scatter)], 0.96, 1e-9);
  EXPECT_EQ(r.decisions[2].probe_start, 165);
  EXPECT_EQ(r.decisions[2].step, 176);
  EXPECT_EQ(r.decisions[2].chosen, Arm::scatter);
  EXPECT_NEAR(r.decisions[2].us_per_step[slot(Arm::scatter)], 0.94, 1e-9);
}

// The cut never undoes the margin: with cut_ratio 1 the re-probe's round 1
// would cut the active scheduled arm (1.0 against the scatter arm's 0.96);
// its ratio is held at 1 / (1 - switch_margin), so it runs its measured
// steps and the margin keeps it. A challenger gets no such hold.
TYPED_TEST(Adaptive, a_low_cut_ratio_does_not_undo_the_switch_margin)
{
  using ExecutionSpace = TypeParam;
  auto const s = one_motion(hw::Motion::frozen, 120);
  auto options = small_options(); // switch_margin 0.05
  options.cut_ratio = 1;
  Harness<ExecutionSpace> h(s.cols[0], options, flat_prices(1.0, 1.8, 3.0));
  h.run_repriced(s, {{20, flat_prices(1.0, 1.8, 0.96)}});
  auto const &r = h.session.report();
  SCOPED_TRACE(::testing::Message() << r);
  ASSERT_GE(r.decisions.size(), 2u);
  EXPECT_EQ(r.decisions[0].chosen, Arm::scheduled);
  auto const &d = r.decisions[1];
  EXPECT_EQ(d.chosen, Arm::scheduled);
  EXPECT_EQ(d.measured_steps[slot(Arm::scheduled)], 3);
  EXPECT_EQ(d.measured_steps[slot(Arm::scatter)], 3);
  EXPECT_EQ(d.measured_steps[slot(Arm::exact_set)], 1); // cut at 1.8 > 0.96
  EXPECT_NE(d.reason.find("exact_set cut after round 1 (5.625 ns/entry > 1.00 x"),
            std::string::npos);
}

TYPED_TEST(Adaptive, allowed_arms_restrict_and_order_the_probe)
{
  using ExecutionSpace = TypeParam;
  auto const s = one_motion(hw::Motion::drift, 40);
  auto options = small_options();
  options.arms = {Arm::scatter, Arm::exact_set}; // the fastest arm is not allowed
  Harness<ExecutionSpace> h(s.cols[0], options, flat_prices(0.5, 2.0, 3.0));
  EXPECT_EQ(h.session.running(), Arm::scatter);
  h.run(s, 0, s.size(),
        [&](std::size_t) { EXPECT_NE(h.session.running(), Arm::scheduled); });
  auto const &r = h.session.report();
  ASSERT_EQ(r.decisions.size(), 1u);
  EXPECT_EQ(r.decisions[0].chosen, Arm::exact_set);
  // Round 1: scatter 2, exact set 2 (a warm-up each: new session; the exact
  // set's second step shows the drift); round 2: exact set 3, scatter 3
  // (each block warms up, the set moves): 10 steps.
  EXPECT_EQ(r.decisions[0].step, 10);
  EXPECT_EQ(r.decisions[0].warmup_steps, (std::array<int, 3>{0, 2, 2}));
  EXPECT_TRUE(std::isnan(r.decisions[0].us_per_step[slot(Arm::scheduled)]));
  EXPECT_EQ(r.arm_steps[slot(Arm::scheduled)], 0);
  EXPECT_EQ(h.session.scheduled(), nullptr); // never run, never made
  EXPECT_LE(h.error_vs_full_recompute(), 1e-13);

  // One arm: it is probed (and timed) like any other, and kept.
  options.arms = {Arm::scatter};
  Harness<ExecutionSpace> one(s.cols[0], options, flat_prices(0.5, 2.0, 3.0));
  one.run(s, 0, s.size());
  EXPECT_EQ(one.session.report().decisions.at(0).chosen, Arm::scatter);
  EXPECT_EQ(one.session.report().arm_steps[slot(Arm::scatter)], 40);
}

TYPED_TEST(Adaptive, bad_options_are_rejected_naming_the_field)
{
  using ExecutionSpace = TypeParam;
  using memory_space = typename ExecutionSpace::memory_space;
  auto const A = to_matrix<ExecutionSpace>(hw::grid_2d<Scalar, Ordinal>(10, 10));
  hst::Operator op(A);
  auto const expected = to_view<memory_space>(Set{1, 2, 3});
  struct Bad
  {
    std::function<void(hst::AdaptiveOptions &)> set;
    std::vector<std::string> pieces;
    int B = width;
  };
  std::vector<Bad> const cases = {
      {[](auto &) {}, {"'B'", "positive, got 0"}, 0},
      {[](auto &o) { o.arms.clear(); }, {"'options.arms'", "got none"}},
      {[](auto &o) {
         o.arms = {Arm::scatter, Arm::scheduled, Arm::scatter};
       },
       {"'options.arms'", "scatter twice, at positions 0 and 2"}},
      {[](auto &o) { o.arms = {Arm(7)}; }, {"'options.arms'", "holds 7 at position 0"}},
      {[](auto &o) { o.warmup_steps = -1; }, {"'options.warmup_steps'", "got -1"}},
      {[](auto &o) { o.scheduled_extra_warmup = -2; },
       {"'options.scheduled_extra_warmup'", "got -2"}},
      {[](auto &o) { o.scheduled_rise_warmup = -1; },
       {"'options.scheduled_rise_warmup'", "got -1"}},
      {[](auto &o) { o.scheduled_settle_steps = -1; },
       {"'options.scheduled_settle_steps'", "got -1"}},
      {[](auto &o) { o.scheduled_confirm_steps = -2; },
       {"'options.scheduled_confirm_steps'", "got -2"}},
      {[](auto &o) { o.scheduled_confirm_ratio = 0.9; },
       {"'options.scheduled_confirm_ratio'", ">= 1", "got 0.9"}},
      {[](auto &o) { o.scheduled_confirm_ratio = std::nan(""); },
       {"'options.scheduled_confirm_ratio'", ">= 1", "got nan"}},
      {[](auto &o) { o.measure_steps = 0; }, {"'options.measure_steps'", "got 0"}},
      {[](auto &o) { o.cut_ratio = 0.5; }, {"'options.cut_ratio'", ">= 1", "got 0.5"}},
      {[](auto &o) { o.cut_ratio = std::nan(""); }, {"'options.cut_ratio'", "got nan"}},
      {[](auto &o) { o.model_margin = 0.5; },
       {"'options.model_margin'", ">= 1", "got 0.5"}},
      {[](auto &o) { o.model_margin = std::nan(""); },
       {"'options.model_margin'", "got nan"}},
      {[](auto &o) { o.defer_jump_share = 0; },
       {"'options.defer_jump_share'", "> 0", "got 0"}},
      {[](auto &o) { o.defer_jump_share = std::nan(""); },
       {"'options.defer_jump_share'", "got nan"}},
      {[](auto &o) {
         o.model.emplace();
         o.model->arm[slot(Arm::exact_set)].per_entry = -1e-9;
       },
       {"'options.model'", "negative or non-finite", "for arm exact_set"}},
      {[](auto &o) {
         o.model.emplace();
         o.model->arm[slot(Arm::scatter)].fixed = HUGE_VAL;
       },
       {"'options.model'", "inf", "for arm scatter"}},
      {[](auto &o) { o.switch_margin = 1.0; }, {"'options.switch_margin'", "got 1"}},
      {[](auto &o) { o.switch_margin = std::nan(""); },
       {"'options.switch_margin'", "got nan"}},
      {[](auto &o) { o.window_steps = 0; }, {"'options.window_steps'", "got 0"}},
      {[](auto &o) { o.shift_windows = 0; }, {"'options.shift_windows'", "got 0"}},
      {[](auto &o) { o.shift_ratio = 0.5; }, {"'options.shift_ratio'", "got 0.5"}},
      {[](auto &o) { o.shift_floor = -0.25; }, {"'options.shift_floor'", "got -0.25"}},
      {[](auto &o) { o.shift_floor = HUGE_VAL; }, {"'options.shift_floor'", "got inf"}},
      {[](auto &o) { o.sample_period = -1; }, {"'options.sample_period'", "got -1"}},
      {[](auto &o) { o.time_shift_ratio = 1.0; },
       {"'options.time_shift_ratio'", "> 1", "got 1"}},
      {[](auto &o) { o.time_shift_ratio = std::nan(""); },
       {"'options.time_shift_ratio'", "got nan"}},
      {[](auto &o) { o.time_shift_ratio = HUGE_VAL; },
       {"'options.time_shift_ratio'", "got inf"}},
      {[](auto &o) { o.recheck_period = -3; }, {"'options.recheck_period'", "got -3"}},
      {[](auto &o) { o.recheck_max_period = 100; },
       {"'options.recheck_max_period'", "(256), got 100"}},
      {[](auto &o) { o.session.retire_after = 0; },
       {"'options.session.retire_after'", "got 0"}},
      {[](auto &o) { o.session.strict = true; },
       {"'options.session.strict'", "got true"}},
      {[](auto &o) { o.clock = nullptr; }, {"'options.clock'", "empty function"}},
  };
  for (auto const &c : cases)
  {
    SCOPED_TRACE(c.pieces[0]);
    hst::AdaptiveOptions o;
    c.set(o);
    auto pieces = c.pieces;
    pieces.push_back("hst::Operator::adaptive: argument ");
    expect_invalid([&] { op.adaptive(expected, c.B, o); }, pieces);
  }
  // expected_cols are checked like session()'s, under adaptive's name.
  expect_invalid(
      [&] {
        op.adaptive(to_view<memory_space>(Set{1, 100}), width);
      },
      {"hst::Operator::adaptive: argument 'expected_cols'", "column id 100"});
  // The defaults are valid.
  EXPECT_NO_THROW(op.adaptive(expected, width));
  EXPECT_NO_THROW(op.adaptive(ExecutionSpace{}, expected));
}

TYPED_TEST(Adaptive, bad_input_throws_and_leaves_y_and_the_session_untouched)
{
  using ExecutionSpace = TypeParam;
  using memory_space = typename ExecutionSpace::memory_space;
  auto const s = one_motion(hw::Motion::drift, 40);
  auto const options = small_options();
  Harness<ExecutionSpace> clean(s.cols[0], options, work_prices());
  clean.run(s, 0, s.size());
  Harness<ExecutionSpace> h(s.cols[0], options, work_prices());
  auto duplicate = s.cols[0];
  duplicate[1] = duplicate[0];
  auto out_of_range = s.cols[0];
  out_of_range[2] = Ordinal(h.t.n_cols);
  auto const short_y = Kokkos::View<Scalar **, Kokkos::LayoutRight, memory_space>(
      "short_y", h.t.n_rows - 1, width);
  auto reject = [&](std::size_t i) {
    // Bad calls while probing (steps 0 and 5) and settled (step 30).
    if (i != 0 && i != 5 && i != 30)
      return;
    auto const before = to_host_rows(h.y);
    auto const report = h.session.report();
    for (auto const *bad : {&duplicate, &out_of_range})
    {
      h.fill(*bad, s.dx[i]);
      expect_invalid([&] { h.session.apply_cols(h.space, h.cols, h.dx, h.y); },
                     {"hst::AdaptiveSession::apply_cols: argument 'cols' holds column id",
                      "(checked by hst::"});
    }
    h.fill(s.cols[i], s.dx[i]);
    expect_invalid([&] { h.session.apply_cols(h.cols, h.dx, short_y); },
                   {"hst::AdaptiveSession::apply_cols: argument 'y' has"});
    auto const after = to_host_rows(h.y);
    EXPECT_EQ(std::memcmp(before.data(), after.data(), before.size() * sizeof(Scalar)),
              0);
    EXPECT_EQ(h.session.report().steps, report.steps);
    EXPECT_EQ(h.session.report().arm_steps, report.arm_steps);
    EXPECT_EQ(h.session.report().probe_steps, report.probe_steps);
  };
  h.run(s, 0, s.size(), reject);
  // The rejected calls changed nothing: same decisions, same answer.
  auto const &r = h.session.report();
  auto const &c = clean.session.report();
  ASSERT_EQ(r.decisions.size(), c.decisions.size());
  for (std::size_t i = 0; i < r.decisions.size(); ++i)
  {
    EXPECT_EQ(r.decisions[i].step, c.decisions[i].step);
    EXPECT_EQ(r.decisions[i].chosen, c.decisions[i].chosen);
    EXPECT_EQ(r.decisions[i].us_per_step, c.decisions[i].us_per_step);
  }
  EXPECT_LE(h.error_vs_full_recompute(), 1e-13);
}

TYPED_TEST(Adaptive, settled_steps_allocate_nothing_and_read_the_clock_only_when_sampled)
{
  using ExecutionSpace = TypeParam;
  // Two sets in turn: every step changes the set (the exact-set arm
  // recompiles, the scheduled arm re-plans), and the probe has seen both.
  auto const base = one_motion(hw::Motion::jump, 2, 3);
  auto options = small_options();
  options.recheck_period = 1000;
  options.recheck_max_period = 1000;
  // The probe: round 1 runs each arm for a warm-up step (new session) and a
  // measured step: exact set (0, 1), scheduled (2, 3), scatter (4, 5). Both
  // losers are cut; round 2 runs the winner from step 6, on set 0, which it
  // did not last run on (or, for the scatter arm, the set was seen moving):
  // a warm-up and 2 measured steps; decided at 9. The losers ran 2 steps
  // each. Settled, a decision at D samples steps D + 32 j (warm-up 1, period
  // 32): 41, 73, 105 and 137; each sample reads the clock twice (and
  // fences), other settled steps never. The winner's price does not change,
  // so no sample is shifted. Steps [40, 100) count Kokkos allocations (Kokkos
  // Tools attached), steps [100, 160) the heap (no tool attached:
  // AllocationWatch.hpp).
  std::int64_t const decided = 9, loser_steps = 2 + 2;
  std::vector<int> const sampled{41, 73, 105, 137}; // in the watched steps [40, 160)
  // With the cost model, the step before each sample keeps its ids, and the
  // sample counts them and refines the active arm's prediction (every arm is
  // predicted alike, so the model skips no arm and starts no re-probe).
  hst::CostConstants alike;
  for (auto &arm : alike.arm)
    arm.fixed = 1e-6;
  for (bool const model : {false, true})
    for (Arm const winner : {Arm::scheduled, Arm::exact_set, Arm::scatter})
    {
      SCOPED_TRACE(::testing::Message() << to_string(winner) << (model ? ", model" : ""));
      Prices prices = flat_prices(3.0, 3.0, 3.0);
      prices.step[slot(winner)] = 1.0;
      auto case_options = options;
      if (model)
        case_options.model = alike;
      Harness<ExecutionSpace> h(base.cols[0], case_options, prices);
      for (int i = 0; i < 40; ++i) // probe, then settle past the first windows
        h.step(base.cols[i % 2], base.dx[0]);
      ASSERT_FALSE(h.session.probing()) << h.session.report();
      ASSERT_EQ(h.session.active(), winner);
      long allocations = 0, heap = 0;
      bool tools_loaded = false;
      auto const decisions = h.session.report().decisions.size();
      auto const sampled_before = h.session.report().sampled_steps;
      EXPECT_EQ(sampled_before, 0);
      std::vector<int> read_at;      // steps that read the clock
      for (int i = 40; i < 160; ++i) // 120 steps: 15 windows end
      {
        h.fill(base.cols[i % 2], base.dx[0]);
        h.space.fence();
        long const reads = h.clock.reads;
        if (i < 100)
        {
          AllocationWatch watch;
          h.session.apply_cols(h.space, h.cols, h.dx, h.y);
          hst::kokkos_ext::fence(h.space, "hst_test::fence");
          allocations += AllocationWatch::kokkos_allocations();
        }
        else
        {
          HeapWatch watch;
          h.session.apply_cols(h.space, h.cols, h.dx, h.y);
          hst::kokkos_ext::fence(h.space, "hst_test::fence");
          heap += HeapWatch::heap_allocations();
          tools_loaded = tools_loaded || watch.tools_loaded();
        }
        if (h.clock.reads != reads)
        {
          read_at.push_back(i);
          EXPECT_EQ(h.clock.reads - reads, 2) << "step " << i;
        }
      }
      EXPECT_EQ(allocations, 0) << "Kokkos allocations in settled steps";
      ASSERT_FALSE(tools_loaded) << "a Kokkos tool is loaded (KOKKOS_TOOLS_LIBS?): "
                                    "the heap count would include its allocations";
      EXPECT_EQ(heap, 0) << "heap allocations in settled steps (no tool attached)";
      EXPECT_EQ(read_at, sampled)
          << "settled steps read the clock (and fence) off samples";
      EXPECT_EQ(h.session.report().sampled_steps,
                sampled_before + std::int64_t(sampled.size()));
      EXPECT_NEAR(1e6 * h.session.report().sampled_seconds,
                  1.0 * double(h.session.report().sampled_steps), 1e-9);
      EXPECT_EQ(h.session.report().decisions.size(), decisions);
      EXPECT_EQ(h.session.report().decisions.at(0).step, decided);
      EXPECT_EQ(h.session.report().arm_steps[slot(winner)], 40 - loser_steps + 120);
    }
}

// The watch itself sees allocations: a test that cannot fail proves nothing.
TYPED_TEST(Adaptive, the_allocation_watch_sees_allocations)
{
  using memory_space = typename TypeParam::memory_space;
  long allocations = 0, heap = 0;
  {
    AllocationWatch watch;
    Kokkos::View<double *, memory_space> v("hst::test", 10);
    std::vector<int> grown(100);
    allocations = AllocationWatch::kokkos_allocations();
    heap = AllocationWatch::heap_allocations();
  }
  EXPECT_EQ(allocations, 1);
  EXPECT_GE(heap, 1);
  bool tools_loaded = true;
  {
    HeapWatch watch;
    std::vector<int> grown(100);
    heap = HeapWatch::heap_allocations();
    tools_loaded = watch.tools_loaded();
  }
  EXPECT_EQ(heap, 1);
  EXPECT_FALSE(tools_loaded) << "the Tools callbacks were not detached";
}

TYPED_TEST(Adaptive, report_prints_every_decision)
{
  using ExecutionSpace = TypeParam;
  EXPECT_STREQ(to_string(Arm::scheduled), "scheduled");
  EXPECT_STREQ(to_string(Arm::exact_set), "exact_set");
  EXPECT_STREQ(to_string(Arm::scatter), "scatter");
  auto const s = one_motion(hw::Motion::drift, 40);
  auto options = small_options();
  options.arms = {Arm::scheduled, Arm::scatter};
  // Initial probe: scheduled 0 (warm-up: new session), 1, scatter 2
  // (warm-up), 3, then scheduled 4 (warm-up: new set), 5, 6 and scatter 7
  // (warm-up: the set was seen moving), 8, 9: decided at 10. The re-probe
  // from 20 warms up every block (the set moves): decided at 30. 20 probe
  // steps: scheduled 5 + 5 at 1.5 us, scatter 5 + 5 at 2.5 us: 40 us. The
  // excess: each probe's time beyond its steps' entries at the scheduled
  // arm's time per entry in its measured steps (1, 5, 6 and 21, 25, 26).
  Harness<ExecutionSpace> h(s.cols[0], options, flat_prices(1.5, 2.0, 2.5));
  h.run(s, 0, 20);
  h.session.reprobe();
  h.run(s, 20, s.size());
  auto excess_us = [&](std::size_t from, std::array<std::size_t, 3> measured) {
    double probe = 0, chosen = 0;
    for (std::size_t i = from; i < from + 10; ++i)
      probe += entries(s.cols[i]);
    for (std::size_t i : measured)
      chosen += entries(s.cols[i]);
    return 20.0 - probe * 3 * 1.5 / chosen;
  };
  double const excess = excess_us(0, {1, 5, 6}) + excess_us(20, {21, 25, 26});
  EXPECT_NEAR(1e6 * h.session.report().probe_excess_seconds, excess, 1e-6);
  std::ostringstream out, probing;
  out << h.session.report();
  probing << std::fixed << std::setprecision(3) << "probing: 20 steps, 40.000 us, "
          << excess << " us beyond the chosen arms";
  std::string const text = out.str();
  for (std::string const &piece : std::vector<std::string>{
           "hst::AdaptiveSession: active scheduled after 40 steps (scheduled 30, "
           "exact_set 0, scatter 10)",
           probing.str(),
           "step 10: scheduled (probed from step 0; scheduled 1.500 us/step x 3 = ",
           " exact_set - scatter 2.500 us/step x 3 = ", ") initial probe",
           "step 30: scheduled (probed from step 20;", ") reprobe() requested"})
    EXPECT_NE(text.find(piece), std::string::npos) << piece << "\nmissing from\n" << text;
}

// Cost-model constants with a fixed cost per step for each arm (seconds),
// and an exact-set cost per recompiled entry.
hst::CostConstants fixed_costs(double scheduled, double exact_set, double scatter,
                               double exact_set_per_compiled_entry = 0)
{
  hst::CostConstants c;
  c.arm[slot(Arm::scheduled)].fixed = scheduled;
  c.arm[slot(Arm::exact_set)].fixed = exact_set;
  c.arm[slot(Arm::exact_set)].per_update = exact_set_per_compiled_entry;
  c.arm[slot(Arm::scatter)].fixed = scatter;
  return c;
}

TYPED_TEST(Adaptive, model_skips_arms_predicted_beyond_the_margin)
{
  // Frozen set; fake prices: scheduled 3 us, exact set 1 us, scatter 1.2 us
  // a step. The model predicts the scheduled arm at 10 us a step: after the
  // exact-set arm's block (warm-up, one measured step: 1 us) it is beyond
  // 1.5 x that and is not probed, nor made; scatter (predicted 1.1 us) is.
  auto const s = one_motion(hw::Motion::frozen, 30);
  auto options = small_options();
  options.model = fixed_costs(10e-6, 1e-6, 1.1e-6);
  Harness<TypeParam> h(s.cols[0], options, flat_prices(3.0, 1.0, 1.2));
  h.run(s, 0, s.size());
  auto const &r = h.session.report();
  auto const &d = r.decisions.at(0);
  EXPECT_EQ(d.chosen, Arm::exact_set);
  // Round 1: exact set and scatter, 2 steps each; round 2: 2 more each.
  EXPECT_EQ(d.step, 8);
  EXPECT_EQ(d.measured_steps, (std::array<int, 3>{0, 3, 3}));
  EXPECT_TRUE(std::isnan(d.us_per_step[slot(Arm::scheduled)]));
  EXPECT_EQ(h.session.scheduled(), nullptr) << "an arm never probed is never made";
  // Never timed: its prediction takes the lowest ratio of a timed arm,
  // exact set's 1.0 / 1.0 (scatter's is 1.2 / 1.1).
  double const e = entries(s.cols[0]);
  EXPECT_NEAR(d.predicted_ns_per_entry[slot(Arm::scheduled)], 1e3 * 10 / e, 1e-9);
  EXPECT_NE(d.reason.find("scheduled not probed (predicted"), std::string::npos)
      << d.reason;
  EXPECT_LE(h.error_vs_full_recompute(), 1e-13);

  // The same run without a model probes all three arms (the scheduled arm is
  // cut after round 1): two steps more.
  Harness<TypeParam> plain(s.cols[0], small_options(), flat_prices(3.0, 1.0, 1.2));
  plain.run(s, 0, s.size());
  EXPECT_EQ(plain.session.report().decisions.at(0).step, 10);
  EXPECT_TRUE(std::isnan(
      plain.session.report().decisions.at(0).predicted_ns_per_entry[slot(Arm::scatter)]));
}

TYPED_TEST(Adaptive, model_reads_the_churn_of_the_probe_steps)
{
  // Scatter first (1 us a step measured). The model prices the exact-set arm
  // at 0.5 us a step plus 10 ns per recompiled entry: under jump (a new set
  // every step) ~3.7 us, beyond 1.5 x scatter's, so it is not probed; on a
  // frozen set 0.5 us, so it is.
  auto options = small_options();
  options.arms = {Arm::scatter, Arm::exact_set, Arm::scheduled};
  options.model = fixed_costs(0.9e-6, 0.5e-6, 1e-6, 1e-8);
  auto const prices = flat_prices(0.9, 0.8, 1.0);
  auto probed_exact_set = [&](hw::Motion m) {
    auto const s = one_motion(m, 30);
    Harness<TypeParam> h(s.cols[0], options, prices);
    h.run(s, 0, s.size());
    auto const &d = h.session.report().decisions.at(0);
    EXPECT_FALSE(std::isnan(d.predicted_ns_per_entry[slot(Arm::exact_set)]));
    EXPECT_LE(h.error_vs_full_recompute(), 1e-13);
    return d.measured_steps[slot(Arm::exact_set)] > 0;
  };
  EXPECT_FALSE(probed_exact_set(hw::Motion::jump));
  EXPECT_TRUE(probed_exact_set(hw::Motion::frozen));
}

TYPED_TEST(Adaptive, model_measures_the_arm_predicted_cheapest_before_dearer_ones)
{
  // Jump (a new set every step), the arms in the default order. The model
  // prices the scheduled arm at 2.5 us a step, the scatter arm at 1 us:
  // after the exact-set arm's block (2 us measured), scatter runs next, and
  // the scheduled arm, beyond 1.5 x scatter's 1 us, is not probed, nor
  // made. In the given order it would run: 2.5 us is within 1.5 x 2 us.
  auto const s = one_motion(hw::Motion::jump, 30);
  auto options = small_options();
  options.defer_scheduled = true;
  options.model = fixed_costs(2.5e-6, 2e-6, 1e-6);
  Harness<TypeParam> h(s.cols[0], options, flat_prices(3.0, 2.0, 1.0));
  h.run(s, 0, s.size());
  auto const &d = h.session.report().decisions.at(0);
  EXPECT_EQ(d.chosen, Arm::scatter);
  EXPECT_EQ(d.measured_steps[slot(Arm::scheduled)], 0);
  EXPECT_EQ(d.warmup_steps[slot(Arm::scheduled)], 0);
  EXPECT_EQ(h.session.scheduled(), nullptr) << "an arm never probed is never made";
  EXPECT_NE(d.reason.find("scheduled not probed (predicted"), std::string::npos)
      << d.reason;
  EXPECT_LE(h.error_vs_full_recompute(), 1e-13);
}

TYPED_TEST(Adaptive, model_order_waits_for_the_deferral_while_the_set_stands)
{
  // Deferral on; the set stands for the first three steps, then jumps. The
  // model prices the scheduled arm cheapest, yet until the set is seen to
  // move the deferral orders round 1: exact set (steps 0-1), scatter (2-3),
  // whose steps see the move, then the scheduled arm runs. Sorted by the
  // predictions at once, it would be deferred at step 2 on a standing set.
  auto const frozen = one_motion(hw::Motion::frozen, 3);
  auto const jump = one_motion(hw::Motion::jump, 27, 7);
  Steps s;
  for (auto const *part : {&frozen, &jump})
    for (std::size_t i = 0; i < part->size(); ++i)
      s.cols.push_back(part->cols[i]), s.dx.push_back(part->dx[i]);
  auto options = small_options();
  options.defer_scheduled = true;
  // (The jump's first set replaces the frozen one whole, which the deferral
  // of a jumping set would count as one: this test is about the still set.)
  options.defer_jump_share = std::numeric_limits<double>::infinity();
  options.measure_steps = 1;
  options.model = fixed_costs(0.5e-6, 1e-6, 1.1e-6);
  Harness<TypeParam> h(s.cols[0], options, flat_prices(1.0, 1.0, 1.0));
  h.run(s, 0, s.size());
  auto const &d = h.session.report().decisions.at(0);
  EXPECT_EQ(d.measured_steps[slot(Arm::scheduled)], 1) << d.reason;
  EXPECT_EQ(d.reason.find("deferred"), std::string::npos) << d.reason;
  EXPECT_LE(h.error_vs_full_recompute(), 1e-13);
}

TYPED_TEST(Adaptive, model_predictions_are_refined_by_timed_steps)
{
  // The model predicts the scatter arm at half its measured time: once
  // scatter's steps are timed, its prediction is what it measured.
  auto const s = one_motion(hw::Motion::frozen, 30);
  auto options = small_options();
  options.arms = {Arm::scatter, Arm::exact_set};
  options.model = fixed_costs(1e-6, 1e-6, 0.5e-6);
  Harness<TypeParam> h(s.cols[0], options, flat_prices(1.0, 1.5, 1.0));
  h.run(s, 0, s.size());
  auto const &d = h.session.report().decisions.at(0);
  EXPECT_EQ(d.chosen, Arm::scatter);
  EXPECT_NEAR(d.predicted_ns_per_entry[slot(Arm::scatter)],
              d.ns_per_entry[slot(Arm::scatter)], 1e-9);
  EXPECT_NEAR(d.ns_per_entry[slot(Arm::scatter)], 1e3 / entries(s.cols[0]), 1e-9);
}

TYPED_TEST(Adaptive, model_reprobes_when_the_predicted_ranking_changes)
{
  // Fake prices: flat per step, and 3 us per exact-set compile, which the
  // step-time detector does not count (it skips samples that compiled);
  // no compile-rate detector or periodic re-check: only the model can
  // notice that the set, frozen for the probe, starts jumping. The model
  // prices the exact-set arm at 0.5 us a step plus 10 ns per recompiled
  // entry (~3.7 us when the set changes every step), the scheduled arm at
  // 0.9 us, the scatter arm at 1 us. Settled on the exact-set arm (frozen),
  // the sample at D + 32 sees a changed set, so the scheduled arm ranks
  // first, beyond model_margin (1.5) x; confirmed on the next step, the
  // re-probe starts at D + 34.
  auto options = small_options();
  options.shift_floor = 1e9;
  options.recheck_period = 0;
  options.model = fixed_costs(0.9e-6, 0.5e-6, 1e-6, 1e-8);
  auto prices = flat_prices(0.9, 0.8, 1.0);
  prices.compile = 3.0;
  auto const frozen = one_motion(hw::Motion::frozen, 30);
  auto const jump = one_motion(hw::Motion::jump, 40, 7);
  Steps s;
  for (std::size_t i = 0; i < frozen.size(); ++i)
    s.cols.push_back(frozen.cols[i]), s.dx.push_back(frozen.dx[i]);
  for (std::size_t i = 0; i < jump.size(); ++i)
    s.cols.push_back(jump.cols[i]), s.dx.push_back(jump.dx[i]);
  Harness<TypeParam> h(s.cols[0], options, prices);
  h.run(s, 0, s.size());
  auto const &r = h.session.report();
  ASSERT_GE(r.decisions.size(), 2u);
  auto const &first = r.decisions[0];
  EXPECT_EQ(first.chosen, Arm::exact_set);
  EXPECT_LT(first.step + 32, std::int64_t(frozen.size()) + 40);
  EXPECT_EQ(r.decisions[1].probe_start, first.step + 34);
  EXPECT_TRUE(starts_with(r.decisions[1].reason, "predicted scheduled"))
      << r.decisions[1].reason;
  EXPECT_LE(h.error_vs_full_recompute(), 1e-13);

  // A prediction needs model_margin's gap: at 10, the ~4x gap starts nothing.
  options.model_margin = 10;
  Harness<TypeParam> wide(s.cols[0], options, prices);
  wide.run(s, 0, s.size());
  EXPECT_EQ(wide.session.report().decisions.size(), 1u);

  // Without the model nothing notices: one decision.
  options.model_margin = 1.5;
  options.model.reset();
  Harness<TypeParam> plain(s.cols[0], options, prices);
  plain.run(s, 0, s.size());
  EXPECT_EQ(plain.session.report().decisions.size(), 1u);
}

TEST(CostModel, constants_round_trip_through_text_and_bad_text_is_named)
{
  auto c = fixed_costs(1.25e-6, 2.5e-7, 3e-6, 4.5e-9);
  c.arm[slot(Arm::scatter)].per_entry = 1.0 / 3.0 * 1e-9;
  std::stringstream text;
  c.save(text);
  auto const back = hst::CostConstants::load(text);
  for (std::size_t a = 0; a < 3; ++a)
  {
    EXPECT_EQ(back.arm[a].fixed, c.arm[a].fixed);
    EXPECT_EQ(back.arm[a].per_entry, c.arm[a].per_entry);
    EXPECT_EQ(back.arm[a].per_update, c.arm[a].per_update);
  }
  std::istringstream other("hst-cost-model 2 0 0 0 0 0 0 0 0 0");
  expect_invalid([&] { hst::CostConstants::load(other); },
                 {"hst::CostConstants::load", "'in'", "hst-cost-model 1"});
  std::istringstream negative("hst-cost-model 1 0 0 0 0 -1 0 0 0 0");
  expect_invalid([&] { hst::CostConstants::load(negative); },
                 {"hst::CostConstants::load", "'in'", "exact_set"});
  std::istringstream short_text("hst-cost-model 1 0 0 0 0 0 0 0");
  expect_invalid([&] { hst::CostConstants::load(short_text); },
                 {"hst::CostConstants::load", "'in'", "scatter"});
}

TEST(CostModel, predicts_by_the_formulas_and_scales_by_measured_time)
{
  hst::CostConstants c;
  c.arm[slot(Arm::scatter)] = {1e-6, 1e-9, 5.0};
  c.arm[slot(Arm::exact_set)] = {2e-6, 2e-9, 3e-9};
  c.arm[slot(Arm::scheduled)] = {3e-6, 1e-9, 4e-9};
  hst::CostModel model(c, 0.5);
  hst::StepCounters frozen{1000, 0, false}, moved{1000, 200, true};
  EXPECT_DOUBLE_EQ(model.predict(Arm::scatter, moved), 1e-6 + 1e-6);
  EXPECT_DOUBLE_EQ(model.predict(Arm::exact_set, frozen), 2e-6 + 2e-6);
  EXPECT_DOUBLE_EQ(model.predict(Arm::exact_set, moved), 2e-6 + 2e-6 + 3e-6);
  EXPECT_DOUBLE_EQ(model.predict(Arm::scheduled, moved), 3e-6 + 1e-6 + 0.8e-6);
  // Measured twice the prediction, then the prediction: with forget 0.5
  // the scale is (0.5 * 4 + 2) / (0.5 * 2 + 2) = 4 / 3, in us.
  model.observe(Arm::scatter, moved, 4e-6);
  EXPECT_DOUBLE_EQ(model.scale(Arm::scatter), 2.0);
  model.observe(Arm::scatter, moved, 2e-6);
  EXPECT_DOUBLE_EQ(model.scale(Arm::scatter), 4.0 / 3.0);
  // An arm not timed yet takes the lowest ratio of a timed arm: scatter's.
  EXPECT_DOUBLE_EQ(model.scale(Arm::exact_set), 4.0 / 3.0);
  EXPECT_DOUBLE_EQ(model.scale(Arm::scheduled), 4.0 / 3.0);
  EXPECT_DOUBLE_EQ(hst::CostModel(c).scale(Arm::scheduled), 1.0) << "none timed";
  // A broken clock's reading is not learnt (an infinite scale would predict
  // NaN for a step whose raw prediction is 0).
  model.observe(Arm::exact_set, moved, HUGE_VAL);
  model.observe(Arm::exact_set, moved, std::nan(""));
  EXPECT_DOUBLE_EQ(model.scale(Arm::exact_set), 4.0 / 3.0);

  // At the churn counted so far: the exact-set arm's recompile weighed by
  // the rate of changed steps, the scheduled arm's changes by their share
  // of the entries (each new step weighs 0.5; the first alone).
  hst::Churn churn;
  EXPECT_DOUBLE_EQ(model.predict_at(Arm::exact_set, 1000, churn),
                   4.0 / 3.0 * (2e-6 + 2e-6));
  churn.add(moved); // changed, share 0.2
  churn.add(hst::StepCounters{500, 0, false});
  churn.add(hst::StepCounters{2000, 800, true}); // share 0.4
  EXPECT_DOUBLE_EQ(churn.change_rate(), 0.75);
  EXPECT_DOUBLE_EQ(churn.changed_share(), 0.25);
  EXPECT_DOUBLE_EQ(model.predict_at(Arm::exact_set, 1000, churn),
                   4.0 / 3.0 * (2e-6 + 2e-6 + 0.75 * 3e-6));
  EXPECT_DOUBLE_EQ(model.predict_at(Arm::scheduled, 1000, churn),
                   4.0 / 3.0 * (3e-6 + 1e-6 + 1e-6));
  EXPECT_DOUBLE_EQ(model.predict_at(Arm::scatter, 1000, churn), 4.0 / 3.0 * 2e-6);

  // Two arms timed: exact set at its prediction (4 us). The scheduled arm
  // takes the lower ratio, exact set's 1 (scatter's is 4 / 3): the most
  // favourable correction a timed arm needed, so a skip errs toward running.
  model.observe(Arm::exact_set, frozen, 4e-6);
  EXPECT_DOUBLE_EQ(model.scale(Arm::exact_set), 1.0);
  EXPECT_DOUBLE_EQ(model.scale(Arm::scheduled), 1.0);
}

TYPED_TEST(Adaptive, calibrate_fits_the_constants_from_timed_steps)
{
  // A clock under which every timed run of 8 steps takes, whatever the arm
  // and the set, 2 s in the first round of the nine runs, 1 s in the second
  // and 3 s in the third: each run keeps its fastest round, so each arm
  // costs 1/8 s a step and nothing per entry or update (the first round
  // would give 2/8, the last 3/8, their mean 2/8).
  using ExecutionSpace = TypeParam;
  hst::Operator op(to_matrix<ExecutionSpace>(grid()));
  double now = 0;
  int reads = 0; // two per timed run: its start and its end
  auto const c = op.calibrate(ExecutionSpace{}, width, [&] {
    int const run = reads / 2;
    if (reads++ % 2 == 1)
      now += std::array<double, 3>{2, 1, 3}.at(std::size_t(run / 9));
    return now;
  });
  EXPECT_EQ(reads, 54); // 3 rounds x 3 arms x 3 sets, each timed once
  for (std::size_t a = 0; a < 3; ++a)
  {
    EXPECT_DOUBLE_EQ(c.arm[a].fixed, 1.0 / 8) << to_string(Arm(a));
    EXPECT_EQ(c.arm[a].per_entry, 0) << to_string(Arm(a));
    EXPECT_EQ(c.arm[a].per_update, 0) << to_string(Arm(a));
  }
  expect_invalid([&] { op.calibrate(ExecutionSpace{}, 0); },
                 {"hst::Operator::calibrate", "'B'", "got 0"});
  // The real clock gives finite, non-negative constants.
  auto const real = op.calibrate(ExecutionSpace{}, width);
  for (auto const &arm : real.arm)
    for (double v : std::array<double, 3>{arm.fixed, arm.per_entry, arm.per_update})
      EXPECT_TRUE(std::isfinite(v) && v >= 0) << v;
}

} // namespace
