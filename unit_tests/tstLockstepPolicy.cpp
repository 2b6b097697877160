// The distributed adaptive session's policy alone: numbers in, decisions
// out, no MPI and no clock. The combined step times are fed by hand.

#include <hst/distributed/detail/LockstepPolicy.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

namespace
{

using hst::Arm;
using Policy = hst::detail::LockstepPolicy;

// Runs `steps` steps; a timed step of arm a takes cost[a] seconds, and the
// set moves at every step unless `moving` is false.
void run(Policy &policy, int steps, std::map<Arm, double> const &cost, bool moving = true)
{
  for (int i = 0; i < steps; ++i)
  {
    auto const step = policy.plan();
    policy.finish(step.timed ? cost.at(step.arm) : 0.0, moving);
  }
}

hst::DistributedAdaptiveOptions quiet()
{
  hst::DistributedAdaptiveOptions o;
  o.sample_period = 0;
  o.recheck_period = 0;
  return o;
}

// On a moving set (no deferral).
TEST(LockstepPolicy, probes_every_arm_in_order_and_takes_the_cheapest)
{
  Policy policy(quiet());
  std::vector<Arm> seen;
  for (int i = 0; i < 9; ++i)
  {
    auto const step = policy.plan();
    EXPECT_TRUE(step.timed);
    seen.push_back(step.arm);
    // Warm-up steps (the first of each block) are slow and not compared.
    bool const warmup = i % 3 == 0;
    double const base = step.arm == Arm::scatter     ? 2.0
                        : step.arm == Arm::scheduled ? 1.0
                                                     : 3.0;
    EXPECT_EQ(step.compare_ids, i > 0);
    EXPECT_TRUE(step.keep_ids);
    policy.finish(warmup ? 100.0 : base, true);
  }
  std::vector<Arm> const expected = {Arm::exact_set, Arm::exact_set, Arm::exact_set,
                                     Arm::scheduled, Arm::scheduled, Arm::scheduled,
                                     Arm::scatter,   Arm::scatter,   Arm::scatter};
  EXPECT_EQ(seen, expected);
  auto const &r = policy.report();
  ASSERT_EQ(r.decisions.size(), 1u);
  EXPECT_EQ(r.decisions[0].chosen, Arm::scheduled);
  EXPECT_EQ(r.decisions[0].step, 9);
  EXPECT_DOUBLE_EQ(r.decisions[0].us_per_step[int(Arm::scheduled)], 1e6);
  EXPECT_DOUBLE_EQ(r.decisions[0].us_per_step[int(Arm::scatter)], 2e6);
  EXPECT_DOUBLE_EQ(r.probe_seconds, 3 * 100.0 + 2 * (1 + 2 + 3));
  EXPECT_FALSE(r.probing);
  // Settled: the chosen arm, untimed.
  auto const step = policy.plan();
  EXPECT_EQ(step.arm, Arm::scheduled);
  EXPECT_FALSE(step.timed);
}

// Runs a probe to its decision on a set that moves at every step; a timed
// step of arm a takes cost[a] seconds, the first of its block (the warm-up,
// never compared) 100 s. Returns the arm of each step.
std::vector<Arm> probe_moving(Policy &policy, std::map<Arm, double> const &cost)
{
  std::vector<Arm> seen;
  std::map<Arm, int> block;
  std::size_t const decisions = policy.report().decisions.size();
  while (policy.report().decisions.size() == decisions)
  {
    auto const step = policy.plan();
    seen.push_back(step.arm);
    policy.finish(block[step.arm]++ == 0 ? 100.0 : cost.at(step.arm), true);
  }
  return seen;
}

// An arm whose measured steps so far average more than cut_ratio times a
// completed arm's cost ends its block at once and is not chosen; an arm is
// never cut before some arm has completed its measured steps.
TEST(LockstepPolicy, an_arm_clearly_slower_than_a_completed_one_is_cut)
{
  auto o = quiet();
  o.measure_steps = 3;
  o.cut_ratio = 2;
  {
    Policy policy(o);
    // exact_set completes at 1.0; scheduled (2.5) is cut after one measured
    // step, scatter (1.9, within 2x) runs all three.
    auto const seen = probe_moving(
        policy, {{Arm::exact_set, 1.0}, {Arm::scheduled, 2.5}, {Arm::scatter, 1.9}});
    std::vector<Arm> const expected = {
        Arm::exact_set, Arm::exact_set, Arm::exact_set, Arm::exact_set, Arm::scheduled,
        Arm::scheduled, Arm::scatter,   Arm::scatter,   Arm::scatter,   Arm::scatter};
    EXPECT_EQ(seen, expected);
    auto const &d = policy.report().decisions.at(0);
    EXPECT_EQ(d.chosen, Arm::exact_set);
    EXPECT_EQ(d.step, 10);
    EXPECT_TRUE(d.cut[int(Arm::scheduled)]);
    EXPECT_FALSE(d.cut[int(Arm::scatter)]);
    EXPECT_FALSE(d.cut[int(Arm::exact_set)]);
    EXPECT_EQ(d.measured_steps[int(Arm::scheduled)], 1);
    EXPECT_EQ(d.measured_steps[int(Arm::scatter)], 3);
    EXPECT_DOUBLE_EQ(d.us_per_step[int(Arm::scheduled)], 2.5e6);
    EXPECT_DOUBLE_EQ(d.us_per_step[int(Arm::scatter)], 1.9e6);
  }
  {
    // The slow arm first: nothing has completed, so it runs all its steps,
    // and the faster arms after it are not cut.
    Policy policy(o);
    auto const seen = probe_moving(
        policy, {{Arm::exact_set, 9.0}, {Arm::scheduled, 1.0}, {Arm::scatter, 1.5}});
    EXPECT_EQ(seen.size(), 12u);
    auto const &d = policy.report().decisions.at(0);
    EXPECT_EQ(d.chosen, Arm::scheduled);
    EXPECT_EQ(d.cut, (std::array<bool, 3>{}));
  }
  {
    // The mean so far decides: a slow first measured step (3.0) is cut at
    // once; a step of 2.0 is not (not above 2 x 1.0).
    Policy policy(o);
    policy.finish(100.0, true);
    for (int i = 0; i < 3; ++i)
      policy.finish(1.0, true); // exact_set complete at 1.0
    policy.finish(100.0, true); // scheduled: warm-up
    policy.finish(2.0, true);   // mean 2.0: not cut
    EXPECT_EQ(policy.plan().arm, Arm::scheduled);
    policy.finish(4.5, true); // mean 3.25: cut
    EXPECT_EQ(policy.plan().arm, Arm::scatter);
    // A mean that passes 2x only at the last measured step: complete, not cut.
    for (double t : {100.0, 2.0, 2.0, 2.5})
      policy.finish(t, true);
    auto const &d = policy.report().decisions.at(0);
    EXPECT_TRUE(d.cut[int(Arm::scheduled)]);
    EXPECT_FALSE(d.cut[int(Arm::scatter)]);
    EXPECT_EQ(d.measured_steps[int(Arm::scatter)], 3);
    EXPECT_EQ(d.chosen, Arm::exact_set);
  }
  {
    // The threshold is the lowest completed cost: exact_set completes at
    // 1.9, scatter at 1.0, so scheduled at 3.0 (below 2 x 1.9) is cut.
    auto o2 = o;
    o2.arms = {Arm::exact_set, Arm::scatter, Arm::scheduled};
    Policy policy(o2);
    auto const seen = probe_moving(
        policy, {{Arm::exact_set, 1.9}, {Arm::scatter, 1.0}, {Arm::scheduled, 3.0}});
    EXPECT_EQ(seen.size(), 10u);
    auto const &d = policy.report().decisions.at(0);
    EXPECT_TRUE(d.cut[int(Arm::scheduled)]);
    EXPECT_EQ(d.measured_steps[int(Arm::scheduled)], 1);
    EXPECT_EQ(d.chosen, Arm::scatter);
  }
  {
    // Infinity cuts none.
    o.cut_ratio = std::numeric_limits<double>::infinity();
    Policy policy(o);
    auto const seen = probe_moving(
        policy, {{Arm::exact_set, 1.0}, {Arm::scheduled, 50.0}, {Arm::scatter, 1.9}});
    EXPECT_EQ(seen.size(), 12u);
    EXPECT_EQ(policy.report().decisions.at(0).chosen, Arm::exact_set);
  }
}

// A re-probe cuts the incumbent like any arm: its block ends and the
// switch margin, which only keeps an arm it could choose, does not apply.
TEST(LockstepPolicy, a_reprobe_cuts_a_slowed_incumbent)
{
  auto o = quiet();
  o.arms = {Arm::exact_set, Arm::scatter};
  Policy policy(o);
  probe_moving(policy, {{Arm::exact_set, 1.5}, {Arm::scatter, 1.0}});
  ASSERT_EQ(policy.report().active, Arm::scatter);
  policy.reprobe();
  auto const seen = probe_moving(policy, {{Arm::exact_set, 1.0}, {Arm::scatter, 5.0}});
  std::vector<Arm> const expected = {Arm::exact_set, Arm::exact_set, Arm::exact_set,
                                     Arm::scatter, Arm::scatter};
  EXPECT_EQ(seen, expected);
  auto const &d = policy.report().decisions.at(1);
  EXPECT_EQ(d.chosen, Arm::exact_set);
  EXPECT_TRUE(d.cut[int(Arm::scatter)]);
  EXPECT_EQ(policy.report().active, Arm::exact_set);
}

// A cut incumbent is not chosen even where its mean over the full block
// would pass the margin (2.5 after one of three measured steps: 0.83 if the
// missing steps counted as zero), and the cut never replaces an incumbent
// the margin keeps (cut_ratio 1 against a 5% margin: 1.02 is kept).
TEST(LockstepPolicy, a_cut_incumbent_is_replaced_only_outside_the_margin)
{
  auto o = quiet();
  o.arms = {Arm::exact_set, Arm::scatter};
  o.measure_steps = 3;
  {
    Policy policy(o);
    probe_moving(policy, {{Arm::exact_set, 1.5}, {Arm::scatter, 1.0}});
    ASSERT_EQ(policy.report().active, Arm::scatter);
    policy.reprobe();
    probe_moving(policy, {{Arm::exact_set, 1.0}, {Arm::scatter, 2.5}});
    auto const &d = policy.report().decisions.at(1);
    EXPECT_TRUE(d.cut[int(Arm::scatter)]);
    EXPECT_EQ(d.chosen, Arm::exact_set);
  }
  {
    o.cut_ratio = 1;
    o.switch_margin = 0.05;
    Policy policy(o);
    probe_moving(policy, {{Arm::exact_set, 1.5}, {Arm::scatter, 1.0}});
    ASSERT_EQ(policy.report().active, Arm::scatter);
    policy.reprobe();
    auto const seen = probe_moving(policy, {{Arm::exact_set, 1.0}, {Arm::scatter, 1.02}});
    EXPECT_EQ(seen.size(), 8u); // both blocks whole
    auto const &d = policy.report().decisions.at(1);
    EXPECT_FALSE(d.cut[int(Arm::scatter)]);
    EXPECT_EQ(d.chosen, Arm::scatter);
  }
  {
    // A challenger at the same ratio is cut: only the incumbent is held.
    Policy policy(o);
    probe_moving(policy, {{Arm::exact_set, 1.0}, {Arm::scatter, 1.5}});
    ASSERT_EQ(policy.report().active, Arm::exact_set);
    policy.reprobe();
    auto const seen = probe_moving(policy, {{Arm::exact_set, 1.0}, {Arm::scatter, 1.02}});
    EXPECT_EQ(seen.size(), 6u);
    EXPECT_TRUE(policy.report().decisions.at(1).cut[int(Arm::scatter)]);
  }
}

TEST(LockstepPolicy, samples_start_a_reprobe_only_when_confirmed)
{
  auto o = quiet();
  o.sample_period = 4;
  o.shift_samples = 2;
  o.time_shift_ratio = 1.5;
  Policy policy(o);
  run(policy, 9, {{Arm::scatter, 1.0}, {Arm::scheduled, 2.0}, {Arm::exact_set, 3.0}});
  ASSERT_EQ(policy.report().active, Arm::scatter);
  // Catch-up step (warmup_steps = 1), then samples every 4th step.
  std::vector<bool> timed;
  for (int i = 0; i < 9; ++i)
  {
    auto const step = policy.plan();
    timed.push_back(step.timed);
    policy.finish(step.timed ? 1.2 : 0.0); // below 1.5 x 1.0: not shifted
  }
  EXPECT_EQ(timed, (std::vector<bool>{false, false, false, false, true, false, false,
                                      false, true}));
  EXPECT_FALSE(policy.report().probing);
  // One shifted sample is confirmed on the next step; the second starts a probe.
  run(policy, 3, {{Arm::scatter, 0.0}});
  auto step = policy.plan();
  ASSERT_TRUE(step.timed);
  policy.finish(2.0);
  step = policy.plan();
  EXPECT_TRUE(step.timed) << "a shifted sample is confirmed at once";
  policy.finish(1.0); // not shifted: back to the grid
  EXPECT_FALSE(policy.report().probing);
  EXPECT_FALSE(policy.plan().timed);
  run(policy, 2, {{Arm::scatter, 0.0}});
  ASSERT_TRUE(policy.plan().timed);
  policy.finish(2.0);
  policy.finish(2.0);
  EXPECT_TRUE(policy.report().probing);
  EXPECT_NE(policy.report().decisions.size(), 0u);
}

TEST(LockstepPolicy, a_reprobe_keeps_the_arm_within_the_margin_and_backs_off)
{
  auto o = quiet();
  o.recheck_period = 10;
  o.recheck_max_period = 40;
  o.switch_margin = 0.1;
  Policy policy(o);
  run(policy, 9, {{Arm::scatter, 1.0}, {Arm::scheduled, 2.0}, {Arm::exact_set, 3.0}});
  ASSERT_EQ(policy.report().active, Arm::scatter);
  // 10 settled steps, then the re-check: scheduled is 5% cheaper, within
  // the margin.
  run(policy, 10, {});
  EXPECT_TRUE(policy.report().probing);
  run(policy, 9, {{Arm::scatter, 1.0}, {Arm::scheduled, 0.95}, {Arm::exact_set, 3.0}});
  ASSERT_EQ(policy.report().decisions.size(), 2u);
  EXPECT_EQ(policy.report().active, Arm::scatter);
  EXPECT_EQ(policy.report().decisions[1].reason, "periodic re-check");
  // The period doubled: no probe after 10 settled steps, one after 20.
  run(policy, 19, {});
  EXPECT_FALSE(policy.report().probing);
  run(policy, 1, {});
  EXPECT_TRUE(policy.report().probing);
  // Clearly cheaper: the arm changes and the period resets to 10.
  run(policy, 9, {{Arm::scatter, 1.0}, {Arm::scheduled, 0.5}, {Arm::exact_set, 3.0}});
  EXPECT_EQ(policy.report().active, Arm::scheduled);
  run(policy, 9, {});
  EXPECT_FALSE(policy.report().probing);
  run(policy, 1, {});
  EXPECT_TRUE(policy.report().probing);
}

// The arms a probe runs, one per step, until it decides; a timed step of arm
// a takes cost[a] seconds and the set moves at the steps in `moves` (probe
// step indices, from 0).
std::vector<Arm> probe(Policy &policy, std::map<Arm, double> const &cost,
                       std::vector<int> const &moves = {})
{
  std::vector<Arm> ran;
  while (policy.report().probing)
  {
    auto const step = policy.plan();
    EXPECT_TRUE(step.timed && step.keep_ids);
    int const i = int(ran.size());
    EXPECT_EQ(step.compare_ids, i > 0);
    ran.push_back(step.arm);
    bool const moved = std::find(moves.begin(), moves.end(), i) != moves.end();
    policy.finish(cost.at(step.arm), moved);
  }
  return ran;
}

std::map<Arm, double> const costs = {
    {Arm::scatter, 2.0}, {Arm::scheduled, 1.0}, {Arm::exact_set, 3.0}};

TEST(LockstepPolicy,
     defers_the_scheduled_arm_while_the_set_stands_and_reprobes_when_it_moves)
{
  auto o = quiet();
  o.sample_period = 4;
  Policy policy(o);
  // No rank's set moves: the scheduled arm goes behind the others, then is
  // deferred (not run, not chosen although it would be the cheapest).
  EXPECT_EQ(probe(policy, costs),
            (std::vector<Arm>{Arm::exact_set, Arm::exact_set, Arm::exact_set,
                              Arm::scatter, Arm::scatter, Arm::scatter}));
  auto const &r = policy.report();
  ASSERT_EQ(r.decisions.size(), 1u);
  EXPECT_EQ(r.decisions[0].chosen, Arm::scatter);
  EXPECT_TRUE(r.decisions[0].scheduled_deferred);
  EXPECT_EQ(r.decisions[0].same_set_steps, 6);
  EXPECT_TRUE(std::isnan(r.decisions[0].us_per_step[int(Arm::scheduled)]));
  EXPECT_EQ(r.arm_steps[int(Arm::scheduled)], 0);
  // Settled: untimed steps keep and compare nothing; samples compare.
  int samples = 0;
  for (int i = 0; i < 12; ++i)
  {
    auto const step = policy.plan();
    EXPECT_FALSE(step.keep_ids);
    EXPECT_EQ(step.compare_ids, step.timed);
    samples += step.timed;
    policy.finish(step.timed ? 2.0 : 0.0, false);
  }
  EXPECT_EQ(samples, 2); // after the catch-up step, at settled steps 4 and 8
  EXPECT_FALSE(r.probing);
  // A sample that finds the set moved starts a probe of the active arm and
  // the scheduled arm; on a moving set the scheduled arm runs and wins.
  while (!policy.plan().timed)
    policy.finish(0.0, false);
  policy.finish(2.0, true);
  EXPECT_TRUE(r.probing);
  EXPECT_EQ(probe(policy, costs, {1, 2, 3, 4, 5}),
            (std::vector<Arm>{Arm::scatter, Arm::scatter, Arm::scatter, Arm::scheduled,
                              Arm::scheduled, Arm::scheduled}));
  ASSERT_EQ(r.decisions.size(), 2u);
  EXPECT_EQ(r.decisions[1].reason, "the set moved after a probe that deferred scheduled");
  EXPECT_EQ(r.decisions[1].chosen, Arm::scheduled);
  EXPECT_FALSE(r.decisions[1].scheduled_deferred);
  EXPECT_TRUE(std::isnan(r.decisions[1].us_per_step[int(Arm::exact_set)]));
  // Not watching any more: samples compare nothing.
  for (int i = 0; i < 8; ++i)
  {
    auto const step = policy.plan();
    EXPECT_FALSE(step.compare_ids);
    policy.finish(step.timed ? 1.0 : 0.0, true);
  }
  EXPECT_FALSE(r.probing);
}

// A set that moves once and stands again (a rare jump): the re-probe the
// move began runs the scheduled arm although no step of the re-probe sees
// the set move (deferring it again would repeat at every move).
TEST(LockstepPolicy, a_reprobe_for_a_moved_set_runs_the_scheduled_arm_on_a_standing_set)
{
  auto o = quiet();
  o.sample_period = 4;
  Policy policy(o);
  probe(policy, costs);
  auto const &r = policy.report();
  ASSERT_TRUE(r.decisions.at(0).scheduled_deferred);
  while (!policy.plan().timed)
    policy.finish(0.0, false);
  policy.finish(2.0, true); // the sample sees the set moved
  ASSERT_TRUE(r.probing);
  EXPECT_EQ(probe(policy, costs),
            (std::vector<Arm>{Arm::scatter, Arm::scatter, Arm::scatter, Arm::scheduled,
                              Arm::scheduled, Arm::scheduled}));
  ASSERT_EQ(r.decisions.size(), 2u);
  EXPECT_FALSE(r.decisions[1].scheduled_deferred);
  EXPECT_EQ(r.decisions[1].chosen, Arm::scheduled);
}

TEST(LockstepPolicy, a_move_before_its_turn_runs_the_scheduled_arm)
{
  {
    // Seen in the first block: it runs in its place.
    Policy policy(quiet());
    EXPECT_EQ(probe(policy, costs, {2}),
              (std::vector<Arm>{Arm::exact_set, Arm::exact_set, Arm::exact_set,
                                Arm::scheduled, Arm::scheduled, Arm::scheduled,
                                Arm::scatter, Arm::scatter, Arm::scatter}));
    EXPECT_EQ(policy.report().active, Arm::scheduled);
  }
  {
    // Seen after it went behind: it runs last.
    Policy policy(quiet());
    EXPECT_EQ(probe(policy, costs, {4}),
              (std::vector<Arm>{Arm::exact_set, Arm::exact_set, Arm::exact_set,
                                Arm::scatter, Arm::scatter, Arm::scatter, Arm::scheduled,
                                Arm::scheduled, Arm::scheduled}));
    EXPECT_EQ(policy.report().active, Arm::scheduled);
    EXPECT_FALSE(policy.report().decisions[0].scheduled_deferred);
  }
}

// A set that jumps: every step's entering columns open, on the rank with
// the most, 20 column tiles against 100 columns on the rank with the most
// (0.2 >= defer_jump_share 0.15): the exact-set arm's steps after the first
// count them, and at its turn the scheduled arm is deferred. Its share is
// weighed again by the next probe; below the share it runs in its place.
TEST(LockstepPolicy, a_set_that_jumps_defers_the_scheduled_arm)
{
  auto o = quiet();
  o.recheck_period = 4;
  auto jump_probe = [&](Policy &policy, double opened, std::vector<bool> &counted) {
    std::vector<Arm> seen;
    std::size_t const decisions = policy.report().decisions.size();
    for (int t = 0; policy.report().decisions.size() == decisions && t < 30; ++t)
    {
      auto const step = policy.plan();
      seen.push_back(step.arm);
      counted.push_back(step.count_opened);
      policy.finish(costs.at(step.arm), true, nullptr, step.count_opened ? opened : 0,
                    step.count_opened ? 100 : 0);
    }
    return seen;
  };
  {
    Policy policy(o);
    std::vector<bool> counted;
    EXPECT_EQ(jump_probe(policy, 20, counted),
              (std::vector<Arm>{Arm::exact_set, Arm::exact_set, Arm::exact_set,
                                Arm::scatter, Arm::scatter, Arm::scatter}));
    EXPECT_EQ(counted, (std::vector<bool>{false, true, true, false, false, false}));
    auto const &d = policy.report().decisions.at(0);
    EXPECT_TRUE(d.scheduled_jumping);
    EXPECT_FALSE(d.scheduled_deferred);
    EXPECT_DOUBLE_EQ(d.jump_share, 0.2);
    EXPECT_EQ(d.jump_pairs, 2);
    EXPECT_EQ(d.chosen, Arm::scatter);
    EXPECT_TRUE(std::isnan(d.us_per_step[int(Arm::scheduled)]));
    EXPECT_EQ(policy.report().arm_steps[int(Arm::scheduled)], 0);
    // Settled: not watched (samples compare nothing, count nothing); the
    // periodic re-check probes again and, the set now drifting (2 tiles per
    // 100 columns), runs the scheduled arm.
    run(policy, 4, costs);
    ASSERT_TRUE(policy.report().probing);
    counted.clear();
    EXPECT_EQ(jump_probe(policy, 2, counted),
              (std::vector<Arm>{Arm::exact_set, Arm::exact_set, Arm::exact_set,
                                Arm::scheduled, Arm::scheduled, Arm::scheduled,
                                Arm::scatter, Arm::scatter, Arm::scatter}));
    auto const &d1 = policy.report().decisions.at(1);
    EXPECT_FALSE(d1.scheduled_jumping);
    EXPECT_EQ(d1.chosen, Arm::scheduled);
  }
  {
    Policy policy(o);
    std::vector<bool> counted;
    EXPECT_EQ(jump_probe(policy, 14, counted).at(3), Arm::scheduled) << "0.14 < 0.15";
  }
  {
    auto off = o;
    off.defer_jump_share = HUGE_VAL;
    Policy policy(off);
    std::vector<bool> counted;
    EXPECT_EQ(jump_probe(policy, 100, counted).at(3), Arm::scheduled);
    EXPECT_EQ(std::count(counted.begin(), counted.end(), true), 0) << "nothing counted";
  }
}

TEST(LockstepPolicy, the_scheduled_arm_is_not_deferred_as_incumbent_alone_or_when_off)
{
  std::vector<Arm> const listed = {Arm::exact_set, Arm::exact_set, Arm::exact_set,
                                   Arm::scheduled, Arm::scheduled, Arm::scheduled,
                                   Arm::scatter,   Arm::scatter,   Arm::scatter};
  {
    // Chosen on a moving set; the re-check finds the set standing.
    auto o = quiet();
    o.recheck_period = 5;
    Policy policy(o);
    EXPECT_EQ(probe(policy, costs, {1, 2, 3}), listed);
    ASSERT_EQ(policy.report().active, Arm::scheduled);
    run(policy, 5, {}, false);
    EXPECT_EQ(probe(policy, costs), listed);
    EXPECT_EQ(policy.report().active, Arm::scheduled);
    EXPECT_FALSE(policy.report().decisions[1].scheduled_deferred);
  }
  {
    auto o = quiet();
    o.arms = {Arm::scheduled};
    Policy policy(o);
    EXPECT_EQ(probe(policy, costs),
              (std::vector<Arm>{Arm::scheduled, Arm::scheduled, Arm::scheduled}));
  }
  {
    auto o = quiet();
    o.defer_scheduled = false;
    Policy policy(o);
    EXPECT_EQ(probe(policy, costs), listed);
  }
}

// Runs a probe to its decision; the i-th step of arm a's block takes
// script[a][i] seconds (its last value from then on), on a set that moves at
// every step unless `moving` is false. Returns the decision; `measured`, if
// given, receives plan().measured of each of the scheduled arm's steps.
hst::DistributedDecision scripted_probe(Policy &policy,
                                        std::map<Arm, std::vector<double>> const &script,
                                        bool moving = true,
                                        std::vector<bool> *measured = nullptr)
{
  std::map<Arm, std::size_t> block;
  std::size_t const decisions = policy.report().decisions.size();
  while (policy.report().decisions.size() == decisions)
  {
    auto const step = policy.plan();
    auto const &v = script.at(step.arm);
    std::size_t const i = block[step.arm]++;
    if (measured && step.arm == Arm::scheduled)
      measured->push_back(step.measured);
    policy.finish(v[std::min(i, v.size() - 1)], moving);
  }
  return policy.report().decisions.back();
}

// In a re-probe on a moving set, a scheduled arm that is not the incumbent
// catches up and its steps may fall for a few steps more (2026-12-07, one
// process: 48.7, 41.8, 36.6, 35.3 ns/entry after a catch-up on a 1e6-row
// operator, where it runs ~25 settled): its block takes up to
// scheduled_settle_steps further warm-up steps while each combined step
// falls below 0.9x the block's step before it, and the first that does not
// fall is measured. Here, after its catch-up (8 s), steps of 4, 3.2, 2 and
// then 1.2 against the incumbent scatter arm's 2.0.
TEST(LockstepPolicy, a_reprobe_warms_up_the_scheduled_arm_while_its_steps_fall)
{
  std::map<Arm, std::vector<double>> const first = {
      {Arm::exact_set, {100, 3}}, {Arm::scheduled, {100, 1.5}}, {Arm::scatter, {100, 1}}};
  std::map<Arm, std::vector<double>> const rise = {{Arm::exact_set, {100, 3}},
                                                   {Arm::scheduled, {8, 4, 3.2, 2, 1.2}},
                                                   {Arm::scatter, {100, 2}}};
  struct Case
  {
    int settle;         // scheduled_settle_steps
    int granted;        // further warm-up steps taken
    double measured_us; // the mean of the scheduled arm's measured steps
    Arm chosen;
  };
  for (Case const c :
       {Case{0, 0, 3.6e6, Arm::scatter}, Case{1, 1, 2.6e6, Arm::scatter},
        Case{2, 2, 1.6e6, Arm::scheduled}, Case{3, 3, 1.2e6, Arm::scheduled},
        Case{5, 4, 1.2e6, Arm::scheduled}})
  {
    SCOPED_TRACE(c.settle);
    auto o = quiet();
    o.scheduled_settle_steps = c.settle;
    Policy policy(o);
    // The first probe: no rule (nothing was idle), scatter chosen.
    auto const d0 = scripted_probe(policy, first);
    ASSERT_EQ(d0.chosen, Arm::scatter);
    EXPECT_EQ(d0.settle_steps, (std::array<std::int64_t, 3>{}));
    policy.finish(0.0, true); // a settled step
    policy.reprobe();
    // The re-probe: the scheduled arm's block after its catch-up; a step
    // that may still warm up is not marked measured (no model refinement).
    std::vector<bool> marked;
    auto const d = scripted_probe(policy, rise, true, &marked);
    EXPECT_EQ(d.settle_steps[int(Arm::scheduled)], c.granted);
    EXPECT_EQ(d.settle_steps[int(Arm::scatter)], 0);
    EXPECT_EQ(d.settle_steps[int(Arm::exact_set)], 0);
    EXPECT_EQ(d.measured_steps[int(Arm::scheduled)], 2);
    EXPECT_DOUBLE_EQ(d.us_per_step[int(Arm::scheduled)], c.measured_us);
    EXPECT_EQ(d.chosen, c.chosen);
    // Its block: the catch-up, the granted steps, two measured steps.
    ASSERT_EQ(marked.size(), std::size_t(1 + c.granted + 2));
    for (std::size_t i = 0; i < marked.size(); ++i)
      EXPECT_EQ(marked[i], i > std::size_t(c.settle)) << "block step " << i;
  }
  // A step that does not fall ends the warm-up at once: after 2, a step of
  // 1.9 (not below 1.8) is measured.
  {
    Policy policy(quiet());
    scripted_probe(policy, first);
    policy.reprobe();
    auto const d = scripted_probe(policy, {{Arm::exact_set, {100, 3}},
                                           {Arm::scheduled, {2, 1.9, 1}},
                                           {Arm::scatter, {100, 2}}});
    EXPECT_EQ(d.settle_steps[int(Arm::scheduled)], 0);
    EXPECT_DOUBLE_EQ(d.us_per_step[int(Arm::scheduled)], (1.9 + 1) / 2 * 1e6);
  }
}

// The rule acts only in a re-probe, on a set that moved, for a scheduled arm
// that is not the incumbent: not in the first probe, not on a standing set,
// not for an incumbent scheduled arm (its steps did not pause).
TEST(LockstepPolicy, the_settle_rule_leaves_first_probes_standing_sets_and_incumbents)
{
  std::map<Arm, std::vector<double>> const falling = {
      {Arm::exact_set, {100, 3}},
      {Arm::scheduled, {8, 4, 3.2, 2, 1.2}},
      {Arm::scatter, {100, 2}}};
  {
    Policy policy(quiet());
    auto const d = scripted_probe(policy, falling);
    EXPECT_EQ(d.settle_steps[int(Arm::scheduled)], 0);
    EXPECT_DOUBLE_EQ(d.us_per_step[int(Arm::scheduled)], 3.6e6);
  }
  {
    auto o = quiet();
    o.defer_scheduled = false; // so that it runs on a standing set
    Policy policy(o);
    ASSERT_EQ(scripted_probe(policy,
                             {{Arm::exact_set, {100, 3}},
                              {Arm::scheduled, {100, 1.5}},
                              {Arm::scatter, {100, 1}}},
                             false)
                  .chosen,
              Arm::scatter);
    policy.reprobe();
    auto const d = scripted_probe(policy, falling, false);
    EXPECT_EQ(d.settle_steps[int(Arm::scheduled)], 0);
    EXPECT_DOUBLE_EQ(d.us_per_step[int(Arm::scheduled)], 3.6e6);
  }
  {
    Policy policy(quiet());
    ASSERT_EQ(scripted_probe(policy, {{Arm::exact_set, {100, 3}},
                                      {Arm::scheduled, {100, 1}},
                                      {Arm::scatter, {100, 2}}})
                  .chosen,
              Arm::scheduled);
    policy.reprobe();
    auto const d = scripted_probe(policy, falling);
    EXPECT_EQ(d.settle_steps[int(Arm::scheduled)], 0);
    EXPECT_DOUBLE_EQ(d.us_per_step[int(Arm::scheduled)], 3.6e6);
  }
}

TEST(LockstepPolicy, bad_options_are_named)
{
  auto expect = [](auto mutate, char const *piece) {
    hst::DistributedAdaptiveOptions o;
    mutate(o);
    try
    {
      hst::detail::check_options(o);
      ADD_FAILURE() << "no exception for " << piece;
    }
    catch (std::invalid_argument const &e)
    {
      EXPECT_NE(std::string(e.what()).find(piece), std::string::npos) << e.what();
    }
  };
  expect([](auto &o) { o.arms.clear(); }, "'options.arms'");
  expect([](auto &o) { o.arms = {Arm::scatter, Arm::scatter}; }, "twice");
  expect([](auto &o) { o.measure_steps = 0; }, "'options.measure_steps'");
  expect([](auto &o) { o.scheduled_settle_steps = -1; },
         "'options.scheduled_settle_steps' must be >= 0, got -1");
  expect([](auto &o) { o.switch_margin = 1; }, "'options.switch_margin'");
  expect([](auto &o) { o.time_shift_ratio = 1; }, "'options.time_shift_ratio'");
  expect([](auto &o) { o.recheck_max_period = o.recheck_period - 1; },
         "'options.recheck_max_period'");
  expect([](auto &o) { o.session.strict = true; }, "'options.session.strict'");
  expect([](auto &o) { o.clock = nullptr; }, "'options.clock'");
  expect([](auto &o) { o.model_margin = 0.5; }, "'options.model_margin'");
  expect([](auto &o) { o.model_margin = std::nan(""); }, "'options.model_margin'");
  expect([](auto &o) { o.defer_jump_share = 0; },
         "'options.defer_jump_share' must be > 0");
  expect([](auto &o) { o.defer_jump_share = std::nan(""); },
         "'options.defer_jump_share'");
  expect(
      [](auto &o) {
        o.model.emplace();
        o.model->arm[int(Arm::scheduled)].per_entry = -1;
      },
      "'options.model' has a negative or non-finite constant -1 for arm scheduled");
  expect(
      [](auto &o) {
        o.model.emplace();
        o.model->arm[int(Arm::scatter)].fixed = HUGE_VAL;
      },
      "'options.model'");
}

// With a cost model. Predictions (seconds per arm, indexed by Arm, each the
// slowest rank's) are what the session combines; here fed by hand.
hst::DistributedAdaptiveOptions modelled()
{
  auto o = quiet();
  o.model.emplace(); // the policy only needs to know there is one
  o.model_margin = 1.5;
  o.defer_scheduled = false;
  return o;
}

// Runs a probe to its decision; every timed step takes cost[a] seconds and
// sends `predicted` (nullptr: none). Returns the arm of each step.
std::vector<Arm> probe_predicted(Policy &policy, std::map<Arm, double> const &cost,
                                 double const *predicted)
{
  std::vector<Arm> seen;
  std::size_t const decisions = policy.report().decisions.size();
  while (policy.report().decisions.size() == decisions)
  {
    auto const step = policy.plan();
    EXPECT_TRUE(step.keep_counts) << "every probe step keeps its ids under a model";
    seen.push_back(step.arm);
    policy.finish(cost.at(step.arm), true, predicted);
  }
  return seen;
}

// After the first arm completes, an arm predicted above model_margin x the
// lowest completed cost is not run (so never made) and never chosen, even
// when its own steps would have been the cheapest; one within the margin
// runs. The first arm always runs.
TEST(LockstepPolicy, model_skips_an_arm_predicted_beyond_the_margin)
{
  // Within 2x of each other: no arm is cut.
  std::map<Arm, double> const cost = {
      {Arm::exact_set, 10.0}, {Arm::scheduled, 6.0}, {Arm::scatter, 9.0}};
  double predicted[3];
  predicted[int(Arm::scheduled)] = 15.5; // > 1.5 x 9 (scatter's, run before it)
  predicted[int(Arm::exact_set)] = 1e9;  // the first arm: run regardless
  predicted[int(Arm::scatter)] = 14.5;   // <= 1.5 x 10: run
  Policy policy(modelled());
  auto const seen = probe_predicted(policy, cost, predicted);
  std::vector<Arm> const expected = {Arm::exact_set, Arm::exact_set, Arm::exact_set,
                                     Arm::scatter,   Arm::scatter,   Arm::scatter};
  EXPECT_EQ(seen, expected);
  auto const &d = policy.report().decisions.at(0);
  EXPECT_EQ(d.chosen, Arm::scatter);
  EXPECT_TRUE(d.skipped[int(Arm::scheduled)]);
  EXPECT_FALSE(d.skipped[int(Arm::scatter)]);
  EXPECT_FALSE(d.skipped[int(Arm::exact_set)]);
  EXPECT_DOUBLE_EQ(d.skip_us[int(Arm::scheduled)], 15.5e6);
  // scatter, predicted the cheaper, ran before scheduled was weighed
  EXPECT_DOUBLE_EQ(d.skip_bound_us, 9e6);
  EXPECT_DOUBLE_EQ(d.model_margin, 1.5);
  EXPECT_TRUE(std::isnan(d.us_per_step[int(Arm::scheduled)]));
  EXPECT_DOUBLE_EQ(d.predicted_us_per_step[int(Arm::scatter)], 14.5e6);
  EXPECT_EQ(policy.report().arm_steps[int(Arm::scheduled)], 0);

  // At the margin exactly, and with no prediction, every arm runs. The bound
  // is the lowest completed cost so far: 10, then 9 once scatter (predicted
  // the cheaper, so run first) is done.
  predicted[int(Arm::scheduled)] = 13.5;
  predicted[int(Arm::scatter)] = 9.0;
  Policy at_margin(modelled());
  EXPECT_EQ(probe_predicted(at_margin, cost, predicted).size(), 9u);
  EXPECT_EQ(at_margin.report().decisions.at(0).chosen, Arm::scheduled);
  Policy unknown(modelled());
  EXPECT_EQ(probe_predicted(unknown, cost, nullptr).size(), 9u);
  EXPECT_EQ(unknown.report().decisions.at(0).chosen, Arm::scheduled);
  double const none[3] = {-1, -1, -1}; // what the session sends without counters
  Policy unknown_counters(modelled());
  EXPECT_EQ(probe_predicted(unknown_counters, cost, none).size(), 9u);
  EXPECT_TRUE(
      std::isnan(unknown_counters.report().decisions.at(0).predicted_us_per_step[int(
          Arm::scatter)]));
  // A completed cost a coarse clock read as 0 bounds nothing.
  Policy coarse(modelled());
  EXPECT_EQ(
      probe_predicted(coarse,
                      {{Arm::exact_set, 0.0}, {Arm::scheduled, 0.0}, {Arm::scatter, 0.0}},
                      predicted)
          .size(),
      9u);
  // Without a model the policy asks for no counters.
  Policy plain(quiet());
  EXPECT_FALSE(plain.plan().keep_counts);
}

// After the first arm, the arms still to run go in order of their
// predictions: scatter (predicted 5) before scheduled (predicted 14, within
// 1.5 x the first arm's 10 but beyond 1.5 x scatter's 9), which is then not
// run. In the given order it would run.
TEST(LockstepPolicy, model_measures_the_arm_predicted_cheapest_before_dearer_ones)
{
  std::map<Arm, double> const cost = {
      {Arm::exact_set, 10.0}, {Arm::scheduled, 6.0}, {Arm::scatter, 9.0}};
  double predicted[3];
  predicted[int(Arm::scheduled)] = 14.0;
  predicted[int(Arm::exact_set)] = 10.0;
  predicted[int(Arm::scatter)] = 5.0;
  Policy policy(modelled());
  std::vector<Arm> const expected = {Arm::exact_set, Arm::exact_set, Arm::exact_set,
                                     Arm::scatter,   Arm::scatter,   Arm::scatter};
  EXPECT_EQ(probe_predicted(policy, cost, predicted), expected);
  auto const &d = policy.report().decisions.at(0);
  EXPECT_TRUE(d.skipped[int(Arm::scheduled)]);
  EXPECT_DOUBLE_EQ(d.skip_bound_us, 9e6);
  EXPECT_EQ(d.chosen, Arm::scatter);
}

// With the deferral on, the predictions do not order round 1 until a set
// is seen to move: scheduled, predicted cheapest, still goes behind scatter,
// whose steps see the move, and then runs. Sorted at once, it would be
// deferred after exact_set's steps on a standing set.
TEST(LockstepPolicy, model_order_waits_for_the_deferral_while_the_set_stands)
{
  auto o = modelled();
  o.defer_scheduled = true;
  Policy policy(o);
  double const predicted[3] = {1.0, 2.0, 3.0}; // by Arm: scheduled, exact_set, scatter
  std::map<Arm, double> const cost = {
      {Arm::exact_set, 2.0}, {Arm::scheduled, 1.0}, {Arm::scatter, 3.0}};
  std::vector<Arm> seen;
  for (int t = 0; policy.report().decisions.empty() && t < 30; ++t)
  {
    auto const step = policy.plan();
    seen.push_back(step.arm);
    policy.finish(cost.at(step.arm), t >= 4, predicted); // the set moves at step 4
  }
  std::vector<Arm> const expected = {Arm::exact_set, Arm::exact_set, Arm::exact_set,
                                     Arm::scatter,   Arm::scatter,   Arm::scatter,
                                     Arm::scheduled, Arm::scheduled, Arm::scheduled};
  EXPECT_EQ(seen, expected);
  ASSERT_FALSE(policy.report().decisions.empty());
  EXPECT_FALSE(policy.report().decisions[0].scheduled_deferred);
  EXPECT_EQ(policy.report().decisions[0].chosen, Arm::scheduled);
}

// Settled: the step before each sample keeps its ids, and samples whose
// predictions put the active arm above model_margin x another arm start a
// re-probe after shift_samples of them in a row (each confirmed on the next
// step); a sample in between that does not resets the count.
TEST(LockstepPolicy, model_reprobes_when_the_predicted_ranking_changes)
{
  auto o = modelled();
  o.sample_period = 4;
  o.shift_samples = 2; // model_margin 1.5 (modelled())
  Policy policy(o);
  std::map<Arm, double> const cost = {
      {Arm::exact_set, 3.0}, {Arm::scheduled, 2.0}, {Arm::scatter, 1.0}};
  double predicted[3] = {2.0, 3.0, 1.0}; // by Arm: scheduled, exact_set, scatter
  probe_predicted(policy, cost, predicted);
  ASSERT_EQ(policy.report().active, Arm::scatter);
  // Catch-up step, then a sample every 4th step; the step before keeps ids.
  std::vector<bool> timed, keep;
  auto settle = [&](int steps, double const *p) {
    for (int i = 0; i < steps; ++i)
    {
      auto const step = policy.plan();
      timed.push_back(step.timed);
      keep.push_back(step.keep_counts);
      policy.finish(step.timed ? 1.0 : 0.0, false, step.timed ? p : nullptr);
    }
  };
  settle(5, predicted);
  EXPECT_EQ(timed, (std::vector<bool>{false, false, false, false, true}));
  EXPECT_EQ(keep, (std::vector<bool>{false, false, false, true, true}));
  // scheduled predicted 0.7 of scatter: scatter within 1.5 x, no change.
  double within[3] = {0.7, 3.0, 1.0};
  settle(4, within);
  EXPECT_FALSE(policy.report().probing);
  EXPECT_FALSE(policy.plan().timed) << "no confirmation inside the margin";
  // 0.6: beyond; confirmed on the next step, which starts the probe.
  double outside[3] = {0.6, 3.0, 1.0};
  settle(3, nullptr);
  timed.clear();
  settle(1, outside);
  EXPECT_TRUE(timed.back());
  EXPECT_FALSE(policy.report().probing);
  EXPECT_TRUE(policy.plan().timed) << "a predicted change is confirmed at once";
  settle(1, predicted); // not confirmed: back to the grid, count reset
  EXPECT_FALSE(policy.report().probing);
  EXPECT_FALSE(policy.plan().timed);
  settle(2, nullptr);
  settle(1, outside);
  EXPECT_FALSE(policy.report().probing) << "the count restarted";
  settle(1, outside);
  ASSERT_TRUE(policy.report().probing);
  EXPECT_NE(policy.report().decisions.size(), 0u);
  probe_predicted(policy, cost, outside);
  auto const &d = policy.report().decisions.back();
  EXPECT_EQ(d.reason,
            "predicted scheduled 600000.000000 us vs scatter 1000000.000000 us");
}

} // namespace
