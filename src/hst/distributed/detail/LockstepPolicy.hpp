#pragma once
// The distributed adaptive session's policy: which arm runs at each step,
// which steps are timed, and what to choose from the costs combined over the
// ranks. Plain C++: numbers in, decisions out, no MPI, no Kokkos, no clock.
// Every input that changes a decision is a combined (rank-wide) number or a
// step count, so every rank that feeds it the same combined numbers makes the
// same decisions at the same steps.

#include <hst/Options.hpp>
#include <hst/detail/InputCheck.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace hst
{

inline constexpr std::size_t distributed_arm_count = 3;

/// How a distributed adaptive session probes and when it probes again. Every
/// rank must pass the same values (checked at construction: they change how
/// many collectives a step calls).
struct DistributedAdaptiveOptions
{
  /// The arms it may choose, in the order a probe runs them. Not empty, no
  /// arm twice.
  std::vector<Arm> arms = {Arm::exact_set, Arm::scheduled, Arm::scatter};
  /// Steps at the start of each arm's probe block that are run and timed but
  /// not compared (the arm catches up: cold caches, first compiles). >= 0.
  int warmup_steps = 1;
  /// Steps per arm that are compared: the arm's cost is the mean of their
  /// step times, each the slowest rank's. >= 1.
  int measure_steps = 2;
  /// In a re-probe on a set that moved on some rank during the probe, the
  /// block of a scheduled arm that is not the incumbent (it catches up on
  /// the steps it missed) takes up to this many further warm-up steps while
  /// its steps still fall: a step after its warmup_steps whose combined
  /// time is below 0.9x the block's step before it is a warm-up step too,
  /// and the first that does not fall is measured (as
  /// AdaptiveOptions::scheduled_settle_steps in one process). Decided on
  /// combined times, so alike on every rank. Such a step is not known to be
  /// measured before it runs: it does not refine a cost model. 0: off. >= 0.
  int scheduled_settle_steps = 3;
  /// An arm is cut, its block ended and the arm not chosen, as soon as the
  /// mean of its measured steps so far exceeds cut_ratio times the cost of
  /// an arm of the same probe that completed its measured steps (the
  /// lowest such cost). Only a step before an arm's last measured one can
  /// cut it, so measure_steps = 1 cuts none. On a re-probe the active arm's
  /// ratio is at least 1 / (1 - switch_margin): it is cut only where its
  /// mean so far lies outside the margin. Infinity cuts none. >= 1, not
  /// NaN.
  double cut_ratio = 2.0;
  /// A re-probe replaces the active arm only if another arm's cost is lower
  /// by more than this fraction of the active arm's. In [0, 1).
  double switch_margin = 0.05;
  /// Settled steps per timed sample of the active arm (after warmup_steps
  /// catch-up steps); 0: no samples. A sample costs two fences, two clock
  /// reads and one MPI_Allreduce of two doubles (five with a cost model,
  /// whose step before each sample also keeps its ids: O(k + received)).
  /// >= 0.
  std::int64_t sample_period = 32;
  /// A sample is shifted when the slowest rank's step time exceeds this
  /// factor times the active arm's cost at its decision. > 1, finite.
  double time_shift_ratio = 1.5;
  /// Shifted samples in a row that start a re-probe; a shifted sample makes
  /// the next step a sample too, to confirm it. >= 1.
  int shift_samples = 2;
  /// Settled steps after a decision until the periodic re-check; doubled (up
  /// to recheck_max_period) each time a re-probe keeps the arm, reset when
  /// one changes it. 0: no periodic re-checks. >= 0.
  std::int64_t recheck_period = 256;
  /// >= recheck_period.
  std::int64_t recheck_max_period = 4096;
  /// While a probe sees the same set on every rank at every step, the
  /// scheduled arm is deferred: not run, not made, not chosen. On a set that
  /// does not change it runs a compiled step as the exact-set arm does, and
  /// making it (the schedule of the expected columns, an exchange of ids with
  /// the neighbours) costs several steps. In a probe it then runs after the
  /// other arms, and it is deferred when its turn comes if no rank's set
  /// changed from one probe step to the next (at least two steps seen).
  /// Settled, each sample (`sample_period`) compares this rank's column ids
  /// with those of the probe's last step (O(k)), combined over the ranks in
  /// the sample's own MPI_Allreduce: a different set on any rank starts a
  /// re-probe of the active arm and the scheduled arm, which runs the
  /// scheduled arm even if the set stands again during it. With `sample_period` 0
  /// a deferred arm waits for the periodic re-check. An incumbent scheduled
  /// arm is never deferred. false probes it like the others.
  bool defer_scheduled = true;
  /// A set that jumps defers the scheduled arm too (with defer_scheduled),
  /// as AdaptiveOptions::defer_jump_share does in one process, over the
  /// ranks: until the arm's turn, each probe step whose set changed on a rank
  /// counts there the column tiles of the local operator that its entering
  /// owned columns open (O(k) on the host, with the local operator's
  /// scratch), and the step's MPI_Allreduce (MAX) carries the largest count
  /// and the largest column count of a rank; their ratio, averaged over the
  /// probe's pairs of steps, at this share or more defers the arm (a ratio
  /// of maxima, at most the largest of the ranks' own shares, so a rank with
  /// few columns does not make its noise the rule). Not watched for motion;
  /// the next probe weighs the rule again. Every rank passes the same value.
  /// > 0, not NaN; above 1 (infinity) no set counts as one that jumps.
  double defer_jump_share = 0.15;
  /// Per-machine constants of the cost model (CostModel.hpp), from
  /// `op.local_operator().calibrate(space)` on this rank or
  /// CostConstants::load; every rank passes constants or none (the constants
  /// may differ by rank). With them, each timed step's counters on this rank
  /// (entries of the local A[:, S] over the owned and the received columns,
  /// whether that set changed, the entries of the columns that entered or
  /// left it) give each arm's predicted seconds per step (for steps of that
  /// many entries at the churn counted so far: hst::Churn), scaled by what the
  /// arm measured on this rank's earlier timed steps (an arm not timed yet:
  /// by the lowest such ratio of a timed arm); the predictions ride
  /// in the step's own MPI_Allreduce (MAX: the slowest rank's), so every rank
  /// reads the same numbers and no collective is added. A probe runs an arm
  /// after the first only if its combined prediction is at most
  /// `model_margin` times the lowest cost of an arm that completed its
  /// measured steps in the probe (an arm not run is not made); after the
  /// first, the arms run in order of their predictions, cheapest first,
  /// unless the deferral of the scheduled arm (`defer_scheduled`) still waits
  /// to see a set move (then it orders them). Settled, the
  /// step before each sample keeps its ids (O(k + received)), and a sample
  /// whose predictions put the active arm above `model_margin` times
  /// another arm, `shift_samples` samples in a row, starts a re-probe. Each decision
  /// reports the predictions beside the measured costs. Without constants (the default)
  /// nothing is predicted.
  std::optional<CostConstants> model;
  /// See `model`. >= 1, not NaN (infinity runs every arm and never
  /// re-probes on a prediction).
  double model_margin = 1.5;
  /// Options of the scheduled arm; `strict` must be false.
  SessionOptions session = {};
  /// Seconds, read after fencing the caller's instance, on timed steps only.
  std::function<double()> clock = steady_seconds;
};

/// One decision of a distributed adaptive session; the same on every rank.
struct DistributedDecision
{
  std::int64_t probe_start = 0; ///< step at which the probe began
  std::int64_t step = 0;        ///< first step the chosen arm runs settled
  Arm chosen = Arm::scheduled;
  /// Per arm (indexed by Arm): mean of its measured steps, each the slowest
  /// rank's time, in microseconds; NaN for an arm not probed.
  std::array<double, distributed_arm_count> us_per_step = {
      std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN(),
      std::numeric_limits<double>::quiet_NaN()};
  std::string reason; ///< why the probe began
  /// Per arm: cut (DistributedAdaptiveOptions::cut_ratio) after
  /// `measured_steps` of its measured steps; us_per_step is their mean.
  std::array<bool, distributed_arm_count> cut{};
  std::array<std::int64_t, distributed_arm_count> measured_steps{};
  /// Per arm: further warm-up steps its block took while its steps still
  /// fell (DistributedAdaptiveOptions::scheduled_settle_steps).
  std::array<std::int64_t, distributed_arm_count> settle_steps{};
  /// The scheduled arm was deferred (DistributedAdaptiveOptions::
  /// defer_scheduled): the set was the same on every rank over the probe's
  /// first `same_set_steps` steps.
  bool scheduled_deferred = false;
  std::int64_t same_set_steps = 0;
  /// The scheduled arm was deferred on a set that jumps
  /// (DistributedAdaptiveOptions::defer_jump_share): entering columns opened
  /// `jump_share` column tiles per column and step (the ratio of the ranks'
  /// largest counts) over the probe's first `jump_pairs` pairs of steps.
  bool scheduled_jumping = false;
  double jump_share = 0;
  std::int64_t jump_pairs = 0;
  /// With a cost model (DistributedAdaptiveOptions::model): per arm, its
  /// prediction on the probe's last step, the slowest rank's, in
  /// microseconds per step; NaN where there was none.
  std::array<double, distributed_arm_count> predicted_us_per_step = {
      std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN(),
      std::numeric_limits<double>::quiet_NaN()};
  /// Per arm: not run because its prediction (predicted_us_per_step at that
  /// point, kept in skip_us) exceeded model_margin x skip_bound_us, the
  /// lowest cost completed before its turn.
  std::array<bool, distributed_arm_count> skipped{};
  std::array<double, distributed_arm_count> skip_us{};
  double skip_bound_us = 0;
  double model_margin = 0; ///< DistributedAdaptiveOptions::model_margin
};

/// What a distributed adaptive session chose, when, and what probing cost;
/// the same on every rank.
struct DistributedAdaptiveReport
{
  Arm active = Arm::scheduled; ///< arm of the latest decision, or the probed arm
  bool probing = true;
  std::vector<DistributedDecision> decisions;
  std::int64_t steps = 0;
  std::array<std::int64_t, distributed_arm_count> arm_steps{};
  std::int64_t probe_steps = 0;
  /// Time of all probe steps, each the slowest rank's.
  double probe_seconds = 0;
  std::int64_t sampled_steps = 0;
};

namespace detail
{

inline void check_options(DistributedAdaptiveOptions const &o)
{
  if (o.arms.empty())
    throw_invalid("argument 'options.arms' must name at least one arm, got none");
  for (std::size_t i = 0; i < o.arms.size(); ++i)
  {
    auto const a = static_cast<int>(o.arms[i]);
    if (a < 0 || a >= int(distributed_arm_count))
      throw_invalid("argument 'options.arms' holds ", a, " at position ", i,
                    ", which is not an hst::Arm");
    for (std::size_t j = 0; j < i; ++j)
      if (o.arms[j] == o.arms[i])
        throw_invalid("argument 'options.arms' holds ", to_string(o.arms[i]),
                      " twice, at positions ", j, " and ", i);
  }
  if (o.warmup_steps < 0)
    throw_invalid("argument 'options.warmup_steps' must be >= 0, got ", o.warmup_steps);
  if (o.measure_steps < 1)
    throw_invalid("argument 'options.measure_steps' must be >= 1, got ", o.measure_steps);
  if (o.scheduled_settle_steps < 0)
    throw_invalid("argument 'options.scheduled_settle_steps' must be >= 0, got ",
                  o.scheduled_settle_steps);
  if (!(o.cut_ratio >= 1))
    throw_invalid("argument 'options.cut_ratio' must be >= 1 (infinity: cut none), got ",
                  o.cut_ratio);
  if (!(o.switch_margin >= 0 && o.switch_margin < 1))
    throw_invalid("argument 'options.switch_margin' must lie in [0, 1), got ",
                  o.switch_margin);
  if (o.sample_period < 0)
    throw_invalid("argument 'options.sample_period' must be >= 0, got ", o.sample_period);
  if (!(o.time_shift_ratio > 1 && std::isfinite(o.time_shift_ratio)))
    throw_invalid("argument 'options.time_shift_ratio' must be finite and > 1, got ",
                  o.time_shift_ratio);
  if (o.shift_samples < 1)
    throw_invalid("argument 'options.shift_samples' must be >= 1, got ", o.shift_samples);
  if (o.recheck_period < 0)
    throw_invalid("argument 'options.recheck_period' must be >= 0, got ",
                  o.recheck_period);
  if (o.recheck_max_period < o.recheck_period)
    throw_invalid("argument 'options.recheck_max_period' must be >= recheck_period (",
                  o.recheck_period, "), got ", o.recheck_max_period);
  if (o.session.retire_after <= 0)
    throw_invalid("argument 'options.session.retire_after' must be positive, got ",
                  o.session.retire_after);
  if (o.session.strict)
    throw_invalid("argument 'options.session.strict' must be false (a strict schedule "
                  "rejects steps the other arms accept), got true");
  if (!o.clock)
    throw_invalid("argument 'options.clock' must be callable, got an empty function");
  if (!(o.model_margin >= 1))
    throw_invalid("argument 'options.model_margin' must be >= 1, got ", o.model_margin);
  if (!(o.defer_jump_share > 0))
    throw_invalid("argument 'options.defer_jump_share' must be > 0 (infinity: no set "
                  "jumps), got ",
                  o.defer_jump_share);
  if (auto const bad = o.model ? o.model->first_invalid() : std::nullopt)
    throw_invalid("argument 'options.model' has a negative or non-finite constant ",
                  bad->second, " for arm ", to_string(bad->first));
}

// The numbers of the options that change how many collectives a step calls,
// for checking that every rank passed the same.
inline std::vector<double> collective_shape(DistributedAdaptiveOptions const &o)
{
  std::vector<double> shape = {double(o.warmup_steps),
                               double(o.measure_steps),
                               double(o.scheduled_settle_steps),
                               o.cut_ratio,
                               o.switch_margin,
                               double(o.sample_period),
                               o.time_shift_ratio,
                               double(o.shift_samples),
                               double(o.recheck_period),
                               double(o.recheck_max_period),
                               double(o.defer_scheduled),
                               o.defer_jump_share,
                               double(o.model.has_value()),
                               o.model_margin};
  for (Arm a : o.arms)
    shape.push_back(double(a));
  return shape;
}

// The step-by-step plan. Usage per step: plan() tells the arm, whether the
// step is timed and what to do with the step's column ids; the session runs
// it, and for a timed step reduces with MAX over the ranks this rank's time
// and, when plan() asked, whether this rank's ids differ from the kept ones
// (1 or 0: the step is as slow as its slowest rank, and the set moved if it
// moved on any rank) and, with a cost model, each arm's predicted seconds on
// this rank and, when plan() asked, the column tiles this rank's entering
// columns opened and its column count; then finish(combined seconds,
// combined moved, combined predictions or nullptr, combined opened tiles,
// combined column count; all ignored for an untimed step). Every number
// that reaches a decision is such a combined number or a step count.
class LockstepPolicy
{
public:
  struct Step
  {
    Arm arm;
    bool timed;
    /// Compare this step's ids with the kept ones (a timed step only).
    bool compare_ids;
    /// Keep this step's ids, for the next comparison.
    bool keep_ids;
    /// With a cost model: keep this step's ids (owned and received) for the
    /// next step's counters; a timed step that follows such a step has its
    /// counters known and sends its predictions.
    bool keep_counts;
    /// A timed step whose time the policy compares (a probe's measured step,
    /// a settled sample), not a warm-up: with a model, it refines the arm's
    /// prediction.
    bool measured;
    /// Count the column tiles that this step's entering columns open (a
    /// step with compare_ids, before the scheduled arm's turn: see
    /// DistributedAdaptiveOptions::defer_jump_share).
    bool count_opened;
  };

  explicit LockstepPolicy(DistributedAdaptiveOptions const &options)
      : arms_(options.arms)
      , warmup_(options.warmup_steps)
      , measure_(options.measure_steps)
      , settle_max_(options.scheduled_settle_steps)
      , cut_ratio_(options.cut_ratio)
      , margin_(options.switch_margin)
      , sample_period_(options.sample_period)
      , shift_ratio_(options.time_shift_ratio)
      , shift_samples_(options.shift_samples)
      , recheck_min_(options.recheck_period)
      , recheck_max_(options.recheck_max_period)
      , defer_(options.defer_scheduled)
      , jump_share_(options.defer_jump_share)
      , model_(options.model.has_value())
      , model_margin_(options.model_margin)
      , period_(options.recheck_period)
  {
    order_.reserve(arms_.size()); // a probe's order never allocates
    report_.active = arms_.front();
    start_probe("initial probe", arms_);
  }

  Step plan() const
  {
    if (report_.probing)
      return {order_[position_],
              true,
              probe_step_ > 0,
              true,
              model_,
              block_step_ >= warmup_ + settle_granted_ && !may_settle(),
              probe_step_ > 0 && jump_pending()};
    bool const sampled = is_sample();
    return {report_.active,
            sampled,
            sampled && watching_,
            false,
            model_ && (sampled || sample_follows()),
            sampled,
            false};
  }

  /// `combined_predicted`: per arm (indexed by Arm), the largest over the
  /// ranks of each rank's predicted seconds for this step, or nullptr where
  /// the step has none (no model, or counters not known); a value that is
  /// not positive and finite counts as no prediction for that arm.
  /// `combined_opened` and `combined_columns`: for a step that plan() asked
  /// to count opened tiles, the largest over the ranks of the column tiles
  /// its entering columns opened and of its column count.
  void finish(double combined_seconds, bool combined_moved = false,
              double const *combined_predicted = nullptr, double combined_opened = 0,
              double combined_columns = 0)
  {
    Step const step = plan();
    bool const may_settle_now = report_.probing && may_settle();
    ++report_.steps;
    ++report_.arm_steps[std::size_t(step.arm)];
    if (step.timed)
      take_predictions(combined_predicted);
    if (report_.probing)
    {
      ++report_.probe_steps;
      report_.probe_seconds += combined_seconds;
      if (step.compare_ids)
      {
        ++pairs_;
        moved_pairs_ += combined_moved;
        if (step.count_opened && combined_columns > 0)
          opened_share_ += combined_opened / combined_columns;
      }
      ++probe_step_;
      std::size_t const a = std::size_t(step.arm);
      bool cut = false;
      double const block_last = block_last_;
      block_last_ = combined_seconds;
      if (block_step_ >= warmup_ + settle_granted_ && may_settle_now &&
          combined_seconds < settled_fall_ratio * block_last)
      {
        ++settle_granted_; // still falling: one more warm-up step
        ++pending_.settle_steps[a];
      }
      else if (block_step_ >= warmup_ + settle_granted_)
      {
        sum_[a] += combined_seconds;
        auto &measured = pending_.measured_steps[a];
        ++measured;
        double const ratio = !report_.decisions.empty() && step.arm == report_.active
                                 ? active_arm_cut_ratio(cut_ratio_, margin_)
                                 : cut_ratio_;
        cut = measured < measure_ && sum_[a] / double(measured) > ratio * best_complete_;
        pending_.cut[a] = cut;
        if (measured == measure_)
          best_complete_ = std::min(best_complete_, sum_[a] / measure_);
      }
      if (++block_step_ == block() || cut)
      {
        begin_block();
        ++position_;
        pass_over_arms();
      }
      if (position_ == order_.size())
        decide();
      return;
    }
    ++settled_;
    if (step.timed)
    {
      ++report_.sampled_steps;
      if (step.compare_ids && combined_moved)
      {
        // The active arm and the deferred one; the third lost to the
        // active arm at the last decision.
        Arm const both[] = {report_.active, Arm::scheduled};
        start_probe("the set moved after a probe that deferred scheduled", both, true);
        return;
      }
      if (sample(combined_seconds) || predicted_shift())
        return;
    }
    if (recheck_min_ > 0 && settled_ >= period_)
    {
      period_ = std::min(2 * period_, recheck_max_);
      start_probe("periodic re-check", arms_);
    }
  }

  /// Starts a probe at the next step (call on every rank at the same step).
  void reprobe() { start_probe("reprobe() requested", arms_); }

  DistributedAdaptiveReport const &report() const { return report_; }

private:
  std::int64_t block() const
  {
    return std::int64_t(warmup_) + settle_granted_ + measure_;
  }

  // A block begins: no step of it yet.
  void begin_block()
  {
    block_step_ = 0;
    settle_granted_ = 0;
    block_last_ = std::numeric_limits<double>::quiet_NaN();
  }

  // Whether this step of the block, if it falls below settled_fall_ratio x
  // the block's step before it, is one more warm-up step
  // (DistributedAdaptiveOptions::scheduled_settle_steps): a re-probe's block
  // of a scheduled arm that is not the incumbent, on a set that moved on
  // some rank in this probe, none of its steps measured yet and the cap not
  // reached. Combined numbers and step counts only.
  bool may_settle() const
  {
    return settle_granted_ < settle_max_ && block_step_ <= warmup_ + settle_granted_ &&
           order_[position_] == Arm::scheduled && !report_.decisions.empty() &&
           report_.active != Arm::scheduled && moved_pairs_ > 0;
  }

  // The scheduled arm is deferred on a set that does not move, unless it is
  // the incumbent of a re-probe (an incumbent is compared, not set aside) or
  // the probe began because the set moved (the move was seen, whether or not
  // the set moves again during the probe). A cost model may still skip it
  // there, on its prediction (pass_over_arms).
  bool deferrable(Arm arm) const
  {
    return defer_ && arm == Arm::scheduled && !set_moved_probe_ &&
           !(!report_.decisions.empty() && report_.active == Arm::scheduled);
  }

  // Whether the probe counts the tiles that entering columns open: the
  // scheduled arm may be deferred and its turn is still to come.
  bool jump_pending() const
  {
    if (!(jump_share_ <= 1) || !deferrable(Arm::scheduled))
      return false;
    for (std::size_t i = position_ + 1; i < order_.size(); ++i)
      if (order_[i] == Arm::scheduled)
        return true;
    return false;
  }

  // Before the block of order_[position_]: while no rank's set has moved
  // over the probe, the scheduled arm goes behind the other arms (once), and
  // when its turn comes again after at least one pair of steps on the same
  // set it is deferred. With a model, an arm whose prediction on the latest
  // step exceeds model_margin times the lowest cost completed so far is
  // skipped, and the arms still to run go in order of their predictions
  // (unless the deferral still waits to see a set move: then it orders
  // them), so that the arm predicted cheapest is measured before a dearer
  // one is weighed against it. The predictions are the combined ones: every
  // rank orders alike.
  void pass_over_arms()
  {
    while (position_ < order_.size())
    {
      bool const deferral_pending = deferrable(Arm::scheduled) && moved_pairs_ == 0;
      if (model_ && position_ > 0 && !deferral_pending)
        // an insertion sort, ties in the given order (no buffer allocated)
        for (std::size_t i = position_ + 1; i < order_.size(); ++i)
          for (std::size_t j = i;
               j > position_ && by_prediction(order_[j]) < by_prediction(order_[j - 1]);
               --j)
            std::swap(order_[j], order_[j - 1]);
      Arm const arm = order_[position_];
      std::size_t const a = std::size_t(arm);
      if (deferrable(arm) && moved_pairs_ == 0)
      {
        if (!requeued_ && position_ + 1 < order_.size())
        {
          std::rotate(order_.begin() + std::ptrdiff_t(position_),
                      order_.begin() + std::ptrdiff_t(position_) + 1, order_.end());
          requeued_ = true;
          continue;
        }
        if (pairs_ > 0)
        {
          pending_.scheduled_deferred = true;
          pending_.same_set_steps = pairs_ + 1;
          ++position_;
          continue;
        }
        // nothing seen yet (it is the only arm left to run): run it
      }
      if (deferrable(arm) && pairs_ > 0 && opened_share_ / double(pairs_) >= jump_share_)
      {
        pending_.scheduled_jumping = true;
        pending_.jump_share = opened_share_ / double(pairs_);
        pending_.jump_pairs = pairs_;
        ++position_;
        continue;
      }
      // No prediction (NaN), no completed cost (inf) or a completed cost a
      // coarse clock read as 0 runs it.
      if (!(position_ > 0 && best_complete_ > 0 &&
            predicted_[a] > model_margin_ * best_complete_))
        return;
      pending_.skipped[a] = true;
      pending_.skip_us[a] = 1e6 * predicted_[a];
      pending_.skip_bound_us = 1e6 * best_complete_;
      pending_.model_margin = model_margin_;
      ++position_;
    }
  }

  // An arm's prediction as a sort key: none (NaN) goes last.
  double by_prediction(Arm arm) const
  {
    double const p = predicted_[std::size_t(arm)];
    return std::isnan(p) ? std::numeric_limits<double>::infinity() : p;
  }

  // The predictions of a timed step, each the slowest rank's (NaN: none).
  void take_predictions(double const *combined)
  {
    for (std::size_t a = 0; a < distributed_arm_count; ++a)
      predicted_[a] = combined && combined[a] > 0 && std::isfinite(combined[a])
                          ? combined[a]
                          : std::numeric_limits<double>::quiet_NaN();
  }

  // A settled sample's predictions: the active arm predicted dearer than
  // model_margin times another arm, on shift_samples samples in a row (each confirmed on
  // the next step), starts a re-probe; true then.
  bool predicted_shift()
  {
    double const active = predicted_[std::size_t(report_.active)];
    Arm best = report_.active;
    for (Arm a : arms_)
      if (predicted_[std::size_t(a)] < predicted_[std::size_t(best)])
        best = a;
    if (!(best != report_.active &&
          model_margin_ * predicted_[std::size_t(best)] < active))
    {
      predicted_flips_ = 0;
      return false;
    }
    confirming_ = true;
    if (++predicted_flips_ < shift_samples_)
      return false;
    start_probe("predicted " + std::string(to_string(best)) + ' ' +
                    std::to_string(1e6 * predicted_[std::size_t(best)]) + " us vs " +
                    to_string(report_.active) + ' ' + std::to_string(1e6 * active) +
                    " us",
                arms_);
    return true;
  }

  // The next step is a settled sample (so this one keeps its ids for it).
  bool sample_follows() const
  {
    if (sample_period_ == 0)
      return false;
    std::int64_t const s = settled_ + 1 - warmup_;
    return s >= 0 && (s + 1) % sample_period_ == 0;
  }

  // The probe's last step: the arm with the lowest mean combined step time
  // among those it ran (a re-probe keeps the active arm unless another is
  // cheaper by more than the switch margin).
  void decide()
  {
    DistributedDecision d = std::move(pending_);
    d.step = report_.steps;
    std::array<double, distributed_arm_count> cost;
    cost.fill(std::numeric_limits<double>::infinity());
    bool found = false;
    Arm best = order_.front();
    for (Arm a : order_)
    {
      std::size_t const i = std::size_t(a);
      if ((a == Arm::scheduled && (d.scheduled_deferred || d.scheduled_jumping)) ||
          d.skipped[i])
        continue; // not run: no cost, not chosen
      d.us_per_step[i] = 1e6 * sum_[i] / double(d.measured_steps[i]);
      if (d.cut[i])
        continue; // not chosen; its cost stays infinite for the margin rule
      cost[i] = sum_[i] / measure_;
      if (!found || cost[i] < cost[std::size_t(best)])
        best = a;
      found = true;
    }
    Arm const active = report_.active;
    bool const reprobe = !report_.decisions.empty();
    if (reprobe && std::isfinite(cost[std::size_t(active)]) &&
        !(cost[std::size_t(best)] < (1 - margin_) * cost[std::size_t(active)]))
      best = active; // within the switch margin: keep it
    if (reprobe && best != active)
      period_ = recheck_min_; // a change resets the back-off
    d.chosen = best;
    watching_ = d.scheduled_deferred;
    for (std::size_t a = 0; a < distributed_arm_count; ++a)
      d.predicted_us_per_step[a] = 1e6 * predicted_[a];
    report_.active = best;
    report_.probing = false;
    reference_ = cost[std::size_t(best)];
    report_.decisions.push_back(std::move(d));
    settled_ = 0;
    shifted_ = 0;
    predicted_flips_ = 0;
    confirming_ = false;
  }

  // A settled step's combined time against the decision's cost; true when
  // it started a probe.
  bool sample(double combined_seconds)
  {
    if (combined_seconds > 0 && combined_seconds > shift_ratio_ * reference_)
    {
      confirming_ = true;
      if (++shifted_ >= shift_samples_)
      {
        start_probe("step time " + std::to_string(1e6 * combined_seconds) + " us vs " +
                        std::to_string(1e6 * reference_) + " us at decision",
                    arms_);
        return true;
      }
      return false;
    }
    shifted_ = 0;
    confirming_ = false;
    return false;
  }

  bool is_sample() const
  {
    if (sample_period_ == 0)
      return false;
    if (confirming_)
      return true;
    std::int64_t const s = settled_ - warmup_; // catch-up steps are not sampled
    return s >= 0 && (s + 1) % sample_period_ == 0;
  }

  template <class Arms>
  void start_probe(std::string reason, Arms const &order, bool set_moved = false)
  {
    report_.probing = true;
    set_moved_probe_ = set_moved;
    order_.assign(std::begin(order), std::end(order));
    position_ = 0;
    begin_block();
    probe_step_ = 0;
    pairs_ = 0;
    moved_pairs_ = 0;
    opened_share_ = 0;
    requeued_ = false;
    watching_ = false;
    sum_.fill(0);
    best_complete_ = std::numeric_limits<double>::infinity();
    pending_ = DistributedDecision{};
    pending_.probe_start = report_.steps;
    pending_.reason = std::move(reason);
    pass_over_arms();
  }

  std::vector<Arm> arms_;
  int warmup_;
  int measure_;
  int settle_max_;
  double cut_ratio_;
  double margin_;
  std::int64_t sample_period_;
  double shift_ratio_;
  int shift_samples_;
  std::int64_t recheck_min_;
  std::int64_t recheck_max_;
  bool defer_;
  double jump_share_;
  bool model_;
  double model_margin_;
  std::int64_t period_;

  DistributedAdaptiveReport report_;
  DistributedDecision pending_;
  std::vector<Arm> order_;   // this probe's arms, in the order they run
  std::size_t position_ = 0; // order_[position_] runs now
  std::int64_t block_step_ = 0;
  std::int64_t settle_granted_ = 0; // further warm-up steps of this block (may_settle)
  double block_last_ = std::numeric_limits<double>::quiet_NaN(); // its step before
  std::int64_t probe_step_ = 0;
  std::int64_t pairs_ = 0;       // probe steps compared with the one before
  std::int64_t moved_pairs_ = 0; // of which on a set that moved on some rank
  double opened_share_ = 0;      // their opened tiles per column, summed (jump_pending)
  bool requeued_ = false;        // the scheduled arm went behind the others
  bool set_moved_probe_ = false; // this probe began because the set moved
  bool watching_ = false;        // settled after a deferral: samples compare the set
  std::array<double, distributed_arm_count> sum_{}; // combined measured seconds
  // The lowest cost of an arm of this probe that completed its measured steps.
  double best_complete_ = std::numeric_limits<double>::infinity();
  double reference_ = 0;
  std::int64_t settled_ = 0;
  int shifted_ = 0;
  bool confirming_ = false;
  // The latest timed step's combined predictions (seconds; NaN: none), and
  // samples in a row that put the active arm above model_margin x another.
  std::array<double, distributed_arm_count> predicted_ = {
      std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN(),
      std::numeric_limits<double>::quiet_NaN()};
  int predicted_flips_ = 0;
};

} // namespace detail
} // namespace hst
