#pragma once

#include <hst/AdaptiveSession.hpp>
#include <hst/ExactSetArm.hpp>
#include <hst/Options.hpp>
#include <hst/ScatterArm.hpp>
#include <hst/ScheduledArm.hpp>
#include <hst/detail/OperatorData.hpp>

#include <KokkosSparse_CrsMatrix.hpp>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <functional>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace hst
{

/// A fixed sparse operator A (n_rows x n_cols, any shape) prepared once for
/// many delta applies y += A[:, cols] * dx. Construction copies A by columns
/// and builds the tile index (see OperatorOptions); A itself is not kept. The
/// arms it makes share this preparation and may outlive the Operator.
template <class Scalar, class Ordinal, class MemorySpace>
class Operator
{
public:
  using memory_space = MemorySpace;
  using value_type = Scalar;
  using ordinal_type = Ordinal;

  template <class ExecutionSpace, class S, class O, class D, class M, class Size>
  Operator(ExecutionSpace const &space,
           KokkosSparse::CrsMatrix<S, O, D, M, Size> const &A,
           OperatorOptions const &options = {})
      : data_(std::make_shared<data_type const>(space, A, options))
  {
    static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                  "hst::Operator(space, A): 'space' must be an execution space");
  }

  template <class S, class O, class D, class M, class Size>
  explicit Operator(KokkosSparse::CrsMatrix<S, O, D, M, Size> const &A,
                    OperatorOptions const &options = {})
      : Operator(typename MemorySpace::execution_space{}, A, options)
  {}

  Ordinal num_rows() const { return data_->n_rows; }
  Ordinal num_cols() const { return data_->n_cols; }
  std::size_t nnz() const { return data_->nnz; }
  OperatorOptions const &options() const { return data_->options; }
  TileStats const &tile_stats() const { return data_->stats; }

  /// Scheduled arm for batch width B, its schedule compiled for the column
  /// tiles of `expected_cols` (a rank-1 View of column ids, any memory space;
  /// may be empty).
  template <class ExecutionSpace, class Cols>
  ScheduledArm<Scalar, Ordinal, MemorySpace>
  session(ExecutionSpace const &space, Cols const &expected_cols, int B = 8,
          SessionOptions const &options = {}) const
  {
    static_assert(Kokkos::is_view<Cols>::value && Cols::rank == 1 &&
                      std::is_same_v<typename Cols::non_const_value_type, Ordinal>,
                  "hst::Operator::session: 'expected_cols' must be a rank-1 View "
                  "of the operator's Ordinal type");
    auto const host =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, expected_cols);
    std::vector<Ordinal> cols(host.data(), host.data() + host.extent(0));
    return {space, data_, cols, B, options};
  }

  template <class Cols>
  ScheduledArm<Scalar, Ordinal, MemorySpace>
  session(Cols const &expected_cols, int B = 8, SessionOptions const &options = {}) const
  {
    return session(typename MemorySpace::execution_space{}, expected_cols, B, options);
  }

  /// Exact-set arm for batch width B.
  ExactSetArm<Scalar, Ordinal, MemorySpace> baseline(int B = 8) const
  {
    return {data_, B};
  }

  /// Direct-scatter arm for batch width B.
  ScatterArm<Scalar, Ordinal, MemorySpace> scatter(int B = 8) const { return {data_, B}; }

  /// Adaptive session for batch width B: holds the three arms (the scheduled
  /// one compiled for `expected_cols`, as in session()) and chooses among
  /// them on the caller's steps (see AdaptiveSession.hpp). Throws
  /// std::invalid_argument naming the field of bad options.
  template <class ExecutionSpace, class Cols>
  AdaptiveSession<Scalar, Ordinal, MemorySpace>
  adaptive(ExecutionSpace const &space, Cols const &expected_cols, int B = 8,
           AdaptiveOptions const &options = {}) const
  {
    static_assert(Kokkos::is_view<Cols>::value && Cols::rank == 1 &&
                      std::is_same_v<typename Cols::non_const_value_type, Ordinal>,
                  "hst::Operator::adaptive: 'expected_cols' must be a rank-1 View "
                  "of the operator's Ordinal type");
    auto const host =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, expected_cols);
    std::vector<Ordinal> cols(host.data(), host.data() + host.extent(0));
    return AdaptiveSession<Scalar, Ordinal, MemorySpace>(space, data_, cols, B, options);
  }

  template <class Cols>
  AdaptiveSession<Scalar, Ordinal, MemorySpace>
  adaptive(Cols const &expected_cols, int B = 8,
           AdaptiveOptions const &options = {}) const
  {
    return adaptive(typename MemorySpace::execution_space{}, expected_cols, B, options);
  }

  /// Measures the cost model's constants (CostModel.hpp) on this operator
  /// for batch width B, in a few milliseconds: each arm runs, every step
  /// fenced on `space` and timed with `clock`, a frozen set of k columns
  /// (k = max(64, 0.3% of the columns), at most half of them) and one of
  /// k / 2 (the two give its fixed and per-entry costs), then two sets that
  /// differ by a quarter in turn (the update cost); each of these nine runs
  /// is timed in three rounds, interleaved over the arms, and its fastest
  /// round kept. The sets are runs of
  /// the locality order from its middle, like a drifting changed set. Pass
  /// the result as AdaptiveOptions::model, or save it (CostConstants::save)
  /// for later processes on this machine. Allocates k x B and n_rows x B
  /// workspaces. An operator with fewer than 8 columns gives zeros.
  template <class ExecutionSpace>
  CostConstants calibrate(ExecutionSpace const &space, int B = 8,
                          std::function<double()> const &clock = steady_seconds) const
  {
    static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                  "hst::Operator::calibrate: 'space' must be an execution space");
    if (B <= 0)
      detail::throw_invalid("hst::Operator::calibrate: argument 'B' must be positive, "
                            "got ",
                            B);
    if (!clock)
      detail::throw_invalid("hst::Operator::calibrate: argument 'clock' must be "
                            "callable, got an empty function");
    CostConstants constants;
    std::size_t const n = std::size_t(data_->n_cols);
    if (n < 8)
      return constants;
    std::size_t const k =
        std::min(n / 2, std::max<std::size_t>(64, std::size_t(0.003 * double(n))));
    // Columns at locality positions [p, p + count).
    auto run = [&](std::size_t p, std::size_t count) {
      std::vector<Ordinal> cols;
      cols.reserve(count);
      for (std::size_t c = 0; c < n; ++c)
      {
        std::size_t const q = data_->locality_position(Ordinal(c));
        if (q >= p && q < p + count)
          cols.push_back(Ordinal(c));
      }
      return cols;
    };
    std::size_t const p0 = (n - k) / 2;
    auto const full = run(p0, k), half = run(p0, k / 2), moved = run(p0 + k / 4, k);
    auto entries = [&](std::vector<Ordinal> const &cols) {
      double e = 0;
      for (Ordinal c : cols)
        e += double(data_->csc_host.col_ptr(std::size_t(c) + 1) -
                    data_->csc_host.col_ptr(std::size_t(c)));
      return e;
    };
    double changed = 0; // entries of the columns in one of full, moved only
    for (auto const *pair : {&full, &moved})
      for (Ordinal c : *pair)
      {
        auto const &other = pair == &full ? moved : full;
        if (!std::binary_search(other.begin(), other.end(), c))
          changed += entries({c});
      }
    using ColsView = Kokkos::View<Ordinal *, MemorySpace>;
    auto to_view = [&](std::vector<Ordinal> const &cols) {
      ColsView v(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                    "hst::Operator::calibrate::cols"),
                 cols.size());
      auto h = Kokkos::create_mirror_view(v);
      std::copy(cols.begin(), cols.end(), h.data());
      Kokkos::deep_copy(space, v, h);
      return v;
    };
    ColsView const v_full = to_view(full), v_half = to_view(half),
                   v_moved = to_view(moved);
    using DxView = Kokkos::View<Scalar **, Kokkos::LayoutLeft, MemorySpace>;
    auto make_dx = [&](std::size_t rows) {
      DxView dx(Kokkos::view_alloc(space, "hst::Operator::calibrate::dx"), rows,
                std::size_t(B));
      Kokkos::deep_copy(space, dx, Scalar(1e-3));
      return dx;
    };
    DxView const dx_full = make_dx(full.size()), dx_half = make_dx(half.size()),
                 dx_moved = make_dx(moved.size());
    DxView const y(Kokkos::view_alloc(space, "hst::Operator::calibrate::y"),
                   std::size_t(data_->n_rows), std::size_t(B));
    // Each of the nine (arm, set) runs is timed `rounds` times, the rounds
    // interleaved over the arms, and keeps its fastest round: the fit takes
    // differences of these times, and one run of 16 steps each (before
    // 2026-12-06) gave constants that varied up to 7x between calls on the
    // same operator (a preempted step, a slow phase of the machine).
    int const steps = 8, rounds = 3;
    // Seconds per step of `arm` over `steps` steps on sets a, b, a, b, ...
    // after two untimed steps.
    auto per_step = [&](auto &arm, ColsView const &a, DxView const &dx_a,
                        ColsView const &b, DxView const &dx_b) {
      auto step = [&](int s) {
        arm.apply_cols(space, s % 2 ? b : a, s % 2 ? dx_b : dx_a, y);
        kokkos_ext::fence(space, "hst::calibrate"); // each step timed alone
      };
      step(0);
      step(1);
      double const start = clock();
      for (int s = 0; s < steps; ++s)
        step(s);
      return (clock() - start) / steps;
    };
    double const e_full = entries(full), e_half = entries(half);
    constexpr double inf = std::numeric_limits<double>::infinity();
    // t[arm] = {frozen on full, frozen on half, full and moved in turn}
    std::array<std::array<double, 3>, 3> t;
    for (auto &times : t)
      times.fill(inf);
    auto time_arm = [&](auto &arm, Arm which) {
      auto &times = t[std::size_t(which)];
      times[0] = std::min(times[0], per_step(arm, v_full, dx_full, v_full, dx_full));
      times[1] = std::min(times[1], per_step(arm, v_half, dx_half, v_half, dx_half));
      times[2] = std::min(times[2], per_step(arm, v_full, dx_full, v_moved, dx_moved));
    };
    kokkos_ext::fence(space, "hst::calibrate"); // the sets and dx are ready
    auto scatter_arm = scatter(B);
    auto exact_arm = baseline(B);
    auto scheduled_arm = session(space, v_full, B);
    for (int r = 0; r < rounds; ++r)
    {
      time_arm(scatter_arm, Arm::scatter);
      time_arm(exact_arm, Arm::exact_set);
      time_arm(scheduled_arm, Arm::scheduled);
    }
    for (Arm which : {Arm::scatter, Arm::exact_set, Arm::scheduled})
    {
      auto const &times = t[std::size_t(which)];
      ArmCost &c = constants.arm[std::size_t(which)];
      c.per_entry = e_full > e_half
                        ? std::max(0.0, (times[0] - times[1]) / (e_full - e_half))
                        : 0.0;
      c.fixed = std::max(0.0, times[0] - c.per_entry * e_full);
      double const extra = std::max(0.0, times[2] - times[0]);
      if (which == Arm::exact_set)
        c.per_update = e_full > 0 ? extra / e_full : 0.0;
      else if (which == Arm::scheduled)
        c.per_update = changed > 0 ? extra / changed : 0.0;
    }
    return constants;
  }

private:
  // Checks a rank's expected columns with this operator's column stamps.
  template <class, class, class>
  friend class DistributedOperator;
  // Reads the column lengths and the column stamps for its cost model.
  template <class, class, class>
  friend class DistributedAdaptiveSession;
  using data_type = detail::OperatorData<Scalar, Ordinal, MemorySpace>;
  std::shared_ptr<data_type const> data_;
};

template <class S, class O, class D, class M, class Size>
Operator(KokkosSparse::CrsMatrix<S, O, D, M, Size> const &)
    -> Operator<std::remove_const_t<S>, std::remove_const_t<O>, typename D::memory_space>;
template <class S, class O, class D, class M, class Size>
Operator(KokkosSparse::CrsMatrix<S, O, D, M, Size> const &, OperatorOptions const &)
    -> Operator<std::remove_const_t<S>, std::remove_const_t<O>, typename D::memory_space>;
template <class ExecutionSpace, class S, class O, class D, class M, class Size>
Operator(ExecutionSpace const &, KokkosSparse::CrsMatrix<S, O, D, M, Size> const &)
    -> Operator<std::remove_const_t<S>, std::remove_const_t<O>, typename D::memory_space>;
template <class ExecutionSpace, class S, class O, class D, class M, class Size>
Operator(ExecutionSpace const &, KokkosSparse::CrsMatrix<S, O, D, M, Size> const &,
         OperatorOptions const &)
    -> Operator<std::remove_const_t<S>, std::remove_const_t<O>, typename D::memory_space>;

} // namespace hst
