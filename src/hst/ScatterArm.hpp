#pragma once

#include <hst/detail/ArmBase.hpp>
#include <hst/detail/ScatterApply.hpp>

namespace hst
{

/// Direct-scatter arm: each step adds the changed columns of A (from a CSC
/// copy prepared once with the operator) straight into y. Nothing to compile,
/// nothing kept between steps. Uses atomics only on an execution space with
/// concurrency > 1, so its sums are bitwise reproducible on one thread only.
template <class Scalar, class Ordinal, class MemorySpace>
class ScatterArm : public detail::ArmBase<ScatterArm<Scalar, Ordinal, MemorySpace>,
                                          Scalar, Ordinal, MemorySpace>
{
  using Base = detail::ArmBase<ScatterArm, Scalar, Ordinal, MemorySpace>;
  friend Base;

public:
  static constexpr char const *name = "hst::ScatterArm::apply_cols";

  ScatterArm(std::shared_ptr<typename Base::data_type const> op, int width)
      : Base(std::move(op), width, "hst::Operator::scatter")
  {}

private:
  template <class ExecutionSpace, class Cols, class Dx, class Y>
  void apply_checked(ExecutionSpace const &space, Ordinal const *, Cols const &cols,
                     Dx const &dx, Y const &y)
  {
    detail::scatter_apply(space, *this->op_, this->width_, cols, dx, y);
  }
};

} // namespace hst
