#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
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
  /// Measured steps an arm needs to be chosen; its cost is their time over
  /// their work, the entries of A[:, S] summed over those steps (sums, not
  /// a median, so that compiles inside them are charged). Round 1 measures
  /// one step per arm; only arms within `cut_ratio` of the best get the rest.
  /// >= 1. The default, 2, did better
  /// than 3 and 4 over the quick suite's 120 cases: each measured step of a
  /// slower arm is paid on the caller's steps, and on 200-step runs that
  /// outweighed the noisier mean.
  int measure_steps = 2;
  /// An arm is abandoned when it is clearly worse: after round 1 when its
  /// cost (time per entry) is more than cut_ratio times the lowest, and in
  /// round 2 as soon as its cost so far exceeds cut_ratio times the lowest
  /// cost of an arm that completed its measured steps. An abandoned arm is
  /// not chosen. Infinity abandons none (every arm runs all its measured
  /// steps). >= 1, not NaN.
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
  /// Options of the held scheduled arm. `strict` must be false: a strict
  /// schedule rejects steps that the other arms accept.
  SessionOptions session = {};
  /// Seconds, read only on probe steps and on sampled settled steps (see
  /// `sample_period`), after fencing the caller's instance.
  /// Tests pass a fake clock; the default is std::chrono::steady_clock.
  std::function<double()> clock = steady_seconds;
};

} // namespace hst
