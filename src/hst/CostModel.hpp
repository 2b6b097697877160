#pragma once
// The adaptive session's cost model (issue 14): each arm's time per step
// predicted from counters of the workload that are known on the host
// without running the arm, with constants measured by Operator::calibrate
// on the operator they are used with (or saved and loaded as text), refined by
// every timed step of the arm. Plain C++: numbers in, numbers out.
//
// The arms' costs, in seconds per step (e: stored entries of A[:, S]; c: the
// entries of the columns that entered or left S since the previous step; a
// set compile happens when S differs from the previous step's at all):
//   scatter    fixed + per_entry * e
//   exact set  fixed + per_entry * e + (S changed ? per_update * e : 0)
//              (a recompile visits every entry of the set)
//   scheduled  fixed + per_entry * e + per_update * c
//              (a re-plan patches only the changed columns' pieces; tile
//              compiles come with entering columns, so they scale with c)
// Churn: the sessions rank and skip arms on the workload's churn, not on one
// step's (a set that changes on every other step made the exact-set arm look
// cheap on each sample that fell on a step without a change): Churn keeps an
// exponentially weighted rate of steps whose set changed and share of the
// entries that entered or left, and predict_at() weighs the exact-set arm's
// recompile by that rate and gives the scheduled arm that share of the
// step's entries.
// Refinement: each arm's prediction is multiplied by a scale, the ratio of
// the arm's measured to its predicted time over its timed steps (older
// steps weigh less by `forget` per step), so that a model whose constants
// are off by a common factor for this operator still ranks the arms by what
// they measured; an arm never timed takes the lowest ratio of a timed arm,
// so that its prediction is weighed against measured costs in the same
// units (measured: on the microsecond sweep's first steps, cold in cache,
// the arms ran 4-10x the calibrated constants, and a dear arm's raw
// prediction passed under every model_margin bound), with the most
// favourable correction any arm needed, so that a skip errs toward running
// the arm (the arms' ratios differ up to 2x: with their pooled ratio the
// quick suite's best arm was skipped in 28 more cases of 120).

#include <hst/Options.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>

namespace hst
{

class Churn;

/// Predicts each arm's seconds per step from StepCounters; refined by timed
/// steps (observe()).
class CostModel
{
public:
  CostModel() = default;
  explicit CostModel(CostConstants const &constants, double forget = 0.8)
      : constants_(constants)
      , forget_(forget)
  {}

  /// The constants' prediction, before refinement.
  double raw(Arm arm, StepCounters const &c) const
  {
    return raw_at(arm, c, c.set_changed ? 1.0 : 0.0);
  }

  /// The same, with the exact-set arm's recompile weighed by `change_rate`
  /// (the share of steps whose set changes) instead of this step's flag.
  double raw_at(Arm arm, StepCounters const &c, double change_rate) const
  {
    auto const &k = constants_.arm[std::size_t(arm)];
    double t = k.fixed + k.per_entry * c.entries;
    switch (arm)
    {
    case Arm::exact_set:
      t += change_rate * k.per_update * c.entries;
      break;
    case Arm::scheduled:
      t += k.per_update * c.changed_entries;
      break;
    case Arm::scatter:
      break;
    }
    return t;
  }

  /// Seconds per step predicted for `arm` on a step with counters `c`.
  double predict(Arm arm, StepCounters const &c) const
  {
    return scale(arm) * raw(arm, c);
  }

  /// Seconds per step predicted for `arm` on steps of `entries` entries at
  /// the churn `churn` has seen (with no churn seen yet: no change).
  double predict_at(Arm arm, double entries, Churn const &churn) const;

  /// The measured over the predicted time of the arm's timed steps; for an
  /// arm not timed yet, the lowest such ratio of a timed arm (the constants'
  /// error on this operator and machine, at its most favourable); 1 before
  /// any.
  double scale(Arm arm) const
  {
    std::size_t const a = std::size_t(arm);
    if (predicted_[a] > 0)
      return measured_[a] / predicted_[a];
    double lowest = std::numeric_limits<double>::infinity();
    for (std::size_t b = 0; b < predicted_.size(); ++b)
      if (predicted_[b] > 0)
        lowest = std::min(lowest, measured_[b] / predicted_[b]);
    return std::isfinite(lowest) ? lowest : 1.0;
  }

  /// A timed step of `arm` with counters `c` took `seconds`.
  void observe(Arm arm, StepCounters const &c, double seconds)
  {
    std::size_t const a = std::size_t(arm);
    double const p = raw(arm, c);
    if (!(p > 0) || !(seconds >= 0) || !std::isfinite(seconds))
      return; // an uncalibrated arm, or a clock that went backwards or broke
    measured_[a] = forget_ * measured_[a] + seconds;
    predicted_[a] = forget_ * predicted_[a] + p;
  }

  CostConstants const &constants() const { return constants_; }

private:
  CostConstants constants_;
  double forget_ = 0.8;
  std::array<double, 3> measured_{};
  std::array<double, 3> predicted_{};
};

/// The churn of the counted steps, exponentially weighted (each new step
/// weighs `weight`; the first one alone).
class Churn
{
public:
  explicit Churn(double weight = 0.5)
      : weight_(weight)
  {}

  /// A counted step.
  void add(StepCounters const &c)
  {
    double const changed = c.set_changed ? 1.0 : 0.0;
    double const share = c.entries > 0 ? c.changed_entries / c.entries : 0.0;
    double const w = seen_ ? weight_ : 1.0;
    change_rate_ += w * (changed - change_rate_);
    changed_share_ += w * (share - changed_share_);
    seen_ = true;
  }

  /// Share of the counted steps whose set changed.
  double change_rate() const { return change_rate_; }
  /// Share of a step's entries that entered or left its set.
  double changed_share() const { return changed_share_; }

private:
  double weight_;
  bool seen_ = false;
  double change_rate_ = 0;
  double changed_share_ = 0;
};

inline double CostModel::predict_at(Arm arm, double entries, Churn const &churn) const
{
  StepCounters c;
  c.entries = entries;
  c.changed_entries = churn.changed_share() * entries;
  c.set_changed = false;
  return scale(arm) * raw_at(arm, c, churn.change_rate());
}

} // namespace hst
