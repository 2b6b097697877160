#pragma once

#include <hst/detail/InputCheck.hpp>
#include <hst/detail/OperatorData.hpp>

#include <Kokkos_Core.hpp>

#include <memory>

namespace hst
{
template <class Scalar, class Ordinal, class MemorySpace>
class AdaptiveSession;
template <class LocalArm>
class DistributedArm;
} // namespace hst

namespace hst::detail
{

// What every arm shares: the operator it was made from, its batch width B, the
// input checks, and the two `apply_cols` overloads. `Arm` supplies
// `static constexpr char const *name` and
// `apply_checked(space, host_cols, cols, dx, y)`, called only on valid input.
template <class Arm, class Scalar, class Ordinal, class MemorySpace>
class ArmBase
{
public:
  using memory_space = MemorySpace;
  using value_type = Scalar;
  using ordinal_type = Ordinal;
  using data_type = OperatorData<Scalar, Ordinal, MemorySpace>;

  ArmBase(ArmBase &&) = default;
  ArmBase &operator=(ArmBase &&) = default;
  // Arms own planning state and buffers; copies would share them.
  ArmBase(ArmBase const &) = delete;
  ArmBase &operator=(ArmBase const &) = delete;

  int width() const { return width_; }
  Ordinal num_rows() const { return op_->n_rows; }
  Ordinal num_cols() const { return op_->n_cols; }

  /// y += A[:, cols] * dx, in place, on `space`. `cols` holds k distinct
  /// column ids in any order, `dx` is k x B, `y` is num_rows() x B. Throws
  /// std::invalid_argument on bad input, before anything is written.
  template <class ExecutionSpace, class Cols, class Dx, class Y>
  void apply_cols(ExecutionSpace const &space, Cols const &cols, Dx const &dx, Y const &y)
  {
    check_apply_types<ExecutionSpace, MemorySpace, Scalar, Ordinal, Cols, Dx, Y>();
    apply_returning_ids(space, cols, dx, y);
  }

  /// Same, on a default instance of `MemorySpace::execution_space` (Kokkos'
  /// space for that memory: a host space for host-pinned memory, so order it
  /// after steps run there on a device instance).
  template <class Cols, class Dx, class Y>
  void apply_cols(Cols const &cols, Dx const &dx, Y const &y)
  {
    apply_cols(default_space_, cols, dx, y);
  }

protected:
  // The session that holds the arms reads each timed step's column ids on
  // the host (to weigh the step by its work) from the copy the check made.
  friend class hst::AdaptiveSession<Scalar, Ordinal, MemorySpace>;

  // The distributed arms check their input on every rank together and hand
  // their local arms column ids that are distinct and in range by then.
  template <class LocalArm>
  friend class hst::DistributedArm;

  // apply_cols on input its caller has checked (types, extents, ids in
  // range and distinct), with the ids readable on the host at `host_cols`:
  // no second O(k) pass, no copy of device-resident ids back to the host.
  template <class ExecutionSpace, class Cols, class Dx, class Y>
  void apply_prechecked(ExecutionSpace const &space, Ordinal const *host_cols,
                        Cols const &cols, Dx const &dx, Y const &y)
  {
    static_cast<Arm &>(*this).apply_checked(space, host_cols, cols, dx, y);
  }

  // apply_cols without the type checks; returns the column ids readable on
  // the host, valid until this arm's next step.
  template <class ExecutionSpace, class Cols, class Dx, class Y>
  Ordinal const *apply_returning_ids(ExecutionSpace const &space, Cols const &cols,
                                     Dx const &dx, Y const &y)
  {
    Ordinal const *host_cols = check_(space, cols, dx, y);
    static_cast<Arm &>(*this).apply_checked(space, host_cols, cols, dx, y);
    return host_cols;
  }

  ArmBase(std::shared_ptr<data_type const> op, int width, char const *where)
      : op_(std::move(op))
      , width_(check_width(width, where))
      , check_(Arm::name, op_->n_rows, op_->n_cols, width_, op_->scratch.get())
  {}

  std::shared_ptr<data_type const> op_;
  int width_;
  // The default instance, made once: on Kokkos 4 making one allocates.
  typename MemorySpace::execution_space default_space_;

private:
  static int check_width(int width, char const *where)
  {
    if (width <= 0)
      throw_invalid(where, ": argument 'B' must be positive, got ", width);
    return width;
  }

  InputCheck<Ordinal> check_;
};

} // namespace hst::detail
