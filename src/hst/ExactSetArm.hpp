#pragma once

#include <hst/detail/ArmBase.hpp>
#include <hst/detail/ExactSetApply.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace hst
{

/// Exact-set arm: a compressed row list compiled for exactly the step's column
/// set (touched rows, and per row its (position in cols, value) entries), then
/// one work item per touched row, no atomics. Recompiled whenever the column
/// ids differ from the previous step's (any change, including order); the
/// recompile visits only the entries of the changed set's columns,
/// O(nnz(A[:, cols])), never a pass over all rows.
template <class Scalar, class Ordinal, class MemorySpace>
class ExactSetArm : public detail::ArmBase<ExactSetArm<Scalar, Ordinal, MemorySpace>,
                                           Scalar, Ordinal, MemorySpace>
{
  using Base = detail::ArmBase<ExactSetArm, Scalar, Ordinal, MemorySpace>;
  friend Base;

public:
  static constexpr char const *name = "hst::ExactSetArm::apply_cols";

  ExactSetArm(std::shared_ptr<typename Base::data_type const> op, int width)
      : Base(std::move(op), width, "hst::Operator::baseline")
      , mark_(std::size_t(this->op_->n_rows))
      , rows_("hst::ExactSetArm::rows")
      , row_ptr_("hst::ExactSetArm::row_ptr")
      , position_("hst::ExactSetArm::position")
      , value_("hst::ExactSetArm::value")
  {}

  /// Number of compiles so far (one per step whose column set changed).
  std::int64_t compiles() const { return compiles_; }

private:
  template <class ExecutionSpace, class Cols, class Dx, class Y>
  void apply_checked(ExecutionSpace const &space, Ordinal const *host_cols,
                     Cols const &cols, Dx const &dx, Y const &y)
  {
    std::size_t const k = cols.extent(0);
    if (!history_.same_as_previous(host_cols, k))
    {
      space.fence(); // the host rewrites lists that earlier kernels may still read
      compile(space, host_cols, k);
      history_.remember(host_cols, k);
    }
    detail::exact_set_apply(space, n_touched_, rows_.device(), row_ptr_.device(),
                            position_.device(), value_.device(), this->width_, dx, y);
  }

  template <class ExecutionSpace>
  void compile(ExecutionSpace const &space, Ordinal const *cols, std::size_t k)
  {
    auto const &csc = this->op_->csc_host;
    std::size_t const *const col_ptr = csc.col_ptr.data();
    Ordinal const *const csc_row = csc.row.data();
    Scalar const *const csc_val = csc.val.data();
    std::size_t entries = 0;
    for (std::size_t i = 0; i < k; ++i)
      entries += col_ptr[cols[i] + 1] - col_ptr[cols[i]];
    if (entries > std::size_t(std::numeric_limits<std::int32_t>::max()))
      detail::throw_invalid(name, ": argument 'cols' selects ", entries,
                            " entries, more than the 2^31 - 1 an exact-set list "
                            "holds");
    std::size_t const max_rows = std::min(entries, std::size_t(this->op_->n_rows));
    // One spare slot each: the first-touch pass below writes rows[n] and
    // counts into row_ptr[n + 1] without testing whether the row is new.
    rows_.reserve(max_rows + 1);
    row_ptr_.reserve(max_rows + 2);
    position_.reserve(entries);
    value_.reserve(entries);
    if (++epoch_ == 0)
    {
      std::fill(mark_.begin(), mark_.end(), RowMark{});
      epoch_ = 1;
    }

    // Touched rows in first-touch order, and their entry counts. Branch-free:
    // whether a row is new is unpredictable, so it selects, not branches.
    Ordinal *const rows = rows_.host();
    std::int32_t *const row_ptr = row_ptr_.host();
    std::fill(row_ptr, row_ptr + max_rows + 2, 0);
    RowMark *const mark = mark_.data();
    std::int32_t n = 0;
    for (std::size_t i = 0; i < k; ++i)
    {
      auto const end = col_ptr[cols[i] + 1];
      for (auto p = col_ptr[cols[i]]; p < end; ++p)
      {
        Ordinal const r = csc_row[p];
        RowMark const m = mark[r];
        bool const fresh = m.epoch != epoch_;
        std::int32_t const slot = fresh ? n : m.slot;
        mark[r] = RowMark{epoch_, slot};
        rows[n] = r;
        n += fresh;
        ++row_ptr[slot + 1];
      }
    }
    for (std::int32_t s = 0; s < n; ++s)
      row_ptr[s + 1] += row_ptr[s];

    // Entries of each row in increasing position, so sums have a fixed order.
    cursor_.assign(row_ptr, row_ptr + n);
    std::int32_t *const cursor = cursor_.data();
    std::int32_t *const position = position_.host();
    Scalar *const value = value_.host();
    for (std::size_t i = 0; i < k; ++i)
    {
      auto const end = col_ptr[cols[i] + 1];
      for (auto p = col_ptr[cols[i]]; p < end; ++p)
      {
        auto const e = cursor[mark[csc_row[p]].slot]++;
        position[e] = std::int32_t(i);
        value[e] = csc_val[p];
      }
    }

    n_touched_ = n;
    rows_.upload(space, std::size_t(n));
    row_ptr_.upload(space, std::size_t(n) + 1);
    position_.upload(space, entries);
    value_.upload(space, entries);
    ++compiles_;
  }

  // Per operator row: the compile that last touched it, and its index in
  // that compile's list (one 8-byte record: one cache line per touched row).
  struct RowMark
  {
    std::uint32_t epoch = 0;
    std::int32_t slot = 0;
  };

  detail::ColumnSetHistory<Ordinal> history_;
  std::vector<RowMark> mark_; // row -> (last compile touching it, its index)
  std::uint32_t epoch_ = 0;
  std::vector<std::int32_t> cursor_;
  detail::PlannedBuffer<Ordinal, MemorySpace> rows_;
  detail::PlannedBuffer<std::int32_t, MemorySpace> row_ptr_;
  detail::PlannedBuffer<std::int32_t, MemorySpace> position_;
  detail::PlannedBuffer<Scalar, MemorySpace> value_;
  std::int32_t n_touched_ = 0;
  std::int64_t compiles_ = 0;
};

} // namespace hst
