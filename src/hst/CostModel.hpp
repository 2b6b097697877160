#pragma once
// The adaptive session's cost model (issue 14): each arm's time per step
// predicted from counters of the workload that are known on the host
// without running the arm, with per-machine constants (measured once per
// process by Operator::calibrate, or saved and loaded as text), refined by
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
// Refinement: each arm's prediction is multiplied by a scale, the ratio of
// the arm's measured to its predicted time over its timed steps (older
// steps weigh less by `forget` per step), so that a model whose constants
// are off by a common factor for this operator still ranks the arms by what
// they measured, and an arm never timed keeps its calibrated prediction.

#include <hst/Options.hpp>

#include <array>
#include <cstddef>

namespace hst
{

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
    auto const &k = constants_.arm[std::size_t(arm)];
    double t = k.fixed + k.per_entry * c.entries;
    switch (arm)
    {
    case Arm::exact_set:
      t += c.set_changed ? k.per_update * c.entries : 0;
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

  /// The measured over the predicted time of the arm's timed steps (1 before
  /// any).
  double scale(Arm arm) const
  {
    std::size_t const a = std::size_t(arm);
    return predicted_[a] > 0 ? measured_[a] / predicted_[a] : 1.0;
  }

  /// A timed step of `arm` with counters `c` took `seconds`.
  void observe(Arm arm, StepCounters const &c, double seconds)
  {
    std::size_t const a = std::size_t(arm);
    double const p = raw(arm, c);
    if (!(p > 0) || !(seconds >= 0))
      return; // an uncalibrated arm, or a clock that went backwards
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

} // namespace hst
