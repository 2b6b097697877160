#pragma once
// The distributed adaptive session's policy: which arm runs at each step,
// which steps are timed, and what to choose from the costs combined over the
// ranks. Plain C++: numbers in, decisions out, no MPI, no Kokkos, no clock.
// Every input that changes a decision is a combined (rank-wide) number or a
// step count, so every rank that feeds it the same combined numbers makes the
// same decisions at the same steps.

#include <hst/Options.hpp>
#include <hst/detail/InputCheck.hpp>

#include <array>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
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
  /// A re-probe replaces the active arm only if another arm's cost is lower
  /// by more than this fraction of the active arm's. In [0, 1).
  double switch_margin = 0.05;
  /// Settled steps per timed sample of the active arm (after warmup_steps
  /// catch-up steps); 0: no samples. A sample costs two fences, two clock
  /// reads and one MPI_Allreduce of a double. >= 0.
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
}

// The numbers of the options that change how many collectives a step calls,
// for checking that every rank passed the same.
inline std::vector<double> collective_shape(DistributedAdaptiveOptions const &o)
{
  std::vector<double> shape = {double(o.warmup_steps),   double(o.measure_steps),
                               o.switch_margin,          double(o.sample_period),
                               o.time_shift_ratio,       double(o.shift_samples),
                               double(o.recheck_period), double(o.recheck_max_period)};
  for (Arm a : o.arms)
    shape.push_back(double(a));
  return shape;
}

// The step-by-step plan. Usage per step: plan() tells the arm and whether
// the step is timed; the session runs it, and for a timed step reduces this
// rank's time with MAX over the ranks (the step is as slow as its slowest
// rank); then finish(combined seconds; ignored for an untimed step). Every
// number that reaches a decision is such a combined time or a step count.
class LockstepPolicy
{
public:
  struct Step
  {
    Arm arm;
    bool timed;
  };

  explicit LockstepPolicy(DistributedAdaptiveOptions const &options)
      : arms_(options.arms)
      , warmup_(options.warmup_steps)
      , measure_(options.measure_steps)
      , margin_(options.switch_margin)
      , sample_period_(options.sample_period)
      , shift_ratio_(options.time_shift_ratio)
      , shift_samples_(options.shift_samples)
      , recheck_min_(options.recheck_period)
      , recheck_max_(options.recheck_max_period)
      , period_(options.recheck_period)
  {
    report_.active = arms_.front();
    start_probe("initial probe");
  }

  Step plan() const
  {
    if (report_.probing)
      return {arms_[std::size_t(probe_step_ / block())], true};
    return {report_.active, is_sample()};
  }

  void finish(double combined_seconds)
  {
    Step const step = plan();
    ++report_.steps;
    ++report_.arm_steps[std::size_t(step.arm)];
    if (report_.probing)
    {
      ++report_.probe_steps;
      report_.probe_seconds += combined_seconds;
      if (probe_step_ % block() >= warmup_)
        sum_[std::size_t(step.arm)] += combined_seconds;
      if (++probe_step_ == block() * std::int64_t(arms_.size()))
        decide();
      return;
    }
    ++settled_;
    if (step.timed)
    {
      ++report_.sampled_steps;
      if (sample(combined_seconds))
        return;
    }
    if (recheck_min_ > 0 && settled_ >= period_)
    {
      period_ = std::min(2 * period_, recheck_max_);
      start_probe("periodic re-check");
    }
  }

  /// Starts a probe at the next step (call on every rank at the same step).
  void reprobe() { start_probe("reprobe() requested"); }

  DistributedAdaptiveReport const &report() const { return report_; }

private:
  std::int64_t block() const { return std::int64_t(warmup_) + measure_; }

  // The probe's last step: the arm with the lowest mean combined step time
  // (a re-probe keeps the active arm unless another is cheaper by more than
  // the switch margin).
  void decide()
  {
    DistributedDecision d = std::move(pending_);
    d.step = report_.steps;
    std::array<double, distributed_arm_count> cost;
    cost.fill(std::numeric_limits<double>::infinity());
    Arm best = arms_.front();
    for (Arm a : arms_)
    {
      cost[std::size_t(a)] = sum_[std::size_t(a)] / measure_;
      d.us_per_step[std::size_t(a)] = 1e6 * cost[std::size_t(a)];
      if (cost[std::size_t(a)] < cost[std::size_t(best)])
        best = a;
    }
    Arm const active = report_.active;
    bool const reprobe = !report_.decisions.empty();
    if (reprobe && std::isfinite(cost[std::size_t(active)]) &&
        !(cost[std::size_t(best)] < (1 - margin_) * cost[std::size_t(active)]))
      best = active; // within the switch margin: keep it
    if (reprobe && best != active)
      period_ = recheck_min_; // a change resets the back-off
    d.chosen = best;
    report_.active = best;
    report_.probing = false;
    reference_ = cost[std::size_t(best)];
    report_.decisions.push_back(std::move(d));
    settled_ = 0;
    shifted_ = 0;
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
                    std::to_string(1e6 * reference_) + " us at decision");
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

  void start_probe(std::string reason)
  {
    report_.probing = true;
    probe_step_ = 0;
    sum_.fill(0);
    pending_ = DistributedDecision{};
    pending_.probe_start = report_.steps;
    pending_.reason = std::move(reason);
  }

  std::vector<Arm> arms_;
  int warmup_;
  int measure_;
  double margin_;
  std::int64_t sample_period_;
  double shift_ratio_;
  int shift_samples_;
  std::int64_t recheck_min_;
  std::int64_t recheck_max_;
  std::int64_t period_;

  DistributedAdaptiveReport report_;
  DistributedDecision pending_;
  std::int64_t probe_step_ = 0;
  std::array<double, distributed_arm_count> sum_{}; // combined measured seconds
  double reference_ = 0;
  std::int64_t settled_ = 0;
  int shifted_ = 0;
  bool confirming_ = false;
};

} // namespace detail
} // namespace hst
