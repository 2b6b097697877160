#pragma once
// Adaptive session: chooses among the three arms on the caller's own steps and
// follows the workload when it shifts (issue 4).
//
// Mechanism (one state machine, two phases):
//  - Probing. Each probe step is real work by one arm (y is updated once, by
//    that arm) and is timed: fence the caller's instance, read the clock,
//    apply, fence, read the clock. A block is an arm's run of consecutive
//    probe steps. The first block of an arm that was idle (made and never
//    run, or not the active arm since the last decision), and any block
//    whose arm meets a set other than the one it last ran on, begin with
//    warmup_steps warm-up steps: the arm catches up, in cache and in
//    compiled state, which is not its steady state. Measured: an idle arm's
//    first step takes 2-10x its steady step, the scatter arm's too, on a
//    frozen set as well; a later block's first step is up to ~2x slower on
//    a moving set and not slower on a frozen one. For later blocks the arms'
//    own counters tell: the scheduled arm re-planned (stats().replans), the
//    exact-set arm compiled (compiles()); the scatter arm keeps no set, so
//    it counts once the probe has seen the set move between two consecutive
//    steps of one arm. On a set the probe has seen move, the scheduled
//    arm's blocks warm up scheduled_extra_warmup (default 0) steps longer,
//    an option for ms-scale steps under drift: its piece lists, work list
//    and compiled tiles are what the other arms' steps push out of cache
//    (measured on road_1000x1000 under drift at rho 0.05, in the re-probe
//    at step 40: its second step there took 1.44x and 1.18x the same step
//    of a scheduled-only run in two of three runs, 0.82x in the third;
//    measured on its second step it lost such re-probes to the scatter
//    arm, 1.3-1.5x slower over the rest of the run, and measured on its
//    third it won them in three runs of three). In a re-probe, its block
//    that catches up on a moving set also warms up while its steps still
//    fall (AdaptiveOptions::scheduled_settle_steps, at most 3 by default): a
//    step below 0.9x the block's step before it is a warm-up step, the first
//    that is not is measured (measured on grid2d_5pt_1000x1000 under drift
//    at rho 0.01: after the catch-up at step 40, 197, 192 us in some
//    processes, 342, 254, 230 in others). Other steps are
//    measured. Warm-up steps are charged to the probe, not compared.
//    Measured steps are compared by their cost: an arm's time over its
//    measured steps divided by their work, the stored entries of A[:, S_t]
//    summed over those steps (read on the host after the step's clock, from
//    the ids the arm's input check copied).
//    Every arm reads and adds about those entries, and arms are timed on
//    different steps: measured, on a circuit operator under drift the
//    entries of consecutive sets differed up to 5x in the first steps, and
//    time per step ranked the arms by when they ran. The sums, not a mean of
//    per-step ratios, so that compiles inside measured steps are charged
//    where they happen. A probe has two rounds:
//      * round 1: every allowed arm (AdaptiveOptions::arms, in that order)
//        runs one block: its warm-up, if any, and one measured step. An arm
//        whose cost is more than cut_ratio times the lowest is cut: it runs
//        no more and cannot be chosen;
//      * round 2: the other arms, lowest round-1 cost first, run one block
//        each with the rest of their measure_steps measured steps (a new
//        block: it may start with warm-up again). An arm stops early, and
//        cannot be chosen, as soon as its cost exceeds cut_ratio times the
//        lowest cost of an arm that completed its measured steps. The first
//        arm of round 2 always completes.
//    Charge: the exact-set arm compiles on every step whose set differs
//    from the previous step's. When the set changes on some steps only (a
//    slow drift, a set that jumps now and then), its one measured step may
//    fall on a step without a change and make it look cheaper than it is
//    (measured: grid3d_7pt_46x46x46 under jump at rho 0.002 chose it at 0.8x
//    the best arm until the compile-rate detector re-probed; on
//    mesh_geometric_10000 under drift at rho 0.01 each of three re-probes
//    that detector started kept it on a quiet measured step, 0.67x the
//    best arm over 200 steps). So, once the probe has seen the set move
//    (or the arm's own compile rate began the re-probe), each of its probe
//    steps compiles, an unchanged set too (after the step's apply, so
//    that the compile's memory traffic does not slow the apply it would
//    precede: before the apply it made the measured step of a 3000-column
//    frozen set on grid2d_5pt_1000x1000 1.75x its steady step, and the
//    session chose the scatter arm, 0.62x the best), and the session reads
//    its clock around the compile as well as around the step: its cost is
//    its cost per entry without the compile plus the compile's per entry
//    times the share of steps it compiles on, the share of its measured
//    steps whose set changed or, if higher, the share of the probe's pairs
//    of steps on which the set changed (in a re-probe started by its own
//    compile rate, at least that of the settled window that started it; the
//    reason states a rate above its own steps'). The compile asked for costs
//    a compile on each of the arm's probe steps whose set did not change
//    (warm-up steps too), and is not counted as its step's (the report's
//    us_per_step is the step as the arm runs it). Where the set is first seen
//    to move on a later step of another arm, after the arm's measured steps
//    compiled nothing, the session compiles the arm for that step's set,
//    timed, after that step's clock (a compile between steps, charged to the
//    probe). On a set that does not move no compile is asked for: it would be
//    priced and never charged (measured: it cost a frozen probe 10-28 us, one
//    step of the exact-set arm with a compile). With warmup_steps = 0 the
//    measured compile of a new arm is its first, cold one. Before, the
//    compile's price came from the arm's warm-up step, whose compile and step
//    were cold: on rmat_s15 (drift, rho 0.002) that step took 2.2x a warm
//    step with a compile (336 against 156 us; its compile alone 178 against
//    72 us). The rate comes from a few pairs of steps (rmat_s15 under drift
//    at rho 0.002: 0.4 in the probe, 0.18 over the run): a set whose motion
//    slows after the probe is charged more than it will pay.
//    The arm with the lowest cost among those that completed is chosen; a
//    re-probe keeps the active arm if it completed and no completed arm is
//    cheaper by more than switch_margin. Before that, in a re-probe on a
//    set it saw move, when the scheduled arm completed, is not about to be
//    chosen and came within scheduled_confirm_ratio of the arm that is, the
//    two run a second block each, the scheduled arm first (its confirmation,
//    AdaptiveOptions::scheduled_confirm_steps): warm-up (warmup_steps, and
//    the scheduled arm's extra and settle steps as in any of its blocks),
//    then scheduled_confirm_steps measured steps in a row, whose cost
//    replaces the arm's first block's; then the probe decides. A first
//    block measures an arm on its second step, after the other arms' steps
//    pushed its state out of cache, the scheduled arm's the most; both arms
//    measured on consecutive steps compare them as they run when chosen
//    (ADAPTIVE_LOG.md, 2026-12-07 (stop 43), has the traces and sweeps). So
//    a clearly worse arm costs about one step (plus a warm-up step on a new
//    set), close arms are compared on measure_steps steps each (on a moving
//    set the scheduled arm and its near rival on more), and nothing depends
//    on the operator.
//    Deferral (AdaptiveOptions::defer_scheduled): every probe step compares
//    its ids with the previous step's (O(k), probe steps only). Until the
//    probe has seen the set move, the scheduled arm's round-1 block goes
//    behind the other arms' (once), and when its turn comes on a set that
//    has not moved over the probe's steps it is deferred: not run, not made,
//    not chosen, unless it is the incumbent of a re-probe. Its gain is the
//    re-plan of changed columns only; on a set that does not change it runs
//    the same entries as the exact-set arm with a read-modify-write of y per
//    entry instead of per row, and its making (the schedule of the expected
//    columns) costs several steps: measured on the microsecond-steps sweep,
//    a frozen set's best arm was the exact-set or scatter arm in 52 of 56
//    cases and the scheduled arm within 1.3% in the rest, while its making
//    and cold steps cost 5-12% of a 200-step run. A decision that deferred
//    it watches the set: each step-time sample (below) compares its ids
//    with the probe's last step's, and another set starts a re-probe
//    (Trigger::moved) at the next step, within sample_period steps of the
//    first move. That re-probe runs the scheduled arm and the incumbent
//    only: the third arm lost to the incumbent at the last decision, and a
//    rise of the incumbent's own cost is what the detectors below watch. It
//    never defers the scheduled arm, even if the set stands again during it
//    (a set that moves once in many steps: the move was seen).
//    A set that jumps defers it too (AdaptiveOptions::defer_jump_share):
//    until its round-1 turn, each probe step whose set changed also counts
//    the column tiles its entering columns open (tiles that no column of the
//    previous step lies in; O(k) host work, with the operator's scratch), and
//    when its turn comes, after at least one pair of steps, at a mean of
//    defer_jump_share or more tiles per set column per step it is deferred:
//    each such tile is a tile compile of its step, and where entering
//    columns land anywhere its re-plan is a compile of about the churn's
//    share of the set on every step, on top of an apply no cheaper than the
//    scatter arm's (measured on the full sweep: under jump at churn 0.05 and
//    0.25 the scheduled arm was never the best arm; its making and first
//    step, the costliest steps of a jump probe, cost up to 10% of a 200-step
//    run of microsecond steps). Such a decision does not watch the set (it
//    moves); the periodic re-check and the active arm's detectors probe
//    again, and weigh the rule again.
//  - Settled. Each step is a switch on the chosen arm; the session adds no
//    allocation and O(1) host work to the arm's own step, and no fence and
//    no clock read except on sampled steps (below). Three things start a
//    re-probe:
//      * the step-time detector: after the decision's warmup_steps catch-up
//        steps, every sample_period-th settled step is timed exactly like a
//        probe step (fence the caller's instance, read the clock, apply,
//        fence, read the clock): the decision at step D samples steps
//        D + w + j * sample_period - 1, j = 1, 2, ... A sample is shifted
//        when its time per entry is more than time_shift_ratio times the
//        active arm's reference: its cost over the measured probe steps in
//        which it compiled nothing, if there were such steps, and then a
//        sample in which it compiled is skipped (neither shifted nor
//        breaking a run of shifted samples): a compile makes a step several
//        times slower (measured: the exact-set arm's step 7 us with a set
//        compile, 3 us without), and compiles are the other detector's
//        signal; else its cost over all its measured steps, each fenced,
//        compiles included, as the sample is. A shifted sample is
//        confirmed at once: the next step is sampled too, and so on, until
//        shift_windows shifted samples in a row (a count of its own, reset
//        by any sample that is not shifted) start a re-probe at the next
//        step, or one that is not shifted returns the samples to their grid.
//        A lasting rise is so told from one slow step (an interrupt, a noisy
//        neighbour) within shift_windows steps, not shift_windows periods.
//        Cost: one fence, two clock reads and k host reads per sampled step.
//        Only a rise counts: it means the active arm's step now costs more
//        per entry than when it was chosen, so the ranking may have flipped
//        (measured: under drift on 1e6-row operators the scatter arm's step
//        grows 3-6x over 200 steps as the set spreads); a fall makes the
//        active arm cheaper and says nothing about the others, so a faster
//        arm is left to the periodic re-check. A re-probe that keeps the arm
//        takes its new cost as the reference, so a steadily growing step
//        re-probes once per time_shift_ratio-fold rise, not on every sample,
//        and switch_margin still guards the choice;
//      * the compile-rate detector: over windows of window_steps steps it
//        compares the active arm's compile rate (scheduled: tiles compiled
//        per step, exact set: set compiles per step; scatter has none) with
//        the rate it had in its measured probe steps; a window is shifted
//        when the rate rose by more than shift_floor and more than
//        shift_ratio-fold, and shift_windows shifted windows in a row (a
//        count of its own) start a re-probe. Only a rise counts: it means
//        the active arm now pays for compiles it did not pay for when it
//        was chosen; a fall makes it cheaper, and a faster arm is left to
//        the periodic re-check. The first window begins warmup_steps after
//        the decision (catch-up again);
//      * the periodic re-check, recheck_period steps after a decision; the
//        period doubles (up to recheck_max_period) each time a re-probe keeps
//        the active arm and resets when a probe changes it.
//    reprobe() starts a probe at the next step.
//
// Making the session (issue 14) costs O(expected columns): it copies them
// and checks them; each arm is made when it first runs, before that step's
// clock is read (the scheduled arm compiled then for the expected columns),
// and the arms' per-column host scratch is the operator's (Scratch.hpp), so
// nothing of the operator's size is allocated or visited.
//
// Cost model (with AdaptiveOptions::model; CostModel.hpp): each probe step
// also counts, on the host from its ids and the previous probe step's, the
// entries of A[:, S], whether S changed and the entries of the columns that
// entered or left (O(k), probe steps only), and each measured step refines
// its arm's prediction. In round 1, before an arm's block (not the first
// arm's), the arm is skipped, never run and never made, when its predicted
// cost on the latest counters exceeds model_margin times the lowest cost
// measured so far in the probe; a skipped arm cannot be chosen. The arms
// after the first run in order of their predictions, cheapest first (so
// that a dear arm is weighed against the measured cost of the arm
// predicted cheapest: on road_316x316 under jump the scheduled arm's making
// and first step cost 15-32 steps of the scatter arm), unless the deferral still waits to
// see the set move (it orders them then). Settled, each step-time sample also counts (the
// step before it keeps its ids), refines the active arm's prediction and ranks the arms:
// shift_windows samples in a row that predict the active arm dearer than model_margin
// times another arm start a re-probe (Trigger::predicted): a prediction
// asks for as wide a gap to start a re-probe as to skip an arm. Each decision
// reports every arm's prediction beside its measured cost.
//
// Probe length (N = arms.size(), w = warmup_steps, m = measure_steps, e =
// scheduled_extra_warmup, plus scheduled_settle_steps in a re-probe and
// scheduled_rise_warmup in one a rising step time began, if the scheduled
// arm is allowed, else 0; c = scheduled_confirm_steps in a re-probe if the
// scheduled arm is allowed, else 0): at most
// L = N * (w + 1) + (m > 1 ? N * (w + m - 1) : 0) + e * (m > 1 ? 2 : 1)
//     + (c > 0 ? 2 * (w + c) + e : 0)
// steps (no arm cut); when every arm but the fastest is cut, (N - 1) * (w +
// 1) + 2 w + m + e * (m > 1 ? 2 : 1) at most (no confirmation: the
// scheduled arm was cut or is the fastest). With the defaults (3 arms, w =
// 1, m = 1; e = 0 and c = 0 in a first probe, 3 and 3 in a re-probe): L <=
// 6 in a first probe (4 when the scheduled arm is deferred), 20 in a
// re-probe.
// Round 1 takes N * (w + 1) steps (+ e on a moving set), less w + 1 for
// each arm deferred or skipped by the model.
//
// Bound on following a shift that begins at step t while settled, after the
// decision's catch-up (W = window_steps, H = shift_windows, P =
// sample_period): if the active arm's step time shows it (every sample from
// t on is shifted), its re-probe starts by step t + P + H - 1 (the first
// sample at or after t is at most P - 1 steps later, the H - 1 confirming
// samples follow it, the probe begins at the next step) and is decided at
// most L steps later; if its compile rate shows it (every full window
// after it is shifted), the re-probe starts within (H + 1) * W + w steps;
// any other shift is decided by the next periodic re-check, at most
// recheck_max_period + L steps after the shift. With the defaults (P = 32,
// W = 16, H = 2, periods 256 .. 4096): 33 + 20 steps, 49 + 20 steps, or
// 4096 + 20.
//
// Input checks are the held arms' own (each apply_cols checks its input
// before writing anything); a rejected call is rethrown under this class's
// name and leaves y and the session's state as they were. Checking here as
// well would copy device-resident column ids and fence twice per step.
//
// This session decides on its own rank's times only; the distributed one
// (ranks timing the arms in lockstep and agreeing through a collective) is
// hst::DistributedAdaptiveSession, in distributed/DistributedAdaptiveSession.hpp.

#include <hst/CostModel.hpp>
#include <hst/ExactSetArm.hpp>
#include <hst/Options.hpp>
#include <hst/ScatterArm.hpp>
#include <hst/ScheduledArm.hpp>
#include <hst/detail/InputCheck.hpp>
#include <hst/detail/OperatorData.hpp>
#include <hst/kokkos_ext/Compat.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace hst
{

inline constexpr std::size_t arm_count = 3;

/// One decision of an adaptive session: the end of a probe.
struct AdaptiveDecision
{
  std::int64_t probe_start = 0; ///< step at which the probe began
  std::int64_t step = 0;        ///< first step the chosen arm runs settled
  Arm chosen = Arm::scheduled;
  /// Mean microseconds per measured step of each arm, indexed by Arm; NaN
  /// for an arm not probed. For an arm cut or stopped early, the mean of the
  /// steps it ran.
  std::array<double, arm_count> us_per_step = {std::numeric_limits<double>::quiet_NaN(),
                                               std::numeric_limits<double>::quiet_NaN(),
                                               std::numeric_limits<double>::quiet_NaN()};
  /// What the arms were compared by: nanoseconds per entry of A[:, S] over
  /// the same steps (their time over their entries; see AdaptiveSession.hpp),
  /// indexed by Arm; NaN for an arm not probed.
  std::array<double, arm_count> ns_per_entry = {std::numeric_limits<double>::quiet_NaN(),
                                                std::numeric_limits<double>::quiet_NaN(),
                                                std::numeric_limits<double>::quiet_NaN()};
  /// The cost model's prediction (AdaptiveOptions::model) of each arm's
  /// nanoseconds per entry on the probe's latest step, with the scale its
  /// timed steps up to the decision gave it, indexed by Arm; NaN without a
  /// model or when the probe's steps did not show the workload's churn.
  std::array<double, arm_count> predicted_ns_per_entry = {
      std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN(),
      std::numeric_limits<double>::quiet_NaN()};
  /// Measured and warm-up steps of each arm in this probe, indexed by Arm.
  std::array<int, arm_count> measured_steps{};
  std::array<int, arm_count> warmup_steps{};
  /// Written by AdaptiveSession::report() (formatting it when deciding
  /// would cost several steps of a small operator). Why the probe began:
  /// "initial probe", "reprobe() requested", "periodic
  /// re-check", or the shift seen, e.g. "scheduled compile rate 4.20
  /// tiles/step vs 0.30 at probe" or "scatter step time 1.240 ns/entry vs
  /// 0.410 ns/entry at probe (2 samples)" (the mean of the shifted samples
  /// in a row vs the arm's reference from its probe); then, for each arm
  /// abandoned, why, e.g. "; scatter cut after round 1 (2.600 ns/entry >
  /// 2.00 x 0.900 ns/entry)" or "; scheduled stopped after 2 of 3 steps
  /// (3.100 ns/entry > 2.00 x 1.500 ns/entry)".
  std::string reason;
};

/// What an adaptive session chose, when and why, and what probing cost.
struct AdaptiveReport
{
  /// The arm of the latest decision; before the first one, the probed arm.
  Arm active = Arm::scheduled;
  bool probing = true; ///< a probe is under way
  std::vector<AdaptiveDecision> decisions;
  std::int64_t steps = 0;                          ///< steps applied so far
  std::array<std::int64_t, arm_count> arm_steps{}; ///< steps each arm ran
  std::int64_t probe_steps = 0;                    ///< steps run while probing
  /// Time of all probe steps (fenced), and of the compiles a probe made
  /// between its steps (see probe_compiles).
  double probe_seconds = 0;
  /// Compiles of the exact-set arm timed apart from its steps while
  /// probing ("Charge" in AdaptiveSession.hpp): on its probe steps, and
  /// between steps where a move seen after its measured steps needs a price.
  std::int64_t probe_compiles = 0;
  /// Time of the probe steps beyond what the arm each probe chose would have
  /// taken for them (their entries at its measured time per entry): the
  /// price of probing. Negative when switch_margin kept a slower arm, or
  /// when the chosen arm's measured steps were slow for their entries.
  double probe_excess_seconds = 0;
  /// Settled steps timed by the step-time detector, and their time (fenced).
  std::int64_t sampled_steps = 0;
  double sampled_seconds = 0;
};

inline std::ostream &operator<<(std::ostream &out, AdaptiveReport const &r)
{
  std::ostringstream s; // keeps the caller's stream flags
  s << std::fixed << std::setprecision(3);
  s << "hst::AdaptiveSession: " << (r.probing ? "probing, " : "") << "active "
    << to_string(r.active) << " after " << r.steps << " steps (";
  for (std::size_t a = 0; a < arm_count; ++a)
    s << (a ? ", " : "") << to_string(Arm(a)) << ' ' << r.arm_steps[a];
  s << ")\n  probing: " << r.probe_steps << " steps, " << 1e6 * r.probe_seconds << " us, "
    << 1e6 * r.probe_excess_seconds << " us beyond the chosen arms\n";
  if (r.sampled_steps > 0)
    s << "  sampled: " << r.sampled_steps << " settled steps, " << 1e6 * r.sampled_seconds
      << " us\n";
  for (auto const &d : r.decisions)
  {
    s << "  step " << d.step << ": " << to_string(d.chosen) << " (probed from step "
      << d.probe_start << ";";
    for (std::size_t a = 0; a < arm_count; ++a)
    {
      s << ' ' << to_string(Arm(a)) << ' ';
      if (std::isnan(d.us_per_step[a]))
        s << '-';
      else
        s << d.us_per_step[a] << " us/step x " << d.measured_steps[a] << " = "
          << d.ns_per_entry[a] << " ns/entry";
      if (!std::isnan(d.predicted_ns_per_entry[a]))
        s << " (predicted " << d.predicted_ns_per_entry[a] << " ns/entry)";
    }
    s << ") " << d.reason << '\n';
  }
  return out << s.str();
}

namespace detail
{

// Rethrows an arm's std::invalid_argument ("hst::XArm::apply_cols: ...")
// under `where`, naming the arm that checked.
[[noreturn]] inline void rethrow_under(char const *where, std::invalid_argument const &e)
{
  std::string const what = e.what();
  auto const colon = what.find(": ");
  if (colon == std::string::npos)
    throw_invalid(where, ": ", what);
  throw_invalid(where, what.substr(colon), " (checked by ", what.substr(0, colon), ")");
}

inline AdaptiveOptions const &check_adaptive_options(AdaptiveOptions const &o, int width)
{
  char const *where = "hst::Operator::adaptive: argument ";
  if (width <= 0)
    throw_invalid(where, "'B' must be positive, got ", width);
  if (o.arms.empty())
    throw_invalid(where, "'options.arms' must name at least one arm, got none");
  for (std::size_t i = 0; i < o.arms.size(); ++i)
  {
    auto const a = static_cast<int>(o.arms[i]);
    if (a < 0 || a >= int(arm_count))
      throw_invalid(where, "'options.arms' holds ", a, " at position ", i,
                    ", which is not an hst::Arm");
    for (std::size_t j = 0; j < i; ++j)
      if (o.arms[j] == o.arms[i])
        throw_invalid(where, "'options.arms' holds ", to_string(o.arms[i]),
                      " twice, at positions ", j, " and ", i);
  }
  if (o.warmup_steps < 0)
    throw_invalid(where, "'options.warmup_steps' must be >= 0, got ", o.warmup_steps);
  if (o.scheduled_extra_warmup < 0)
    throw_invalid(where, "'options.scheduled_extra_warmup' must be >= 0, got ",
                  o.scheduled_extra_warmup);
  if (o.scheduled_rise_warmup < 0)
    throw_invalid(where, "'options.scheduled_rise_warmup' must be >= 0, got ",
                  o.scheduled_rise_warmup);
  if (o.scheduled_settle_steps < 0)
    throw_invalid(where, "'options.scheduled_settle_steps' must be >= 0, got ",
                  o.scheduled_settle_steps);
  if (o.scheduled_confirm_steps < 0)
    throw_invalid(where, "'options.scheduled_confirm_steps' must be >= 0, got ",
                  o.scheduled_confirm_steps);
  if (!(o.scheduled_confirm_ratio >= 1))
    throw_invalid(where, "'options.scheduled_confirm_ratio' must be >= 1, got ",
                  o.scheduled_confirm_ratio);
  if (o.measure_steps < 1)
    throw_invalid(where, "'options.measure_steps' must be >= 1, got ", o.measure_steps);
  if (!(o.cut_ratio >= 1))
    throw_invalid(where, "'options.cut_ratio' must be >= 1 (infinity: cut none), got ",
                  o.cut_ratio);
  if (!(o.switch_margin >= 0 && o.switch_margin < 1))
    throw_invalid(where, "'options.switch_margin' must lie in [0, 1), got ",
                  o.switch_margin);
  if (o.window_steps < 1)
    throw_invalid(where, "'options.window_steps' must be >= 1, got ", o.window_steps);
  if (o.shift_windows < 1)
    throw_invalid(where, "'options.shift_windows' must be >= 1, got ", o.shift_windows);
  if (!(o.shift_ratio >= 1 && std::isfinite(o.shift_ratio)))
    throw_invalid(where, "'options.shift_ratio' must be finite and >= 1, got ",
                  o.shift_ratio);
  if (!(o.shift_floor >= 0 && std::isfinite(o.shift_floor)))
    throw_invalid(where, "'options.shift_floor' must be finite and >= 0, got ",
                  o.shift_floor);
  if (o.sample_period < 0)
    throw_invalid(where,
                  "'options.sample_period' must be >= 0 (0: no step-time samples), got ",
                  o.sample_period);
  if (!(o.time_shift_ratio > 1 && std::isfinite(o.time_shift_ratio)))
    throw_invalid(where, "'options.time_shift_ratio' must be finite and > 1, got ",
                  o.time_shift_ratio);
  if (o.recheck_period < 0)
    throw_invalid(where, "'options.recheck_period' must be >= 0, got ", o.recheck_period);
  if (o.recheck_max_period < o.recheck_period)
    throw_invalid(where, "'options.recheck_max_period' must be >= recheck_period (",
                  o.recheck_period, "), got ", o.recheck_max_period);
  if (o.session.retire_after <= 0)
    throw_invalid(where, "'options.session.retire_after' must be positive, got ",
                  o.session.retire_after);
  if (o.session.strict)
    throw_invalid(where, "'options.session.strict' must be false (a strict schedule "
                         "rejects steps the other arms accept), got true");
  if (!(o.defer_jump_share > 0))
    throw_invalid(where,
                  "'options.defer_jump_share' must be > 0 (infinity: no set jumps), got ",
                  o.defer_jump_share);
  if (!(o.model_margin >= 1))
    throw_invalid(where, "'options.model_margin' must be >= 1, got ", o.model_margin);
  if (auto const bad = o.model ? o.model->first_invalid() : std::nullopt)
    throw_invalid(where, "'options.model' has a negative or non-finite constant ",
                  bad->second, " for arm ", to_string(bad->first));
  if (!o.clock)
    throw_invalid(where, "'options.clock' must be callable, got an empty function");
  return o;
}

} // namespace detail

/// Chooses among the scheduled, exact-set and scatter arms on the caller's
/// own steps (see the top of this file), with the arms' `apply_cols`. Each
/// arm is made when it first runs (its first probe step, before the clock is
/// read), the scheduled one compiled then for the expected columns: making
/// the session costs O(expected columns), nothing of the operator's size
/// (issue 14; the arms' per-column scratch is the operator's, Scratch.hpp).
template <class Scalar, class Ordinal, class MemorySpace>
class AdaptiveSession
{
public:
  using memory_space = MemorySpace;
  using value_type = Scalar;
  using ordinal_type = Ordinal;
  using data_type = detail::OperatorData<Scalar, Ordinal, MemorySpace>;

  static constexpr char const *name = "hst::AdaptiveSession::apply_cols";

  /// Made by Operator::adaptive; throws std::invalid_argument on bad options.
  template <class ExecutionSpace>
  AdaptiveSession(ExecutionSpace const &space, std::shared_ptr<data_type const> op,
                  std::vector<Ordinal> const &expected_cols, int width,
                  AdaptiveOptions const &options)
      : options_(detail::check_adaptive_options(options, width))
      , op_(std::move(op))
      , width_(width)
      , expected_cols_(expected_cols)
  {
    if (options_.model)
      model_.emplace(*options_.model);
    (void)space; // the arms are made, on the caller's instance, when they first run
    for (std::size_t i = 0; i < expected_cols_.size(); ++i)
      if (expected_cols_[i] < 0 || expected_cols_[i] >= op_->n_cols)
        detail::throw_invalid("hst::Operator::adaptive: argument 'expected_cols' holds "
                              "column id ",
                              expected_cols_[i], " at position ", i, ", outside [0, ",
                              op_->n_cols, ")");
    // Room for the first decisions, so that deciding does not allocate.
    report_.decisions.reserve(4);
    whys_.reserve(4);
    start_probe(Trigger::initial);
  }

  AdaptiveSession(AdaptiveSession &&) = default;
  AdaptiveSession &operator=(AdaptiveSession &&) = default;
  AdaptiveSession(AdaptiveSession const &) = delete;
  AdaptiveSession &operator=(AdaptiveSession const &) = delete;

  int width() const { return width_; }
  Ordinal num_rows() const { return op_->n_rows; }
  Ordinal num_cols() const { return op_->n_cols; }

  /// y += A[:, cols] * dx, in place, on `space`, by exactly one arm (see
  /// running()). Same contract as the arms' apply_cols; throws
  /// std::invalid_argument on bad input before anything is written, and the
  /// session stays as it was.
  template <class ExecutionSpace, class Cols, class Dx, class Y>
  void apply_cols(ExecutionSpace const &space, Cols const &cols, Dx const &dx, Y const &y)
  {
    detail::check_apply_types<ExecutionSpace, MemorySpace, Scalar, Ordinal, Cols, Dx,
                              Y>();
    if (report_.probing)
      probe_step(space, cols, dx, y);
    else
      settled_step(space, cols, dx, y);
  }

  /// Same, on a default instance of `MemorySpace::execution_space` (Kokkos'
  /// space for that memory: a host space for host-pinned memory, so order it
  /// after steps run there on a device instance).
  template <class Cols, class Dx, class Y>
  void apply_cols(Cols const &cols, Dx const &dx, Y const &y)
  {
    apply_cols(default_space_, cols, dx, y);
  }

  /// The arm of the latest decision; before the first, the probed arm.
  Arm active() const { return report_.active; }
  /// The arm that runs the next step (while inside apply_cols: this step).
  Arm running() const { return report_.probing ? probed() : report_.active; }
  bool probing() const { return report_.probing; }

  /// Starts a probe at the next step; does nothing while a probe is under way.
  void reprobe()
  {
    if (!report_.probing)
      start_probe(Trigger::requested);
  }

  /// Decisions' reasons are written here, from what each decision recorded:
  /// formatting them when deciding cost 15-80 us per decision (measured),
  /// several steps of a small operator. Like the session, not for
  /// concurrent use.
  AdaptiveReport const &report() const
  {
    for (std::size_t i = reasons_written_; i < report_.decisions.size(); ++i)
      report_.decisions[i].reason = reason(whys_[i]);
    reasons_written_ = report_.decisions.size();
    return report_;
  }
  AdaptiveOptions const &options() const { return options_; }

  /// The held arms, for their statistics: null until the arm first ran.
  ScheduledArm<Scalar, Ordinal, MemorySpace> const *scheduled() const
  {
    return scheduled_ ? &*scheduled_ : nullptr;
  }
  ExactSetArm<Scalar, Ordinal, MemorySpace> const *exact_set() const
  {
    return exact_set_ ? &*exact_set_ : nullptr;
  }
  ScatterArm<Scalar, Ordinal, MemorySpace> const *scatter() const
  {
    return scatter_ ? &*scatter_ : nullptr;
  }

private:
  enum class Trigger
  {
    initial,
    requested,
    periodic,
    shift,      // compile rate
    time_shift, // step time
    predicted,  // the cost model's ranking (AdaptiveOptions::model)
    moved,      // the set moved after a probe that deferred the scheduled arm
  };

  // Makes `arm` if it was never made. The scheduled arm is compiled here for
  // the expected columns (on `space`); the others hold nothing yet.
  template <class ExecutionSpace>
  void make(Arm arm, ExecutionSpace const &space)
  {
    switch (arm)
    {
    case Arm::scheduled:
      if (!scheduled_)
        scheduled_.emplace(space, op_, expected_cols_, width_, options_.session);
      break;
    case Arm::exact_set:
      if (!exact_set_)
        exact_set_.emplace(op_, width_);
      break;
    case Arm::scatter:
      if (!scatter_)
        scatter_.emplace(op_, width_);
      break;
    }
  }

  // One step by `arm`; returns the step's column ids readable on the host
  // (valid until that arm's next step).
  template <class ExecutionSpace, class Cols, class Dx, class Y>
  Ordinal const *dispatch(Arm arm, ExecutionSpace const &space, Cols const &cols,
                          Dx const &dx, Y const &y)
  {
    Ordinal const *ids = nullptr;
    make(arm, space); // a settled arm was probed, so made: this costs a test
    try
    {
      switch (arm)
      {
      case Arm::scheduled:
        ids = scheduled_->apply_returning_ids(space, cols, dx, y);
        break;
      case Arm::exact_set:
        ids = exact_set_->apply_returning_ids(space, cols, dx, y);
        break;
      case Arm::scatter:
        ids = scatter_->apply_returning_ids(space, cols, dx, y);
        break;
      }
    }
    catch (std::invalid_argument const &e)
    {
      detail::rethrow_under(name, e);
    }
    ++report_.steps;
    ++report_.arm_steps[std::size_t(arm)];
    return ids;
  }

  // A timed step (probe steps and sampled settled steps only): fence the
  // caller's instance (its earlier work is not this step's), read the clock,
  // apply, fence (the step's kernels end before the clock is read), read it.
  // Also weighs the step by its work and counts its compile events (after
  // the clock is read).
  struct Timed
  {
    Ordinal const *ids = nullptr; // the step's column ids, readable on the host
    double seconds = 0;
    double entries = 1;        // the step's work: see entries()
    std::int64_t compiles = 0; // compile events of the step: see events()
  };
  template <class ExecutionSpace, class Cols, class Dx, class Y>
  Timed timed_dispatch(Arm arm, ExecutionSpace const &space, Cols const &cols,
                       Dx const &dx, Y const &y)
  {
    // An arm's making is not its step: made before the clock (and before its
    // compile events are read, so that the expected set's tiles are not
    // counted as the step's), as when the session made all three up front.
    make(arm, space);
    std::int64_t const events_before = events(arm);
    kokkos_ext::fence(space, "hst::timed_step");
    double const start = options_.clock();
    Ordinal const *ids = dispatch(arm, space, cols, dx, y);
    kokkos_ext::fence(space, "hst::timed_step");
    double const seconds = options_.clock() - start;
    return {ids, seconds, entries(ids, cols.extent(0)), events(arm) - events_before};
  }

  // A step's work: the stored entries of A[:, S] (at least 1, so that an
  // empty set still counts), from the operator's host CSC. Every arm's step
  // reads and adds about these entries, and on operators whose columns
  // differ widely in length (hubs) the entries of consecutive sets differ
  // several-fold; arms timed on different steps are therefore compared by
  // time per entry, not per step.
  double entries(Ordinal const *ids, std::size_t k) const
  {
    auto const &col_ptr = op_->csc_host.col_ptr;
    std::size_t n = 0;
    for (std::size_t i = 0; i < k; ++i)
      n += col_ptr(std::size_t(ids[i]) + 1) - col_ptr(std::size_t(ids[i]));
    return double(std::max<std::size_t>(n, 1));
  }

  // Compile events so far of an arm: the signal of the compile-rate detector.
  std::int64_t events(Arm arm) const
  {
    switch (arm)
    {
    case Arm::scheduled:
      return scheduled_ ? scheduled_->stats().tiles_compiled : 0;
    case Arm::exact_set:
      return exact_set_ ? exact_set_->compiles() : 0;
    case Arm::scatter:
      break;
    }
    return 0;
  }

  // Steps so far on which an arm saw a set other than on its previous step
  // (scheduled: re-plans, exact set: compiles); the scatter arm keeps no set.
  std::int64_t set_changes(Arm arm) const
  {
    switch (arm)
    {
    case Arm::scheduled:
      return scheduled_ ? scheduled_->stats().replans : 0;
    case Arm::exact_set:
      return exact_set_ ? exact_set_->compiles() : 0;
    case Arm::scatter:
      break;
    }
    return 0;
  }

  template <class ExecutionSpace, class Cols, class Dx, class Y>
  void settled_step(ExecutionSpace const &space, Cols const &cols, Dx const &dx,
                    Y const &y)
  {
    bool const sampled = report_.steps == sample_at_;
    double per_entry = 0, seconds = 0;
    bool compiled = false, moved = false;
    if (sampled)
    {
      Timed const t = timed_dispatch(report_.active, space, cols, dx, y);
      moved = watch_motion_ && !same_ids(t.ids, cols.extent(0), still_ids_);
      per_entry = t.seconds / t.entries;
      seconds = t.seconds;
      compiled = t.compiles > 0;
      ++report_.sampled_steps;
      report_.sampled_seconds += t.seconds;
      if (model_)
        count_step(t.ids, cols.extent(0), t.entries, report_.steps - 1);
    }
    else if (model_ && report_.steps + 1 == sample_at_)
    {
      // the step before a sample keeps its ids: the sample's churn
      Ordinal const *ids = dispatch(report_.active, space, cols, dx, y);
      keep_ids(ids, cols.extent(0), report_.steps - 1);
    }
    else
      dispatch(report_.active, space, cols, dx, y);
    std::int64_t const s = report_.steps;
    if (s == window_begin_)
      window_events_ = events(report_.active);
    else if (s == window_end_)
      end_window();
    if (moved)
      start_probe(Trigger::moved);
    if (sampled && !report_.probing)
      end_sample(per_entry, compiled);
    if (sampled && model_ && !report_.probing)
      settled_prediction(seconds);
    if (s == recheck_at_ && !report_.probing)
      start_probe(Trigger::periodic);
  }

  void end_sample(double per_entry, bool compiled)
  {
    // Samples fall on a grid of sample_period steps; a shifted sample is
    // confirmed on the next step, not a period later (outside the grid).
    while (periodic_sample_at_ < report_.steps)
      periodic_sample_at_ += options_.sample_period;
    sample_at_ = periodic_sample_at_;
    // A step that compiled is not compared with a reference of steps that
    // did not: compiles are the compile-rate detector's signal.
    if (compiled && reference_quiet_)
      return;
    if (!(per_entry > options_.time_shift_ratio * reference_))
    {
      shifted_samples_ = 0;
      shifted_sample_cost_ = 0;
    }
    else
    {
      shifted_sample_cost_ += per_entry;
      sample_at_ = report_.steps;
      if (++shifted_samples_ >= options_.shift_windows)
        start_probe(Trigger::time_shift);
    }
  }

  void end_window()
  {
    std::int64_t const now = events(report_.active);
    double const rate = double(now - window_events_) / options_.window_steps;
    window_events_ = now;
    window_end_ += options_.window_steps;
    if (!(rate - probe_rate_ > options_.shift_floor &&
          rate > options_.shift_ratio * probe_rate_))
      shifted_windows_ = 0;
    else if (++shifted_windows_ >= options_.shift_windows)
    {
      window_rate_ = rate;
      start_probe(Trigger::shift);
    }
  }

  enum class Outcome : unsigned char
  {
    idle,     // not probed (not in options.arms)
    running,  // still to measure
    complete, // ran its measure_steps measured steps: may be chosen
    cut,      // round-1 step above cut_ratio x the best round-1 step
    stopped,  // round-2 mean above cut_ratio x the best complete mean
    skipped,  // round 1: predicted above model_margin x the best measured cost
    deferred, // round 1: the scheduled arm, on a set seen not to move
    jumping,  // round 1: the scheduled arm, on a set seen to jump
  };

  Arm probed() const { return order_[order_pos_]; }

  template <class ExecutionSpace, class Cols, class Dx, class Y>
  void probe_step(ExecutionSpace const &space, Cols const &cols, Dx const &dx, Y const &y)
  {
    Arm const arm = probed();
    std::size_t const a = std::size_t(arm);
    std::int64_t const changes_before = set_changes(arm);
    // The exact-set arm's compiles on its probe steps are timed apart from
    // its step (see "Charge"); once a compile may be charged, it compiles on
    // each of them, an unchanged set too (a compile asked for:
    // `recompiled`).
    bool const exact_set = arm == Arm::exact_set;
    std::int64_t recompiles_before = 0;
    if (exact_set)
    {
      make(arm, space);
      recompiles_before = exact_set_->recompiles();
      exact_set_->time_next_compile(options_.clock, compile_may_be_charged());
    }
    auto const [ids, seconds, work, compiled] = timed_dispatch(arm, space, cols, dx, y);
    bool const recompiled = exact_set && exact_set_->recompiles() > recompiles_before;
    double const compile_seconds = exact_set ? exact_set_->last_compile_seconds_ : 0;
    if (exact_set)
      report_.probe_compiles += compiled > 0 || recompiled;
    std::int64_t const moved_before = moved_pairs_;
    count_step(ids, cols.extent(0), work, report_.steps - 1);
    if (!exact_set && moved_pairs_ > moved_before)
      price_compile(space, ids, cols.extent(0), work);
    bool const first_of_block = block_warmup_ == 0 && block_measured_ == 0;
    ++report_.probe_steps;
    report_.probe_seconds += seconds;
    probe_seconds_ += seconds;
    probe_entries_ += work;

    bool const new_set = set_changes(arm) > changes_before;
    if (first_of_block)
      // The first block of an arm idle since the last decision (or made and
      // never run): its data is cold in cache. Or a block on a set other
      // than the one the arm last ran on: it catches up in compiled state.
      // The scatter arm keeps no set; it counts once the set is seen moving.
      // The scheduled arm's confirmation follows other arms' steps.
      catch_up_ =
          (round_ == 1 && (report_.decisions.empty() || arm != why_.trigger_arm)) ||
          round_ == confirm_round || (arm == Arm::scatter ? moving_ : new_set);
    else if (new_set)
      moving_ = true; // a new set on a step right after the arm's own
    // The scheduled arm's state (piece lists, work list, compiled tiles) is
    // what the other arms' steps push out of cache; on a moving set it
    // warms up longer (AdaptiveOptions::scheduled_extra_warmup, and
    // scheduled_rise_warmup in a re-probe that a rising step time began).
    int warmup = options_.warmup_steps;
    if (arm == Arm::scheduled && moving_)
      warmup +=
          options_.scheduled_extra_warmup +
          (why_.trigger == Trigger::time_shift ? options_.scheduled_rise_warmup : 0);
    // In a re-probe, a scheduled arm that catches up on a moving set warms
    // up while its steps still fall (AdaptiveOptions::scheduled_settle_steps).
    double const step_cost = seconds / work, block_last_cost = block_last_cost_;
    block_last_cost_ = step_cost;
    int const settle = arm == Arm::scheduled && moving_ && !report_.decisions.empty()
                           ? options_.scheduled_settle_steps
                           : 0;
    bool const falling = block_measured_ == 0 && block_warmup_ < warmup + settle &&
                         step_cost < detail::settled_fall_ratio * block_last_cost;
    if (catch_up_ && (block_warmup_ < warmup || falling))
    {
      ++block_warmup_;
      ++warmup_[a];
      return;
    }
    ++block_measured_;
    ++measured_[a];
    if (model_ && counters_known_)
    {
      StepCounters c = counters_; // a compile asked for is a compile
      c.set_changed = c.set_changed || recompiled;
      model_->observe(arm, c, seconds);
    }
    // The step as the arm runs it (a compile asked for is not its own) ...
    sum_[a] += recompiled ? seconds - compile_seconds : seconds;
    entries_[a] += work;
    events_[a] += compiled;
    // ... and its parts: the step without a compile, and the compile.
    if (compiled == 0 || exact_set)
    {
      quiet_sum_[a] += seconds - compile_seconds;
      quiet_entries_[a] += work;
    }
    if (exact_set && (compiled > 0 || recompiled))
    {
      compile_sum_ += compile_seconds;
      compile_entries_ += work;
    }
    int const steps_needed = round_ == confirm_round ? options_.scheduled_confirm_steps
                                                     : options_.measure_steps;
    if (measured_[a] == steps_needed)
    {
      outcome_[a] = Outcome::complete;
      best_complete_ = std::min(best_complete_, cost(a));
    }
    else if (round_ >= 2 && cost(a) > cut_ratio_for(a) * best_complete_)
    {
      outcome_[a] = Outcome::stopped;
      stop_reference_[a] = best_complete_;
    }
    else if (round_ >= 2)
      return; // the block goes on
    next_block();
  }

  // Whether the exact-set arm's compiles may be charged in this probe (see
  // compile_charge()): the probe saw the set move, or the arm's own compile
  // rate began it. Until then a compile of an unchanged set is not asked
  // for: on a still set it would be priced and never charged.
  bool compile_may_be_charged() const
  {
    return moved_pairs_ > 0 || exact_set_compile_rate_began();
  }

  // Whether this probe is a re-probe that the exact-set arm's own compile
  // rate began (the compile-rate detector, with the exact-set arm active).
  bool exact_set_compile_rate_began() const
  {
    return why_.trigger == Trigger::shift && why_.trigger_arm == Arm::exact_set;
  }

  // The set moved on this step of another arm: if the exact-set arm's
  // measured steps came before and compiled nothing (and it may still be
  // chosen), its compile may now be charged and has no price. The session
  // compiles it for this step's set, timed, after the step's clock (its
  // cost is the probe's).
  template <class ExecutionSpace>
  void price_compile(ExecutionSpace const &space, Ordinal const *ids, std::size_t k,
                     double work)
  {
    std::size_t const e = std::size_t(Arm::exact_set);
    bool const may_be_chosen =
        outcome_[e] == Outcome::complete || outcome_[e] == Outcome::running;
    if (!exact_set_ || measured_[e] == 0 || compile_entries_ > 0 || !may_be_chosen)
      return;
    double const seconds =
        exact_set_->timed_compile_between_steps(space, ids, k, options_.clock);
    compile_sum_ += seconds;
    compile_entries_ += work;
    report_.probe_seconds += seconds;
    probe_seconds_ += seconds;
    ++report_.probe_compiles;
  }

  double mean(std::size_t a) const { return sum_[a] / measured_[a]; }
  // The ratio over the best cost that cuts or stops arm a.
  double cut_ratio_for(std::size_t a) const
  {
    return !report_.decisions.empty() && Arm(a) == report_.active
               ? detail::active_arm_cut_ratio(options_.cut_ratio, options_.switch_margin)
               : options_.cut_ratio;
  }
  // What the arms are compared by: seconds per entry over the measured
  // steps; for the exact-set arm, its steps without their compiles plus its
  // compiles (each timed apart) at compile_rate().
  double cost(std::size_t a) const
  {
    if (Arm(a) != Arm::exact_set || !(compile_entries_ > 0))
      return sum_[a] / entries_[a];
    return quiet_sum_[a] / quiet_entries_[a] +
           compile_rate() * compile_sum_ / compile_entries_;
  }

  // The share of its steps on which the exact-set arm's compile is charged:
  // the share of its measured steps whose set changed, or compile_charge()
  // where that is higher.
  double compile_rate() const
  {
    std::size_t const a = std::size_t(Arm::exact_set);
    double const own = measured_[a] > 0 ? double(events_[a]) / measured_[a] : 0;
    return std::max(own, compile_charge());
  }

  // The rate at which the exact-set arm's compiles are charged beyond its
  // measured steps' own (see "Charge" at the top of this file): the share
  // of the probe's pairs of steps on which the set changed or, in a
  // re-probe its own compile rate started, that window's rate if higher.
  // 0 when no charge applies: its measured steps compiled as often, or no
  // compile of it was timed.
  double compile_charge() const
  {
    std::size_t const a = std::size_t(Arm::exact_set);
    if (pairs_ == 0 || measured_[a] == 0 || !(compile_entries_ > 0))
      return 0;
    double rate = double(moved_pairs_) / pairs_;
    if (exact_set_compile_rate_began())
      rate = std::max(rate, std::min(why_.shift_rate, 1.0));
    if (!(rate > double(events_[a]) / measured_[a]))
      return 0;
    return rate;
  }

  // Counts step `step` (a probe step, or a sampled step under the model)
  // against the previous step, when that step's ids were kept (probe steps,
  // sampled steps and, under the model, the step before a sample keep
  // theirs): whether the set changed, for the probe's view of the set's
  // motion (pairs_, moved_pairs_) and, under the model, its counters: the
  // step's entries, whether the set changed and the entries of the columns
  // that entered or left. O(k) host work, on those steps only.
  void count_step(Ordinal const *ids, std::size_t k, double work, std::int64_t step)
  {
    bool const known = last_ids_step_ >= 0 && last_ids_step_ == step - 1;
    bool const changed = known && !same_ids(ids, k, last_ids_);
    if (known && report_.probing)
    {
      ++pairs_;
      moved_pairs_ += changed;
      if (changed && jump_pending())
        opened_share_ += double(detail::opened_tiles(
                             *op_->scratch, last_ids_, ids, k,
                             [&](Ordinal c) { return op_->column_tile_of(c); })) /
                         double(std::max<std::size_t>(k, 1));
    }
    if (model_)
    {
      counters_.entries = work;
      counters_known_ = known;
      counters_.set_changed = changed;
      counters_.changed_entries = 0;
      if (changed)
      {
        auto const &col_ptr = op_->csc_host.col_ptr;
        counters_.changed_entries =
            detail::set_change_entries(*op_->scratch, last_ids_, {{ids, k}},
                                       [&](Ordinal c) {
                                         return double(col_ptr(std::size_t(c) + 1) -
                                                       col_ptr(std::size_t(c)));
                                       })
                .second;
      }
      if (known)
        churn_.add(counters_);
    }
    keep_ids(ids, k, step);
  }

  // The same ids in the same order: what the arms take for the same set.
  static bool same_ids(Ordinal const *ids, std::size_t k,
                       std::vector<Ordinal> const &kept)
  {
    return k == kept.size() && std::equal(ids, ids + k, kept.begin());
  }

  void keep_ids(Ordinal const *ids, std::size_t k, std::int64_t step)
  {
    last_ids_.assign(ids, ids + k);
    last_ids_step_ = step;
  }

  // A sampled settled step under the model: refine the active arm's
  // prediction with the sample and compare the predicted ranking. A
  // ranking that puts the active arm above model_margin times another arm
  // is confirmed on the next steps (each sampled), and
  // shift_windows such samples in a row start a re-probe.
  void settled_prediction(double seconds)
  {
    if (!counters_known_)
      return;
    model_->observe(report_.active, counters_, seconds);
    double const active = predicted_cost(report_.active);
    Arm best = report_.active;
    double best_cost = active;
    for (Arm arm : options_.arms)
      if (predicted_cost(arm) < best_cost)
      {
        best = arm;
        best_cost = predicted_cost(arm);
      }
    if (!(options_.model_margin * best_cost < active))
    {
      predicted_flips_ = 0;
      return;
    }
    sample_at_ = report_.steps; // confirm on the next step
    if (++predicted_flips_ < options_.shift_windows)
      return;
    predicted_best_ = best;
    predicted_best_cost_ = best_cost;
    predicted_active_cost_ = active;
    start_probe(Trigger::predicted);
  }

  // An arm's predicted cost as the key of the round-1 order: a prediction
  // that is not positive and finite (an uncalibrated arm's 0) goes last, as
  // in the distributed session.
  double sort_key(Arm arm) const
  {
    double const p = predicted_cost(arm);
    return p > 0 && std::isfinite(p) ? p : std::numeric_limits<double>::infinity();
  }

  // Predicted seconds per entry of `arm` on steps of the latest step's
  // entries, at the churn counted so far.
  double predicted_cost(Arm arm) const
  {
    return model_->predict_at(arm, counters_.entries, churn_) /
           std::max(counters_.entries, 1.0);
  }

  // Whether the probe still counts the column tiles that entering columns
  // open (AdaptiveOptions::defer_jump_share): until the scheduled arm's
  // round-1 turn (its own first step is not counted), if it may be deferred.
  bool jump_pending() const
  {
    std::size_t const h = std::size_t(Arm::scheduled);
    return options_.defer_jump_share <= 1 && deferrable(Arm::scheduled) && round_ == 1 &&
           outcome_[h] == Outcome::running && probed() != Arm::scheduled &&
           warmup_[h] == 0 && measured_[h] == 0;
  }

  // The scheduled arm is deferred on a set that does not move (see
  // AdaptiveOptions::defer_scheduled), unless it is the arm whose re-probe
  // this is: an incumbent is compared, not set aside.
  // Never in a re-probe that a moved set began: the move is what the
  // deferral waited for, whether or not the set moves again in the probe.
  bool deferrable(Arm arm) const
  {
    return options_.defer_scheduled && arm == Arm::scheduled &&
           why_.trigger != Trigger::moved &&
           (report_.decisions.empty() || why_.trigger_arm != arm);
  }

  // Round 1, before the block of order_[order_pos_]: passes over the arms
  // not to run. While the probe has not seen the set move, the scheduled arm
  // goes behind the other arms of the round (once), and when its turn comes
  // again it is deferred if the probe's steps so far show the same set. With
  // a model, an arm whose predicted cost exceeds model_margin times the
  // lowest cost measured so far in this probe is skipped, and the arms still
  // to run go in order of their predicted cost (unless the deferral still
  // waits to see the set move: then it orders them), so that the arm
  // predicted cheapest is measured before a dearer one is weighed against it.
  void pass_over_arms()
  {
    while (order_pos_ < order_size_)
    {
      bool const deferral_pending = deferrable(Arm::scheduled) && moved_pairs_ == 0;
      if (model_ && counters_known_ && order_pos_ > 0 && !deferral_pending)
        // an insertion sort, ties in the given order (no buffer allocated)
        for (std::size_t i = order_pos_ + 1; i < order_size_; ++i)
          for (std::size_t j = i;
               j > order_pos_ && sort_key(order_[j]) < sort_key(order_[j - 1]); --j)
            std::swap(order_[j], order_[j - 1]);
      Arm const arm = order_[order_pos_];
      std::size_t const a = std::size_t(arm);
      if (deferrable(arm) && moved_pairs_ == 0)
      {
        if (!requeued_ && order_pos_ + 1 < order_size_)
        {
          std::rotate(order_.begin() + std::ptrdiff_t(order_pos_),
                      order_.begin() + std::ptrdiff_t(order_pos_) + 1,
                      order_.begin() + std::ptrdiff_t(order_size_));
          requeued_ = true;
          continue;
        }
        if (pairs_ > 0)
        {
          outcome_[a] = Outcome::deferred;
          why_.still_steps = pairs_ + 1;
          ++order_pos_;
          continue;
        }
      }
      if (deferrable(arm) && pairs_ > 0 &&
          opened_share_ / pairs_ >= options_.defer_jump_share)
      {
        outcome_[a] = Outcome::jumping;
        why_.jump_share = opened_share_ / pairs_;
        why_.jump_pairs = pairs_;
        ++order_pos_;
        continue;
      }
      if (!model_ || !counters_known_ || order_pos_ == 0)
        return;
      double best = std::numeric_limits<double>::infinity();
      for (std::size_t i = 0; i < order_pos_; ++i)
        if (measured_[std::size_t(order_[i])] > 0)
          best = std::min(best, cost(std::size_t(order_[i])));
      double const predicted = predicted_cost(arm);
      if (!(best > 0 && predicted > options_.model_margin * best))
        return; // a cost a coarse clock read as 0 bounds nothing
      outcome_[a] = Outcome::skipped;
      why_.skip_prediction[a] = predicted;
      why_.skip_bound[a] = best;
      ++order_pos_;
    }
  }

  // A block begins: no warm-up or measured step yet, no step to compare with.
  void begin_block()
  {
    block_warmup_ = 0;
    block_measured_ = 0;
    block_last_cost_ = std::numeric_limits<double>::quiet_NaN();
  }

  void next_block()
  {
    begin_block();
    ++order_pos_;
    if (round_ == 1)
      pass_over_arms();
    if (order_pos_ < order_size_)
    {
      if (report_.decisions.empty())
        report_.active = probed();
      return;
    }
    if (round_ == 1)
    {
      // Each arm ran one measured step; cut the clearly slower ones, order
      // the rest by that step.
      for (std::size_t i = 0; i < order_size_; ++i)
        if (measured_[std::size_t(order_[i])] > 0)
          round1_best_ = std::min(round1_best_, cost(std::size_t(order_[i])));
      std::size_t n = 0;
      for (std::size_t i = 0; i < order_size_; ++i)
      {
        std::size_t const a = std::size_t(order_[i]);
        if (outcome_[a] != Outcome::running)
          continue;
        if (cost(a) > cut_ratio_for(a) * round1_best_)
          outcome_[a] = Outcome::cut;
        else
          order_[n++] = order_[i];
      }
      // Fastest first, ties in probe order: an insertion sort of at most
      // arm_count entries (std::stable_sort would allocate a buffer).
      for (std::size_t i = 1; i < n; ++i)
        for (std::size_t j = i;
             j > 0 && cost(std::size_t(order_[j])) < cost(std::size_t(order_[j - 1]));
             --j)
          std::swap(order_[j], order_[j - 1]);
      round_ = 2;
      order_size_ = n;
      order_pos_ = 0;
      if (n > 0)
      {
        if (report_.decisions.empty())
          report_.active = probed();
        return;
      }
    }
    decide();
  }

  // Forgets arm a's measured steps: their count, time, work and events.
  void clear_measured(std::size_t a)
  {
    measured_[a] = 0;
    sum_[a] = 0;
    entries_[a] = 0;
    events_[a] = 0;
    quiet_sum_[a] = 0;
    quiet_entries_[a] = 0;
  }

  void start_probe(Trigger trigger)
  {
    why_ = Why{};
    why_.trigger = trigger;
    why_.trigger_arm = report_.active;
    why_.shift_rate = window_rate_;
    why_.probe_rate = probe_rate_;
    why_.reference = reference_;
    why_.samples = shifted_samples_;
    why_.predicted_best = predicted_best_;
    why_.predicted_best_cost = predicted_best_cost_;
    why_.predicted_active_cost = predicted_active_cost_;
    predicted_flips_ = 0;
    why_.sample_mean = shifted_samples_ > 0 ? shifted_sample_cost_ / shifted_samples_ : 0;
    report_.probing = true;
    probe_start_ = report_.steps;
    counters_known_ = false;
    round_ = 1;
    // A re-probe for a moved set weighs the deferred scheduled arm against
    // the incumbent only: the other arms lost to the incumbent at the last
    // decision, and a rise of its own cost is what the detectors watch.
    order_size_ = 0;
    for (Arm arm : options_.arms)
      if (trigger != Trigger::moved || arm == report_.active || arm == Arm::scheduled)
        order_[order_size_++] = arm;
    order_pos_ = 0;
    begin_block();
    moving_ = false;
    catch_up_ = false;
    pairs_ = 0;
    moved_pairs_ = 0;
    opened_share_ = 0;
    requeued_ = false;
    probe_seconds_ = 0;
    probe_entries_ = 0;
    outcome_.fill(Outcome::idle);
    for (std::size_t i = 0; i < order_size_; ++i)
      outcome_[std::size_t(order_[i])] = Outcome::running;
    for (std::size_t a = 0; a < arm_count; ++a)
      clear_measured(a);
    warmup_.fill(0);
    compile_sum_ = 0;
    compile_entries_ = 0;
    stop_reference_.fill(0);
    round1_best_ = std::numeric_limits<double>::infinity();
    best_complete_ = std::numeric_limits<double>::infinity();
    pass_over_arms();
    if (report_.decisions.empty())
      report_.active = probed();
  }

  // What a decision's reason says, recorded when it is made.
  struct Why
  {
    Trigger trigger = Trigger::initial;
    Arm trigger_arm = Arm::scheduled;  // the active arm when the probe began
    double shift_rate = 0;             // shift: the window's compile rate
    double probe_rate = 0;             // shift: the rate in the arm's probe
    double reference = 0;              // time_shift: the arm's probe cost
    double sample_mean = 0;            // time_shift: mean cost of the shifted samples
    int samples = 0;                   // time_shift: shifted samples in a row
    Arm predicted_best = Arm::scatter; // predicted: the arm ranked first
    double predicted_best_cost = 0;    // predicted: its predicted cost
    double predicted_active_cost = 0;  // predicted: the active arm's
    std::array<Outcome, arm_count> outcome{};
    std::array<double, arm_count> cost{}; // seconds per entry of the measured steps
    std::array<int, arm_count> measured{};
    std::array<double, arm_count> stop_reference{};
    std::array<double, arm_count> cut_ratio{}; // cut, stopped: the ratio applied
    double round1_best = 0;
    std::array<double, arm_count> skip_prediction{}; // skipped: predicted cost
    std::array<double, arm_count> skip_bound{};      // skipped: best measured cost
    int still_steps = 0;             // deferred: probe steps in a row on the same set
    double jump_share = 0;           // jumping: column tiles opened per column and pair
    int jump_pairs = 0;              // jumping: over that many pairs of steps
    double compile_charge = 0;       // the exact-set arm's compiles charged at this rate
    bool charge_from_window = false; // the charge is the settled window's rate
    bool confirmed = false; // the scheduled arm and confirmed_against ran a confirmation
    std::array<double, 2> confirmed_from{}; // their first blocks' costs
    Arm confirmed_against = Arm::scatter;   // the arm about to be chosen
  };

  std::string reason(Why const &w) const
  {
    auto ns = [](double seconds_per_entry) {
      std::ostringstream u;
      u << std::fixed << std::setprecision(3) << 1e9 * seconds_per_entry << " ns/entry";
      return u.str();
    };
    std::ostringstream s;
    s << std::fixed << std::setprecision(2);
    switch (w.trigger)
    {
    case Trigger::initial:
      s << "initial probe";
      break;
    case Trigger::requested:
      s << "reprobe() requested";
      break;
    case Trigger::periodic:
      s << "periodic re-check";
      break;
    case Trigger::shift:
      s << to_string(w.trigger_arm) << " compile rate " << w.shift_rate
        << (w.trigger_arm == Arm::scheduled ? " tiles/step" : " compiles/step") << " vs "
        << w.probe_rate << " at probe";
      break;
    case Trigger::predicted:
      s << "predicted " << to_string(w.predicted_best) << ' ' << ns(w.predicted_best_cost)
        << " vs " << to_string(w.trigger_arm) << ' ' << ns(w.predicted_active_cost)
        << " (cost model, " << options_.shift_windows << " samples)";
      break;
    case Trigger::moved:
      s << "the set moved after a probe that deferred scheduled";
      break;
    case Trigger::time_shift:
      s << to_string(w.trigger_arm) << " step time " << ns(w.sample_mean) << " vs "
        << ns(w.reference) << " at probe (" << w.samples << " sample"
        << (w.samples == 1 ? "" : "s") << ')';
      break;
    }
    for (Arm arm : options_.arms)
    {
      std::size_t const a = std::size_t(arm);
      if (w.outcome[a] == Outcome::cut)
        s << "; " << to_string(arm) << " cut after round 1 (" << ns(w.cost[a]) << " > "
          << w.cut_ratio[a] << " x " << ns(w.round1_best) << ')';
      else if (w.outcome[a] == Outcome::skipped)
        s << "; " << to_string(arm) << " not probed (predicted "
          << ns(w.skip_prediction[a]) << " > " << options_.model_margin << " x "
          << ns(w.skip_bound[a]) << " measured)";
      else if (w.outcome[a] == Outcome::deferred)
        s << "; " << to_string(arm) << " deferred (the same set on " << w.still_steps
          << " steps)";
      else if (w.outcome[a] == Outcome::jumping)
        s << "; " << to_string(arm)
          << " deferred (the set jumps: entering columns opened " << w.jump_share
          << " column tiles per set column per step over " << w.jump_pairs << " pair"
          << (w.jump_pairs == 1 ? "" : "s")
          << " of steps, >= " << options_.defer_jump_share << ')';
      else if (w.outcome[a] == Outcome::stopped)
        s << "; " << to_string(arm) << " stopped after " << w.measured[a] << " of "
          << (w.confirmed && (arm == Arm::scheduled || arm == w.confirmed_against)
                  ? options_.scheduled_confirm_steps
                  : options_.measure_steps)
          << " steps (" << ns(w.cost[a]) << " > " << w.cut_ratio[a] << " x "
          << ns(w.stop_reference[a]) << ')';
    }
    if (w.confirmed)
      s << "; scheduled and " << to_string(w.confirmed_against) << " confirmed on "
        << options_.scheduled_confirm_steps << " more steps each (first blocks "
        << ns(w.confirmed_from[0]) << " <= " << options_.scheduled_confirm_ratio << " x "
        << ns(w.confirmed_from[1]) << ')';
    if (w.compile_charge > 0)
      s << "; exact_set charged a compile on " << w.compile_charge << " of its steps ("
        << (w.charge_from_window ? "its compile rate when settled"
                                 : "the set changed on that share of the probe's steps")
        << ')';
    return s.str();
  }

  // Starts the confirmation round (see "Probing" above) and returns true if
  // its conditions hold for the arm about to be chosen.
  bool confirm(Arm chosen)
  {
    std::size_t const s = std::size_t(Arm::scheduled), c = std::size_t(chosen);
    if (report_.decisions.empty() || round_ == confirm_round ||
        options_.scheduled_confirm_steps == 0 || chosen == Arm::scheduled ||
        outcome_[s] != Outcome::complete || !(moved_pairs_ > 0 || moving_) ||
        !(cost(s) <= options_.scheduled_confirm_ratio * cost(c)))
      return false;
    why_.confirmed = true;
    why_.confirmed_from = {cost(s), cost(c)};
    why_.confirmed_against = chosen;
    for (std::size_t a : {s, c})
    {
      warmup_[a] += measured_[a];
      clear_measured(a);
      outcome_[a] = Outcome::running;
    }
    round_ = confirm_round;
    order_[0] = Arm::scheduled;
    order_[1] = chosen;
    order_size_ = 2;
    order_pos_ = 0;
    best_complete_ = std::numeric_limits<double>::infinity();
    begin_block();
    return true;
  }

  void decide()
  {
    // The first arm of round 2 (or, with measure_steps = 1, every arm)
    // completed, so there is a best.
    Arm best = options_.arms[0];
    double best_cost = 0;
    bool found = false;
    for (Arm arm : options_.arms)
      if (outcome_[std::size_t(arm)] == Outcome::complete &&
          (!found || cost(std::size_t(arm)) < best_cost))
      {
        best = arm;
        best_cost = cost(std::size_t(arm));
        found = true;
      }
    bool const first = report_.decisions.empty();
    Arm const incumbent = report_.active;
    std::size_t const inc = std::size_t(incumbent);
    Arm chosen = best;
    if (!first && outcome_[inc] == Outcome::complete &&
        !(best_cost < (1 - options_.switch_margin) * cost(inc)))
      chosen = incumbent;
    if (confirm(chosen))
      return; // the probe goes on
    std::size_t const c = std::size_t(chosen);
    for (std::size_t a = 0; a < arm_count; ++a)
      why_.cut_ratio[a] = cut_ratio_for(a); // before this decision is recorded

    AdaptiveDecision d;
    d.probe_start = probe_start_;
    d.step = report_.steps;
    d.chosen = chosen;
    for (std::size_t a = 0; a < arm_count; ++a)
    {
      bool const ran = measured_[a] > 0;
      d.us_per_step[a] = ran ? 1e6 * mean(a) : std::numeric_limits<double>::quiet_NaN();
      d.ns_per_entry[a] = ran ? 1e9 * cost(a) : std::numeric_limits<double>::quiet_NaN();
    }
    if (model_ && counters_known_)
      for (Arm arm : options_.arms)
        d.predicted_ns_per_entry[std::size_t(arm)] = 1e9 * predicted_cost(arm);
    d.measured_steps = measured_;
    d.warmup_steps = warmup_;
    report_.decisions.push_back(std::move(d));
    why_.outcome = outcome_;
    why_.measured = measured_;
    why_.stop_reference = stop_reference_;
    why_.round1_best = round1_best_;
    for (std::size_t a = 0; a < arm_count; ++a)
      why_.cost[a] = measured_[a] > 0 ? cost(a) : 0;
    why_.compile_charge = compile_charge();
    why_.charge_from_window = // a charge implies pairs_ > 0
        why_.compile_charge > 0 && why_.compile_charge > double(moved_pairs_) / pairs_;
    whys_.push_back(why_);
    report_.probe_excess_seconds += probe_seconds_ - probe_entries_ * cost(c);

    period_ = first || chosen != incumbent
                  ? options_.recheck_period
                  : std::min(2 * period_, options_.recheck_max_period);
    recheck_at_ = period_ > 0 ? report_.steps + period_ : -1;
    report_.active = chosen;
    report_.probing = false;
    // A deferred arm waits for the set to move: sampled steps compare their
    // ids with those of the probe's last step.
    watch_motion_ =
        std::find(outcome_.begin(), outcome_.end(), Outcome::deferred) != outcome_.end();
    if (watch_motion_)
      still_ids_ = last_ids_;
    // A charged exact-set arm was chosen knowing its compile rate.
    probe_rate_ =
        chosen == Arm::exact_set ? compile_rate() : double(events_[c]) / measured_[c];
    shifted_windows_ = 0;
    window_begin_ = report_.steps + options_.warmup_steps;
    window_end_ = window_begin_ + options_.window_steps;
    window_events_ = events(chosen);
    // (The exact-set arm's quiet sums hold each measured step less its
    // compile: it had a step without a compile of its own if it compiled on
    // fewer of them.)
    reference_quiet_ =
        chosen == Arm::exact_set ? events_[c] < measured_[c] : quiet_entries_[c] > 0;
    reference_ = reference_quiet_ ? quiet_sum_[c] / quiet_entries_[c] : cost(c);
    shifted_samples_ = 0;
    shifted_sample_cost_ = 0;
    sample_at_ = options_.sample_period > 0
                     ? report_.steps + options_.warmup_steps + options_.sample_period - 1
                     : -1;
    periodic_sample_at_ = sample_at_;
  }

  AdaptiveOptions options_;
  std::shared_ptr<data_type const> op_; // its host CSC weighs timed steps
  // The cost model (with AdaptiveOptions::model) and the counters of the
  // probe's latest step (counters_known_: its churn too), from its ids and
  // the previous probe step's (last_ids_).
  std::optional<CostModel> model_;
  StepCounters counters_;
  bool counters_known_ = false;
  Churn churn_; // over every counted step
  std::vector<Ordinal> last_ids_;
  std::int64_t last_ids_step_ = -1; // the step whose ids last_ids_ holds
  int predicted_flips_ = 0;         // sampled steps in a row ranking another arm first
  Arm predicted_best_ = Arm::scatter;
  double predicted_best_cost_ = 0, predicted_active_cost_ = 0;
  int width_;
  std::vector<Ordinal> expected_cols_; // the scheduled arm is compiled for them
  // The arms, each made when it first runs (make()).
  std::optional<ScheduledArm<Scalar, Ordinal, MemorySpace>> scheduled_;
  std::optional<ExactSetArm<Scalar, Ordinal, MemorySpace>> exact_set_;
  std::optional<ScatterArm<Scalar, Ordinal, MemorySpace>> scatter_;
  // The default instance, made once: on Kokkos 4 making one allocates.
  typename MemorySpace::execution_space default_space_;
  mutable AdaptiveReport report_; // report() writes the decisions' reasons

  // Probe under way.
  Why why_;                                 // why it began (the outcomes come at its end)
  std::vector<Why> whys_;                   // per decision, for its reason
  mutable std::size_t reasons_written_ = 0; // decisions whose reason report() wrote
  double window_rate_ = 0; // the compile rate of the latest shifted window
  std::int64_t probe_start_ = 0;
  int round_ = 1;                         // 1, 2, or confirm_round
  static constexpr int confirm_round = 3; // the scheduled arm's confirmation
  std::array<Arm, arm_count> order_{};    // arms of this round, in order
  std::size_t order_size_ = 0;
  std::size_t order_pos_ = 0; // the arm of the current block
  int block_warmup_ = 0;      // warm-up steps of the current block
  int block_measured_ = 0;    // measured steps of the current block
  bool moving_ = false;       // the set moved between two steps of a block
  int pairs_ = 0;             // probe steps whose previous step's ids were kept
  int moved_pairs_ = 0;       // of which on a set other than that step's
  bool requeued_ = false;     // the scheduled arm went behind the others in round 1
  bool catch_up_ = false;     // the current block began on a new set
  double probe_seconds_ = 0;
  double probe_entries_ = 0; // work of this probe's steps
  // Seconds per entry of the current block's latest step (NaN before its
  // first): whether its next step still falls (scheduled_settle_steps).
  double block_last_cost_ = std::numeric_limits<double>::quiet_NaN();
  // Summed over the pairs of steps until the scheduled arm's round-1 turn:
  // the column tiles a step's entering columns opened over its column count.
  double opened_share_ = 0;
  // Per arm (indexed by Arm).
  std::array<Outcome, arm_count> outcome_{};
  std::array<double, arm_count> sum_{};            // seconds of measured steps
  std::array<int, arm_count> measured_{};          // measured steps
  std::array<int, arm_count> warmup_{};            // warm-up steps
  std::array<std::int64_t, arm_count> events_{};   // compile events in measured steps
  std::array<double, arm_count> entries_{};        // their work (see entries())
  std::array<double, arm_count> quiet_sum_{};      // seconds of those without one (*)
  std::array<double, arm_count> quiet_entries_{};  // and their work
  std::array<double, arm_count> stop_reference_{}; // best complete mean when stopped
  // (*) the exact-set arm's: each of its measured steps less its compile,
  // whose seconds are these (and those steps' work):
  double compile_sum_ = 0;
  double compile_entries_ = 0;
  double round1_best_ = 0;   // lowest round-1 cost
  double best_complete_ = 0; // lowest cost of a complete arm (infinity: none yet)

  // Settled.
  double probe_rate_ = 0; // the active arm's rate while measured
  std::int64_t window_begin_ = -1;
  std::int64_t window_end_ = -1;
  std::int64_t window_events_ = 0;
  int shifted_windows_ = 0;
  std::int64_t period_ = 0;
  std::int64_t recheck_at_ = -1;
  // The step-time detector's reference: the active arm's seconds per entry
  // over its measured probe steps without a compile event, if it had such
  // steps (reference_quiet_), else over all of them.
  double reference_ = 0;
  bool reference_quiet_ = false;
  std::int64_t sample_at_ = -1;          // the next sampled step (-1: none)
  std::int64_t periodic_sample_at_ = -1; // the next step of the periodic grid
  int shifted_samples_ = 0;              // shifted samples in a row
  double shifted_sample_cost_ = 0;       // their seconds per entry, summed
  // An arm was deferred: sampled steps compare their ids with still_ids_,
  // the ids of the probe's last step.
  bool watch_motion_ = false;
  std::vector<Ordinal> still_ids_;
};

} // namespace hst
