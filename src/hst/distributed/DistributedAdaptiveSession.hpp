#pragma once
// Distributed adaptive session: the three distributed arms, run in lockstep
// on every rank, one arm per step, the same arm on every rank.
//
// A probe runs each allowed arm (DistributedAdaptiveOptions::arms, in order)
// for warmup_steps + measure_steps consecutive steps (a re-probe's scheduled
// arm may warm up longer: below), each timed on every
// rank (fence the caller's instance, read the clock, apply with the exchange,
// fence, read the clock) and combined at once with one MPI_Allreduce (MAX: a
// step is as slow as its slowest rank). An arm whose measured steps so far
// average more than cut_ratio times the cost of an arm that completed its
// measured steps in the same probe is cut: its block ends at once and it is
// not chosen. After the probe's last step every rank takes the arm with the
// lowest mean combined time over its measured steps among those not cut (a
// re-probe keeps the active arm unless another is cheaper by more than
// switch_margin, and cuts it only at a ratio the margin would not keep).
// In a re-probe on a set that moved, a scheduled arm that is not the
// incumbent catches up on the steps it missed, and its steps may fall for a
// few steps more: its block takes up to scheduled_settle_steps further
// warm-up steps while each combined step time falls below 0.9x the one
// before it (as AdaptiveSession does with its own times).
// Settled steps run the chosen arm with nothing added but a switch, except
// sampled steps (every sample_period-th), which are timed and combined the
// same way; shift_samples combined samples in a row above time_shift_ratio
// times the decision's cost start a re-probe, and a periodic re-check
// (backed off while it keeps the arm) starts one too.
//
// Deferral (DistributedAdaptiveOptions::defer_scheduled): each probe step
// after the first compares this rank's column ids with the previous step's
// (O(k), on the host, from the ids the arm checked), and the flag is
// combined (MAX) in the same MPI_Allreduce as the step's time. While no rank
// has seen its set move, the scheduled arm goes behind the other arms, and
// when its turn comes on a set that has not moved it is deferred: not run,
// not made, not chosen (its gain is re-planning changed columns; its making
// costs an exchange of ids and a compile). The samples of a decision that
// deferred it compare the ids with the probe's last step's, combined the
// same way, and a move on any rank starts a re-probe of the active arm and
// the scheduled arm at the next step.
// A set that jumps defers it too (DistributedAdaptiveOptions::
// defer_jump_share): until its turn, each probe step whose set changed on a
// rank counts there the column tiles that its entering columns open, and
// the step's MPI_Allreduce carries the largest count and the largest column
// count of a rank; at a mean ratio of defer_jump_share or more over the
// probe's pairs of steps it is deferred, and nothing watches for motion.
//
// Which steps are probed, sampled or decided depends only on the step count
// and on combined numbers, so every rank runs the same arm, calls the same
// collectives and writes the same report. The decisions are made by
// detail::LockstepPolicy.
//
// Making the session (issue 14) checks the options and the expected columns
// and keeps the columns' local ids; each arm is made at the first step that
// runs it, before that step's clock is read, on every rank at the same step
// (the scheduled one then exchanges the expected ids with the neighbours,
// compiles for them and plans them), so an arm the probe never reaches is
// never made and nothing of the operator's size is allocated or visited.
//
// Cost model (DistributedAdaptiveOptions::model): each timed step whose
// previous step kept its ids counts, on this rank, the entries of the local
// A[:, S] over the owned and the received columns and the entries of the
// columns that entered or left that set (O(k + received) with the local
// operator's column stamps), refines the arm's prediction with this rank's
// time for the step, and sends every arm's prediction in the step's
// MPI_Allreduce; the policy skips and re-probes on the combined ones.
//
// Differences from the single-rank AdaptiveSession, on purpose: costs are
// per step (the slowest rank's), not per entry, since the entries of a step
// differ by rank and the slowest rank sets the pace; the probe is one round
// (no fastest-first second round), and there is no compile-rate detector,
// whose per-rank signals would need a collective every window.

#include <hst/CostModel.hpp>
#include <hst/ExactSetArm.hpp>
#include <hst/ScatterArm.hpp>
#include <hst/ScheduledArm.hpp>
#include <hst/distributed/DistributedArm.hpp>
#include <hst/distributed/detail/LockstepPolicy.hpp>
#include <hst/kokkos_ext/Compat.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <tuple>
#include <utility>
#include <vector>

namespace hst
{

inline std::ostream &operator<<(std::ostream &out, DistributedAdaptiveReport const &r)
{
  std::ostringstream s;
  s << std::fixed << std::setprecision(3);
  s << "hst::DistributedAdaptiveSession: " << (r.probing ? "probing, " : "") << "active "
    << to_string(r.active) << " after " << r.steps << " steps (";
  for (std::size_t a = 0; a < distributed_arm_count; ++a)
    s << (a ? ", " : "") << to_string(Arm(a)) << ' ' << r.arm_steps[a];
  s << ")\n  probing: " << r.probe_steps << " steps, " << 1e6 * r.probe_seconds
    << " us (slowest rank)\n";
  if (r.sampled_steps > 0)
    s << "  sampled: " << r.sampled_steps << " settled steps\n";
  for (auto const &d : r.decisions)
  {
    s << "  step " << d.step << ": " << to_string(d.chosen) << " (probed from step "
      << d.probe_start << ";";
    for (std::size_t a = 0; a < distributed_arm_count; ++a)
    {
      s << ' ' << to_string(Arm(a)) << ' ';
      if (std::isnan(d.us_per_step[a]))
        s << '-';
      else
        s << d.us_per_step[a] << " us/step";
      if (!std::isnan(d.predicted_us_per_step[a]))
        s << " (predicted " << d.predicted_us_per_step[a] << ')';
    }
    for (std::size_t a = 0; a < distributed_arm_count; ++a)
      if (d.skipped[a])
        s << "; " << to_string(Arm(a)) << " not probed (predicted " << d.skip_us[a]
          << " us/step > " << d.model_margin << " x " << d.skip_bound_us << ')';
    for (std::size_t a = 0; a < distributed_arm_count; ++a)
      if (d.settle_steps[a] > 0)
        s << "; " << to_string(Arm(a)) << " warmed up " << d.settle_steps[a]
          << " more step" << (d.settle_steps[a] == 1 ? "" : "s")
          << " while its steps fell";
    for (std::size_t a = 0; a < distributed_arm_count; ++a)
      if (d.cut[a])
        s << "; " << to_string(Arm(a)) << " cut after " << d.measured_steps[a]
          << " measured step" << (d.measured_steps[a] == 1 ? "" : "s");
    if (d.scheduled_deferred)
      s << "; scheduled deferred (the same set on " << d.same_set_steps << " steps)";
    if (d.scheduled_jumping)
      s << "; scheduled deferred (the set jumps: entering columns opened " << d.jump_share
        << " column tiles per column per step over " << d.jump_pairs << " pair"
        << (d.jump_pairs == 1 ? "" : "s") << " of steps)";
    s << ") " << d.reason << '\n';
  }
  return out << s.str();
}

/// Chooses among the three distributed arms on the caller's steps, every
/// rank the same arm at the same step (see the top of this file). Made by
/// DistributedOperator::adaptive.
template <class Scalar, class Ordinal, class MemorySpace>
class DistributedAdaptiveSession
{
public:
  using memory_space = MemorySpace;
  using value_type = Scalar;
  using ordinal_type = Ordinal;
  using data_type = detail::DistributedData<Scalar, Ordinal, MemorySpace>;

  /// Collective. `expected_owned` are local ids of owned columns, checked
  /// (distinct, in [0, n_owned)); `width` agrees across ranks.
  DistributedAdaptiveSession(std::shared_ptr<data_type const> data,
                             std::vector<Ordinal> expected_owned, int width,
                             DistributedAdaptiveOptions const &options)
      : data_(std::move(data))
      , expected_owned_(std::move(expected_owned))
      , width_(width)
      , session_options_(options.session)
      , clock_(options.clock)
      , policy_(options)
  {
    if (options.model)
      model_.emplace(*options.model);
    kept_ids_.reserve(expected_owned_.size());
    // Options that change the collectives a step calls must match.
    auto const mine = detail::collective_shape(options);
    auto root = mine;
    int count = int(root.size());
    MPI_Bcast(&count, 1, MPI_INT, 0, data_->comm.get());
    root.resize(std::size_t(count));
    MPI_Bcast(root.data(), count, MPI_DOUBLE, 0, data_->comm.get());
    detail::agree_on(data_->comm, "hst::DistributedOperator::adaptive", [&] {
      if (root != mine)
        detail::throw_invalid("argument 'options' differs from rank 0's (arms, step "
                              "counts, periods and ratios must match)");
    });
  }

  int width() const { return width_; }

  /// Collective: y_local += A[rows of this rank, cols] * dx, by the arm the
  /// ranks agreed on for this step; as DistributedArm::apply_cols.
  template <class ExecutionSpace, class Cols, class Dx, class Y>
  void apply_cols(ExecutionSpace const &space, Cols const &cols, Dx const &dx, Y const &y)
  {
    auto const step = policy_.plan();
    make(step.arm, space); // on every rank at the same step: it may exchange ids
    if (!step.timed)
    {
      run(step.arm, space, cols, dx, y);
      if (step.keep_counts)
        count_step(step.arm, cols.extent(0), false);
      policy_.finish(0);
      return;
    }
    // timing: earlier work is not this step's
    kokkos_ext::fence(space, "hst::timed_step");
    double const start = clock_();
    run(step.arm, space, cols, dx, y);
    kokkos_ext::fence(space, "hst::timed_step"); // timing: the step's kernels are done
    // This rank's time, whether its set moved, the column tiles its entering
    // columns opened and its column count (a step that counts them) and,
    // with a model, each arm's predicted time (-1: none), each the largest
    // over the ranks. NaN would combine differently on different ranks.
    constexpr int shared = 4; // the numbers before the predictions
    double combined[shared + distributed_arm_count] = {
        clock_() - start, 0, 0, 0, -1, -1, -1};
    if (std::isnan(combined[0]))
      combined[0] = std::numeric_limits<double>::infinity();
    if (step.keep_counts && count_step(step.arm, cols.extent(0), true))
    {
      if (step.measured) // a warm-up step's time is not the arm's steady cost
        model_->observe(step.arm, counters_, combined[0]);
      for (std::size_t a = 0; a < distributed_arm_count; ++a)
      {
        double const p = model_->predict_at(Arm(a), counters_.entries, churn_);
        combined[shared + a] =
            p > 0 && std::isfinite(p) ? p : -1; // NaN would not combine
      }
    }
    // The ids the arm checked: this rank's local ids, in the caller's order.
    std::size_t const k = cols.extent(0);
    Ordinal const *const ids = owned_ids(step.arm);
    if (step.compare_ids)
      combined[1] =
          k == kept_ids_.size() && std::equal(ids, ids + k, kept_ids_.begin()) ? 0 : 1;
    if (step.count_opened)
    {
      auto const &op = *data_->local.data_;
      if (combined[1] > 0)
        combined[2] =
            double(detail::opened_tiles(*op.scratch, kept_ids_, ids, k,
                                        [&](Ordinal c) { return op.column_tile_of(c); }));
      combined[3] = double(k);
    }
    if (step.keep_ids)
      kept_ids_.assign(ids, ids + k);
    // Collective: timed steps fall on the same steps on every rank, and
    // every rank has a model or none (checked when made).
    MPI_Allreduce(MPI_IN_PLACE, combined,
                  model_ ? shared + int(distributed_arm_count) : shared, MPI_DOUBLE,
                  MPI_MAX, data_->comm.get());
    policy_.finish(combined[0], combined[1] > 0, model_ ? combined + shared : nullptr,
                   combined[2], combined[3]);
  }

  template <class Cols, class Dx, class Y>
  void apply_cols(Cols const &cols, Dx const &dx, Y const &y)
  {
    apply_cols(default_space_, cols, dx, y);
  }

  /// The same on every rank.
  DistributedAdaptiveReport const &report() const { return policy_.report(); }
  /// Starts a probe at the next step. Collective in effect: call it on every
  /// rank before the same step.
  void reprobe() { policy_.reprobe(); }

  /// The held arms, or nullptr for an arm not run yet (never made).
  DistributedArm<ScheduledArm<Scalar, Ordinal, MemorySpace>> const *scheduled() const
  {
    return scheduled_ ? &*scheduled_ : nullptr;
  }
  DistributedArm<ExactSetArm<Scalar, Ordinal, MemorySpace>> const *exact_set() const
  {
    return exact_set_ ? &*exact_set_ : nullptr;
  }
  DistributedArm<ScatterArm<Scalar, Ordinal, MemorySpace>> const *scatter() const
  {
    return scatter_ ? &*scatter_ : nullptr;
  }

private:
  // Collective when it makes the scheduled arm (the ghost ids come from the
  // neighbours); every rank calls it with the same arm at the same step.
  template <class ExecutionSpace>
  void make(Arm arm, ExecutionSpace const &space)
  {
    auto const &local = data_->local;
    switch (arm)
    {
    case Arm::scheduled:
      if (!scheduled_)
      {
        auto [owned, ghost] =
            data_->local_sessions(space, expected_owned_, width_, session_options_);
        scheduled_.emplace(data_, width_, std::move(owned), std::move(ghost));
      }
      return;
    case Arm::exact_set:
      if (!exact_set_)
        exact_set_.emplace(data_, width_, local.baseline(width_), local.baseline(width_));
      return;
    case Arm::scatter:
      if (!scatter_)
        scatter_.emplace(data_, width_, local.scatter(width_), local.scatter(width_));
      return;
    }
  }

  // With a model, after a step of `arm` that the policy marked: its local
  // ids (owned, then received) are kept for the next step, and when `count`
  // and the previous step's were kept too, counters_ gets this step's
  // counters (true then). O(k + received) host work.
  bool count_step(Arm arm, std::size_t k, bool count)
  {
    Ordinal const *const owned = owned_ids(arm);
    auto const [ghost, g] = ghost_ids(arm);
    std::int64_t const step = policy_.report().steps; // this step's index
    bool const known = count && count_ids_step_ >= 0 && count_ids_step_ == step - 1;
    if (known)
    {
      auto const &op = *data_->local.data_;
      auto const &col_ptr = op.csc_host.col_ptr;
      counters_.set_changed =
          k + g != count_ids_.size() ||
          !std::equal(owned, owned + k, count_ids_.begin()) ||
          !std::equal(ghost, ghost + g, count_ids_.begin() + std::ptrdiff_t(k));
      std::tie(counters_.entries, counters_.changed_entries) = detail::set_change_entries(
          *op.scratch, count_ids_, {{owned, k}, {ghost, g}}, [&](Ordinal c) {
            return double(col_ptr(std::size_t(c) + 1) - col_ptr(std::size_t(c)));
          });
      churn_.add(counters_);
    }
    count_ids_.assign(owned, owned + k); // capacity kept: grows to the largest set
    count_ids_.insert(count_ids_.end(), ghost, ghost + g);
    count_ids_step_ = step;
    return known;
  }

  // The local ids of the owned columns that the arm checked at its latest
  // step.
  Ordinal const *owned_ids(Arm arm) const
  {
    switch (arm)
    {
    case Arm::scheduled:
      return scheduled_->owned_ids_.host();
    case Arm::exact_set:
      return exact_set_->owned_ids_.host();
    case Arm::scatter:
      break;
    }
    return scatter_->owned_ids_.host();
  }

  // The local ids of the ghost columns the arm applied at its latest step,
  // and how many.
  std::pair<Ordinal const *, std::size_t> ghost_ids(Arm arm) const
  {
    auto ids = [](auto const &a) {
      return std::pair<Ordinal const *, std::size_t>(a.ghost_ids_.host(), a.received_);
    };
    switch (arm)
    {
    case Arm::scheduled:
      return ids(*scheduled_);
    case Arm::exact_set:
      return ids(*exact_set_);
    case Arm::scatter:
      break;
    }
    return ids(*scatter_);
  }

  template <class ExecutionSpace, class Cols, class Dx, class Y>
  void run(Arm arm, ExecutionSpace const &space, Cols const &cols, Dx const &dx,
           Y const &y)
  {
    switch (arm)
    {
    case Arm::scheduled:
      scheduled_->apply_cols(space, cols, dx, y);
      return;
    case Arm::exact_set:
      exact_set_->apply_cols(space, cols, dx, y);
      return;
    case Arm::scatter:
      scatter_->apply_cols(space, cols, dx, y);
      return;
    }
  }

  std::shared_ptr<data_type const> data_;
  std::vector<Ordinal> expected_owned_; // local ids, checked
  // The ids of the latest probe step (so, settled, of the probe's last step),
  // to tell whether the set moved (DistributedAdaptiveOptions::defer_scheduled).
  std::vector<Ordinal> kept_ids_;
  int width_;
  SessionOptions session_options_;
  std::optional<DistributedArm<ScheduledArm<Scalar, Ordinal, MemorySpace>>> scheduled_;
  std::optional<DistributedArm<ExactSetArm<Scalar, Ordinal, MemorySpace>>> exact_set_;
  std::optional<DistributedArm<ScatterArm<Scalar, Ordinal, MemorySpace>>> scatter_;
  std::function<double()> clock_;
  detail::LockstepPolicy policy_;
  std::optional<CostModel> model_;
  // With a model: the local ids (owned, then received) of the latest step
  // that kept them, that step's index, and the latest counted step's
  // counters.
  std::vector<Ordinal> count_ids_;
  std::int64_t count_ids_step_ = -1;
  StepCounters counters_;
  Churn churn_; // over every counted step
  // The default instance, made once: on Kokkos 4 making one allocates.
  typename MemorySpace::execution_space default_space_;
};

} // namespace hst
