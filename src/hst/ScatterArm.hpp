#pragma once

#include <hst/detail/ArmBase.hpp>
#include <hst/detail/ScatterApply.hpp>

namespace hst
{

/// Direct-scatter arm: each step adds the changed columns of A (from a CSC
/// copy prepared once with the operator) straight into y. Nothing to compile,
/// nothing kept between steps but host scratch. On host backends each row of y receives
/// its terms in the order of `cols` whatever the thread count (threads split the touched
/// rows, no atomics): the sums are bitwise reproducible. On devices a team walks each
/// column and adds atomically: not bitwise reproducible.
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
  void apply_checked(ExecutionSpace const &space, Ordinal const *host_cols,
                     Cols const &cols, Dx const &dx, Y const &y)
  {
    detail::scatter_apply(space, *this->op_, this->width_, host_cols, spans_, cols, dx,
                          y);
  }

  // Host threads' scratch: the changed columns' spans (grown to the largest k
  // split among threads, then reused).
  std::vector<detail::ColumnSpan<Ordinal>> spans_;
};

} // namespace hst
