#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <istream>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace hst
{

/// Seconds on std::chrono::steady_clock: the adaptive sessions' default clock.
inline double steady_seconds()
{
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// How `Operator` cuts A into tiles. Fixed for the operator's lifetime.
struct OperatorOptions
{
  /// Columns per column tile (a tile holds `tile` consecutive columns of the
  /// locality order). Must be positive.
  int tile = 8;
  /// Rows per row block (consecutive rows of the locality order). A tile is one
  /// column tile crossed with one row block; the scheduled arm runs one row
  /// block per work item, so no two work items write the same row of y. Tall
  /// blocks cost the fewest tile visits on one thread; shorter blocks expose
  /// more parallelism. Must be positive.
  int row_block = 1024;
  /// Order rows and columns by graph locality (a breadth-first sweep of the
  /// bipartite row/column graph from a pseudo-peripheral column) before
  /// cutting tiles, so that the caller's numbering does not matter. With
  /// `false`, tiles follow the caller's numbering.
  bool locality = true;
  /// On host backends with more than one thread (OpenMP, Threads), a step
  /// whose work (entries of A[:, S] times B; the scatter arm estimates it
  /// from the mean column length) is below this runs on the calling thread:
  /// a fork-join costs more than such a step. Ignored on Serial and on
  /// devices. 0 makes every step parallel. The default was measured with
  /// `bench_kernels` on OpenMP at 2 threads (see the README). Must be >= 0.
  std::int64_t min_parallel_work = 16384;
};

/// How a scheduled arm (`Operator::session`) grows and shrinks its schedule.
struct SessionOptions
{
  /// A scheduled column tile that no step has used for more than
  /// `retire_after` steps is retired when the schedule is next re-planned
  /// (any step whose column set differs from the previous step's). Must be
  /// positive.
  int retire_after = 64;
  /// With `strict`, the schedule is fixed: a step whose columns fall in a
  /// column tile the schedule does not hold throws `std::invalid_argument`
  /// instead of compiling it in, and no tile is ever retired.
  bool strict = false;
};

/// The arms an adaptive session (`Operator::adaptive`) chooses among.
enum class Arm
{
  scheduled, ///< ScheduledArm (`Operator::session`)
  exact_set, ///< ExactSetArm (`Operator::baseline`)
  scatter,   ///< ScatterArm (`Operator::scatter`)
};

inline char const *to_string(Arm arm)
{
  switch (arm)
  {
  case Arm::scheduled:
    return "scheduled";
  case Arm::exact_set:
    return "exact_set";
  case Arm::scatter:
    return "scatter";
  }
  return "?";
}

/// What one step asks of the adaptive session's arms, read on the host from
/// the step's column ids and the previous step's (CostModel.hpp).
struct StepCounters
{
  double entries = 0;         ///< stored entries of A[:, S]
  double changed_entries = 0; ///< entries of the columns that entered or left S
  bool set_changed = false;   ///< S differs from the previous step's (order too)
};

/// One arm's cost-model constants, in seconds (formulas in CostModel.hpp).
struct ArmCost
{
  double fixed = 0;     ///< per step
  double per_entry = 0; ///< per entry of A[:, S]
  double per_update =
      0; ///< exact set: per entry recompiled; scheduled: per changed entry
};

/// Constants of the cost model, indexed by Arm: measured by
/// Operator::calibrate on the operator they are used with (a few
/// milliseconds; another operator's constants misrank its arms), or saved
/// and loaded as text.
struct CostConstants
{
  std::array<ArmCost, 3> arm{};

  /// One line of text: "hst-cost-model 1" and nine numbers.
  void save(std::ostream &out) const
  {
    std::ostringstream s;
    s.precision(17);
    s << "hst-cost-model 1";
    for (auto const &a : arm)
      s << ' ' << a.fixed << ' ' << a.per_entry << ' ' << a.per_update;
    out << s.str() << '\n';
  }

  /// Whether `v` can be a constant: finite and not negative.
  static bool usable(double v) { return v >= 0 && std::isfinite(v); }
  /// The first constant that is not usable(), with its arm; none when every
  /// constant is.
  std::optional<std::pair<Arm, double>> first_invalid() const
  {
    for (std::size_t a = 0; a < arm.size(); ++a)
      for (double v : {arm[a].fixed, arm[a].per_entry, arm[a].per_update})
        if (!usable(v))
          return std::make_pair(Arm(a), v);
    return std::nullopt;
  }
  /// Reads what save() wrote; throws std::invalid_argument naming what is
  /// wrong (another format, a missing, negative or non-finite constant).
  static CostConstants load(std::istream &in)
  {
    std::string tag;
    int version = 0;
    in >> tag >> version;
    if (!in || tag != "hst-cost-model" || version != 1)
      throw std::invalid_argument("hst::CostConstants::load: argument 'in' does not "
                                  "start with 'hst-cost-model 1'");
    CostConstants c;
    for (std::size_t a = 0; a < c.arm.size(); ++a)
      for (double *v : {&c.arm[a].fixed, &c.arm[a].per_entry, &c.arm[a].per_update})
      {
        in >> *v;
        if (!in || !usable(*v))
          throw std::invalid_argument(
              std::string("hst::CostConstants::load: argument 'in' has a missing, "
                          "negative or non-finite constant for arm ") +
              to_string(Arm(a)));
      }
    return c;
  }
};

/// How an adaptive session (`Operator::adaptive`) probes the arms, when it
/// probes again, and what clock it reads. See AdaptiveSession.hpp for the
/// mechanism. Checked by `Operator::adaptive`, which throws
/// std::invalid_argument naming the field and its value.
struct AdaptiveOptions
{
  /// The arms it may choose, in the order the first round of a probe runs
  /// them. Not empty, no arm twice. The exact-set arm comes first by default:
  /// its first step compiles its set (its preparation, which the scheduled
  /// arm does when it is made and the scatter arm never needs), so that
  /// preparation falls in the session's first step, as it does for the arm
  /// used alone.
  std::vector<Arm> arms = {Arm::exact_set, Arm::scheduled, Arm::scatter};
  /// Warm-up steps at the start of a probe block (an arm's run of
  /// consecutive probe steps) whose arm catches up, which is not its steady
  /// state: the first block of an arm that was idle (made and never run, or
  /// not the active arm since the last decision: its data is cold in cache;
  /// measured, such a first step takes 2-10x a steady one, even for an arm
  /// with nothing to compile), and any block on a set other than the one
  /// the arm last ran on (scheduled: re-plan and tile compiles; exact set: a
  /// set compile). Other blocks (a frozen set the arm has seen) have none.
  /// Warm-up steps are timed and charged to the probe, not compared. >= 0.
  int warmup_steps = 1;
  /// Further warm-up steps of the scheduled arm's blocks that warm up, on a
  /// set the probe has seen move (also with warmup_steps = 0). Its state is
  /// what the other arms' steps push out of cache: measured (2026-12-05,
  /// road_1000x1000 under drift at rho 0.05), its second step in a re-probe
  /// after 40 steps of another arm took 1.18-1.44x its steady step in two runs
  /// of three. 1 helps ms-scale steps under drift and costs jump cases (README,
  /// "adaptive"); off by default. >= 0.
  int scheduled_extra_warmup = 0;
  /// Further warm-up steps of the scheduled arm's blocks, on a moving set, in
  /// a re-probe that the active arm's rising step time began (time_shift_ratio
  /// below): the run the costs cross in, where its second step is the one
  /// measured cold above. Added to scheduled_extra_warmup. Measured (README,
  /// "adaptive"): on 1e6-row operators under drift, 1 lifted the worst case
  /// above 0.7x of the best arm in three runs of three, the geomean unchanged;
  /// over the sweep's jump and drift cases within noise: off by default. >= 0.
  int scheduled_rise_warmup = 0;
  /// At most this many further warm-up steps of the scheduled arm's block
  /// that catches up in a re-probe on a moving set (after the warm-up above),
  /// each taken only while its steps still fall: a step whose cost per entry
  /// is below 0.9x the block's step before it (the catch-up step first) is
  /// a warm-up step; the first that is not is measured. After tens of steps
  /// of another arm its steps stay slow for several steps in some processes
  /// and not in others: measured (2026-12-07, grid2d_5pt_1000x1000 under
  /// drift at rho 0.01, the re-probe at step 40), after the catch-up 197,
  /// 192, 193 us in one process and 342, 254, 230, 213 or 375, 322, 274,
  /// 252 in others, against the scatter arm's 265; measured on the first,
  /// those re-probes kept the scatter arm, 0.61-0.65x the best over the run.
  /// A block already steady pays one step of the arm: its catch-up step
  /// re-plans the steps it missed and was dearer than the next in every
  /// re-probe traced. 0 turns it off. >= 0.
  int scheduled_settle_steps = 3;
  /// Measured steps of the scheduled arm's confirmation: at the end of a
  /// re-probe that saw the set move, when the scheduled arm completed its
  /// measured steps, another arm is about to be chosen, and the scheduled
  /// arm's cost is at most `scheduled_confirm_ratio` times that arm's, each
  /// of the two runs a second block, the scheduled arm first: warm-up steps
  /// (warmup_steps; the scheduled arm's also scheduled_extra_warmup, and in a
  /// re-probe scheduled_settle_steps while its steps fall), then this many
  /// measured steps in a row, whose cost replaces the arm's cost from its
  /// first block (whose measured steps are then counted as warm-up); then
  /// the probe decides. A first block measures an arm on its second step,
  /// after other arms' steps have pushed its state out of cache; the
  /// scheduled arm holds the most (piece lists, work list, compiled tiles),
  /// and on 1e6-row operators under drift its steps still fall for several
  /// steps (see scheduled_settle_steps). Both arms measured on consecutive
  /// steps compare them as they run when chosen; the scheduled arm's block
  /// alone, against the other's first-block cost, chose it where it was
  /// slower (the microsecond sweep, 2026-12-07: 295 against 315 of 336 cases
  /// within 0.9x of the best arm, in every probe), and both blocks in first
  /// probes as well cost that sweep 314 against 321 (its 2-3 us steps lie
  /// within a few percent of each other). A near tie costs at most 2
  /// (warmup_steps + this) + settle steps more, at most the ratio dearer in
  /// the scheduled arm's block. The distributed session has no
  /// confirmation. 0 turns it off. >= 0.
  int scheduled_confirm_steps = 3;
  /// See `scheduled_confirm_steps`. >= 1, not NaN (infinity: every re-probe
  /// on a moving set that completed the scheduled arm and does not choose it).
  double scheduled_confirm_ratio = 1.25;
  /// Measured steps an arm needs to be chosen; its cost is their time over
  /// their work, the entries of A[:, S] summed over those steps (sums, not
  /// a median, so that compiles inside them are charged). Round 1 measures
  /// one step per arm; only arms within `cut_ratio` of the best get the rest.
  /// >= 1. The default, 1: each measured step of a slower arm is paid on
  /// the caller's steps. On an idle machine (2026-12-04), `hst-sweep
  /// --microsecond --rho 0.002,0.25` (168 cases of 200 microsecond-scale
  /// steps) put the session within 0.9x of the best arm in 150 and 154 of
  /// 168 cases with 1 against 138 with 2; the quick suite read 106 and 107
  /// of 120 (1 and 2). Earlier, 2 had done better than 3 and 4 there.
  int measure_steps = 1;
  /// An arm is abandoned when it is clearly worse: after round 1 when its
  /// cost (time per entry) is more than cut_ratio times the lowest, and in
  /// round 2 as soon as its cost so far exceeds cut_ratio times the lowest
  /// cost of an arm that completed its measured steps. An abandoned arm is
  /// not chosen. On a re-probe the active arm's ratio is at least 1 / (1 -
  /// switch_margin), so that the cut never abandons an arm the margin would
  /// keep. Infinity abandons none (every arm runs all its measured steps).
  /// >= 1, not NaN.
  double cut_ratio = 2.0;
  /// A re-probe replaces the active arm only if another arm's cost is lower
  /// by more than this fraction of the active arm's (hysteresis of the
  /// choice). In [0, 1).
  double switch_margin = 0.05;
  /// Settled steps per window of the compile-rate detector, which compares the
  /// active arm's compile rate over each window with the rate it had while
  /// it was measured. >= 1.
  int window_steps = 16;
  /// Consecutive shifted windows, or consecutive shifted step-time samples
  /// (see `sample_period`), that start a re-probe (hysteresis of both
  /// detectors: one odd window or one slow sample does not). The two
  /// detectors count separately. >= 1.
  int shift_windows = 2;
  /// A window is shifted when the active arm's compile rate r over it rose
  /// from its rate p in its measured probe steps by more than `shift_floor`
  /// events per step and more than `shift_ratio`-fold: r - p > shift_floor
  /// and r > shift_ratio * p. Events are tiles compiled (scheduled arm) or set
  /// compiles (exact-set arm); the scatter arm has none. >= 1 and finite.
  double shift_ratio = 3.0;
  /// See `shift_ratio`. >= 0 and finite.
  double shift_floor = 0.5;
  /// Settled steps per step-time sample: after a decision's `warmup_steps`
  /// catch-up steps, every `sample_period`-th settled step is timed like a
  /// probe step (fence the caller's instance, read the clock, apply, fence,
  /// read the clock), weighed by its entries of A[:, S], and compared with
  /// the active arm's cost in its probe. Costs one fence, two clock reads and
  /// k host reads per sampled step: one per `sample_period` steps, plus the
  /// steps that confirm a shifted sample (see `time_shift_ratio`). 0 turns
  /// the step-time detector off. >= 0.
  std::int64_t sample_period = 32;
  /// A step-time sample is shifted when its time per entry is more than
  /// `time_shift_ratio` times the active arm's reference: its cost in the
  /// measured probe steps that compiled nothing (then a sample that
  /// compiled is skipped: compiles are the compile-rate detector's signal),
  /// or, if all compiled, in all of them. A shifted sample is confirmed on
  /// the next steps (each sampled too): `shift_windows` shifted samples in a
  /// row start a re-probe, one that is not shifted returns to the grid of
  /// `sample_period` steps. Only a rise counts (a fall makes the active arm
  /// cheaper; a faster arm is left to the periodic re-check). > 1 and
  /// finite.
  double time_shift_ratio = 1.5;
  /// Settled steps after a decision until the periodic re-check; doubled
  /// (up to `recheck_max_period`) each time a re-probe keeps the active arm,
  /// reset when a probe changes it. 0 disables periodic re-checks. >= 0.
  std::int64_t recheck_period = 256;
  /// Cap of the backed-off period. >= recheck_period.
  std::int64_t recheck_max_period = 4096;
  /// While a probe sees the same set on every step, the scheduled arm is
  /// deferred: not run, not made, not chosen. Its gain is re-planning only
  /// the columns that change; on a set that does not change it runs a
  /// compiled step as the exact-set arm does, with a read-modify-write of y
  /// per entry where the exact-set arm has one per row, and making it (the
  /// schedule of the expected columns) costs several steps. In round 1 it
  /// then runs after the other arms, and it is deferred when its turn comes
  /// if the set has not changed from one probe step to the next (at least
  /// two steps seen). Settled, each step-time sample (`sample_period`)
  /// compares its column ids with those of the probe's last step (O(k)):
  /// a different set starts a re-probe, in which the scheduled arm runs
  /// even if the set stands again (a cost model may still skip it, on its
  /// prediction). With `sample_period` 0 a deferred arm waits for
  /// the periodic re-check. An incumbent scheduled arm is never deferred.
  /// false probes it like the others.
  bool defer_scheduled = true;
  /// A set that jumps defers the scheduled arm too (with defer_scheduled):
  /// when its turn in round 1 comes, the probe's entering columns have
  /// opened, per step, column tiles that the previous step's set did not
  /// touch for at least this share of the set's columns (averaged over the
  /// probe's pairs of steps so far; O(k) host work on those steps, until the
  /// arm's turn). Each such tile is one the schedule compiles on that step: where
  /// entering columns land anywhere (a jump), the share is about the churn,
  /// where they land beside the set (a drift) a fraction of it. Measured
  /// (2026-12-07, the microsecond sweep's 28 operators, first 6 steps): jump
  /// 0.23-0.25 at churn 0.25 and 0.044-0.052 at 0.05; drift 0.03-0.10 at
  /// churn 0.25 on meshes, grids and bands, 0.14-0.19 on the circuit and
  /// R-MAT graphs, 0.008-0.046 at 0.05. On the full sweep the scheduled arm
  /// was never the best arm under jump at churn 0.05 and 0.25. Not watched
  /// for motion (the set moves): the periodic re-check and the active arm's
  /// detectors probe again, and the rule is weighed again then (not in a
  /// re-probe that a moved still set began, which runs the arm). A set
  /// replaced whole once (a change of phase) counts as a jump over the few
  /// pairs a probe sees, and the arm then waits for that re-check. > 0, not
  /// NaN; above 1 (infinity) no set counts as one that jumps.
  double defer_jump_share = 0.15;
  /// Constants of the cost model (CostModel.hpp: each arm's
  /// time per step from the entries of A[:, S], whether S changed and the
  /// entries of the columns that changed), from Operator::calibrate or
  /// CostConstants::load. With them, round 1 of a probe runs an arm only if
  /// its predicted cost for steps like the probe's latest one (time per
  /// entry, at the churn counted so far: hst::Churn in CostModel.hpp; the
  /// prediction scaled by what the arm measured on its earlier timed steps,
  /// or, before it has any, by the lowest such ratio of a timed arm)
  /// is at most `model_margin` times the lowest cost measured so far in the
  /// probe; the first arm of round 1 always runs (its steps give the
  /// workload's counters), the others run in order of their predictions,
  /// cheapest first (unless the deferral of the scheduled arm still waits
  /// to see the set move), and an arm never probed is never made. Settled,
  /// each step-time sample (`sample_period`; the step before it keeps its
  /// ids, O(k)) refines the active arm's prediction and ranks the arms on
  /// its counters: the active arm predicted dearer than `model_margin` times
  /// another arm on `shift_windows` samples in a row (each confirmed on the
  /// next step) starts a re-probe, so a change of churn is seen without a
  /// timer showing it (a prediction needs as wide a gap to start a
  /// re-probe as to skip an arm). Each decision
  /// reports every arm's prediction beside its measured cost. Without constants (the
  /// default) every arm is probed and nothing is predicted.
  std::optional<CostConstants> model;
  /// See `model`. >= 1, not NaN (infinity probes every arm and never
  /// re-probes on a prediction).
  double model_margin = 1.5;
  /// Options of the held scheduled arm. `strict` must be false: a strict
  /// schedule rejects steps that the other arms accept.
  SessionOptions session = {};
  /// Seconds, read only on probe steps and on sampled settled steps (see
  /// `sample_period`), after fencing the caller's instance.
  /// Tests pass a fake clock; the default is std::chrono::steady_clock.
  std::function<double()> clock = steady_seconds;
};

namespace detail
{

// AdaptiveOptions::scheduled_settle_steps: a step whose cost per entry is
// below this ratio times its block's step before it still falls (warms up).
inline constexpr double settled_fall_ratio = 0.9;

// The cut ratio (AdaptiveOptions and DistributedAdaptiveOptions::cut_ratio)
// applied to the active arm in a re-probe: never below 1 / (1 -
// switch_margin), so that the cut cannot remove an arm the switch margin
// would keep.
inline double active_arm_cut_ratio(double cut_ratio, double switch_margin)
{
  return std::max(cut_ratio, 1 / (1 - switch_margin));
}

} // namespace detail

} // namespace hst
