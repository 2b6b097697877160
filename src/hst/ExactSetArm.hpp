#pragma once

#include <hst/detail/ArmBase.hpp>
#include <hst/detail/ExactSetApply.hpp>
#include <hst/detail/Parallel.hpp>

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
/// O(nnz(A[:, cols])), never a pass over all rows. The list lives in one
/// buffer: a device gets it in one copy per recompile. Each touched row's
/// terms are summed in a fixed order on every backend and thread count: the
/// sums are bitwise reproducible.
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
      , list_("hst::ExactSetArm::list")
  {}

  /// Number of compiles so far (one per step whose column set changed).
  std::int64_t compiles() const { return compiles_; }
  /// Rows of y the last compiled list touches (work items of its kernel).
  std::int64_t touched_rows() const { return n_touched_; }
  /// Entries of A the last compiled list holds.
  std::int64_t entries() const { return std::int64_t(n_entries_); }

private:
  template <class T>
  using ListView =
      Kokkos::View<T *, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  template <class ExecutionSpace, class Cols, class Dx, class Y>
  void apply_checked(ExecutionSpace const &space, Ordinal const *host_cols,
                     Cols const &cols, Dx const &dx, Y const &y)
  {
    std::size_t const k = cols.extent(0);
    if (!history_.same_as_previous(host_cols, k))
    {
      // the host rewrites a list that earlier kernels may still read
      detail::wait_for_kernel_readers<ExecutionSpace, decltype(list_)::shared>(space);
      compile(space, host_cols, k);
      history_.remember(host_cols, k);
    }
    auto *const base = list_.device().data();
    detail::exact_set_apply(
        space, n_touched_, std::int64_t(n_entries_), this->op_->options.min_parallel_work,
        ListView<Ordinal const>(reinterpret_cast<Ordinal const *>(base + layout_.rows),
                                std::size_t(n_touched_)),
        ListView<std::int32_t const>(
            reinterpret_cast<std::int32_t const *>(base + layout_.row_ptr),
            std::size_t(n_touched_) + 1),
        ListView<std::int32_t const>(
            reinterpret_cast<std::int32_t const *>(base + layout_.position), n_entries_),
        ListView<Scalar const>(reinterpret_cast<Scalar const *>(base + layout_.value),
                               n_entries_),
        this->width_, dx, y);
  }

  // Byte offsets of the list's four arrays in its buffer, for a list of
  // `entries` entries over at most `max_rows` rows.
  struct Layout
  {
    std::size_t value = 0, rows = 0, row_ptr = 0, position = 0, end = 0;
    Layout() = default;
    Layout(std::size_t entries, std::size_t max_rows)
    {
      auto const aligned = [](std::size_t offset) { return (offset + 15) / 16 * 16; };
      rows = aligned(value + entries * sizeof(Scalar));
      row_ptr = aligned(rows + (max_rows + 1) * sizeof(Ordinal));
      position = aligned(row_ptr + (max_rows + 2) * sizeof(std::int32_t));
      end = position + entries * sizeof(std::int32_t);
    }
  };

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
    // One spare slot each (in the layout): the first-touch pass below writes
    // rows[n] and counts into row_ptr[n + 1] without testing whether the row
    // is new.
    Layout const layout(entries, max_rows);
    list_.reserve(layout.end);
    layout_ = layout;
    // Row marks from the operator's shared scratch: a new generation per
    // compile, nothing cleared, nothing of the operator's size held here.
    auto const lease = this->op_->scratch->acquire();
    std::uint32_t const epoch = lease->new_row_generation();
    unsigned char *const base = list_.host();

    // Touched rows in first-touch order, and their entry counts. Branch-free:
    // whether a row is new is unpredictable, so it selects, not branches.
    auto *const rows = reinterpret_cast<Ordinal *>(base + layout.rows);
    auto *const row_ptr = reinterpret_cast<std::int32_t *>(base + layout.row_ptr);
    std::fill(row_ptr, row_ptr + max_rows + 2, 0);
    RowMark *const mark = lease->row_mark();
    std::int32_t n = 0;
    for (std::size_t i = 0; i < k; ++i)
    {
      auto const end = col_ptr[cols[i] + 1];
      for (auto p = col_ptr[cols[i]]; p < end; ++p)
      {
        Ordinal const r = csc_row[p];
        RowMark const m = mark[r];
        bool const fresh = m.generation != epoch;
        std::int32_t const slot = fresh ? n : m.slot;
        mark[r] = RowMark{epoch, slot};
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
    auto *const position = reinterpret_cast<std::int32_t *>(base + layout.position);
    auto *const value = reinterpret_cast<Scalar *>(base + layout.value);
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
    n_entries_ = entries;
    list_.upload(space, layout.end);
    ++compiles_;
  }

  // Per operator row: the compile that last touched it, and its index in
  // that compile's list (in the operator's shared scratch).
  using RowMark = detail::RowMark;

  detail::ColumnSetHistory<Ordinal> history_;
  std::vector<std::int32_t> cursor_;
  // The list (values, rows, row_ptr, positions at layout_'s offsets).
  detail::PlannedBuffer<unsigned char, MemorySpace> list_;
  Layout layout_;
  std::int32_t n_touched_ = 0;
  std::size_t n_entries_ = 0;
  std::int64_t compiles_ = 0;
};

} // namespace hst
