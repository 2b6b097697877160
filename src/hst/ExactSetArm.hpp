#pragma once

#include <hst/detail/ArmBase.hpp>
#include <hst/detail/ExactSetApply.hpp>
#include <hst/detail/Parallel.hpp>
#include <hst/detail/RowRanges.hpp>
#include <hst/kokkos_ext/Compat.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
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
  /// Compiles of an unchanged set, made because an adaptive session asked
  /// for one to time it (not counted in compiles()).
  std::int64_t recompiles() const { return recompiles_; }
  /// Rows of y the last compiled list touches (work items of its kernel).
  std::int64_t touched_rows() const { return n_touched_; }
  /// Entries of A the last compiled list holds.
  std::int64_t entries() const { return std::int64_t(n_entries_); }

private:
  // The adaptive session times a compile apart from the step that makes it
  // (AdaptiveSession, "Charge"): on its next step the arm reads `clock`
  // before and after a compile (its upload fenced) into
  // last_compile_seconds_ (0 if it compiled nothing), and with
  // `compile_unchanged` compiles even an unchanged set (after that step's
  // apply). A step that throws before it compiles leaves both for the
  // retried step, which sets them again.
  template <class, class, class>
  friend class AdaptiveSession;
  void time_next_compile(std::function<double()> const &clock, bool compile_unchanged)
  {
    compile_clock_ = &clock;
    recompile_next_ = compile_unchanged;
    last_compile_seconds_ = 0;
  }
  // Compiles `host_cols` (k distinct ids in [0, n_cols), checked by an
  // earlier step of this operator) now, between steps, timed as above; the
  // arm's next step takes them for its previous set. Returns the seconds.
  template <class ExecutionSpace>
  double timed_compile_between_steps(ExecutionSpace const &space,
                                     Ordinal const *host_cols, std::size_t k,
                                     std::function<double()> const &clock)
  {
    compile_clock_ = &clock;
    timed_compile(space, host_cols, k, recompiles_);
    history_.remember(host_cols, k);
    return last_compile_seconds_;
  }

  template <class T>
  using ListView =
      Kokkos::View<T *, MemorySpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  template <class ExecutionSpace, class Cols, class Dx, class Y>
  void apply_checked(ExecutionSpace const &space, Ordinal const *host_cols,
                     Cols const &cols, Dx const &dx, Y const &y)
  {
    std::size_t const k = cols.extent(0);
    bool const changed = !history_.same_as_previous(host_cols, k);
    if (changed)
    {
      timed_compile(space, host_cols, k, compiles_);
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
    // A compile asked for on an unchanged set comes after the apply, so that
    // it does not evict what the apply reads: measured before the apply, it
    // made the apply of a 3000-column set on a 1e6-row grid 1.75x its steady
    // time (its row marks and the columns' entries pushed y's rows out).
    if (recompile_next_)
    {
      timed_compile(space, host_cols, k, recompiles_);
    }
    compile_clock_ = nullptr; // time_next_compile asked for this step only
  }

  // compile(), counted in `count` and timed (its upload fenced) when
  // time_next_compile asked; ends what time_next_compile asked for.
  template <class ExecutionSpace>
  void timed_compile(ExecutionSpace const &space, Ordinal const *host_cols, std::size_t k,
                     std::int64_t &count)
  {
    // the host rewrites a list that earlier kernels may still read
    detail::wait_for_kernel_readers<ExecutionSpace, decltype(list_)::shared>(space);
    // timed: the apply launched before an asked-for compile is not the
    // compile's (on a device the list's own wait above does not fence)
    if (compile_clock_)
      kokkos_ext::fence(space, "hst::compile");
    double const start = compile_clock_ ? (*compile_clock_)() : 0;
    compile(space, host_cols, k);
    ++count;
    if (compile_clock_)
    {
      // the list's upload to a device is the compile's
      kokkos_ext::fence(space, "hst::compile");
      last_compile_seconds_ = (*compile_clock_)() - start;
    }
    compile_clock_ = nullptr; // time_next_compile's compile is this one
    recompile_next_ = false;
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
      row_ptr = aligned(rows + max_rows * sizeof(Ordinal));
      position = aligned(row_ptr + (max_rows + 1) * sizeof(std::int32_t));
      end = position + entries * sizeof(std::int32_t);
    }
  };

  // One host thread's share of a compile: the touched rows in [lo, hi), its
  // entries (placed at `entry_offset` in the list), its touched rows (placed
  // at `row_offset`), and where its scratch begins.
  struct Part
  {
    Ordinal lo = 0, hi = 0;
    std::size_t entries = 0, entry_offset = 0, scratch = 0, segments = 0;
    std::int32_t rows = 0, row_offset = 0;
  };

  // A changed column's entries in one part's rows, and the column's position.
  struct Segment
  {
    std::size_t begin, end;
    std::int32_t position;
  };

  // Compiles the list for cols[0, k) on the host. The touched rows are cut
  // into ranges of about equal entries (detail::split_by_entries over the
  // columns' spans, gathered by host threads), one per host thread (one range
  // when the step is below OperatorOptions::min_parallel_work or the host
  // runs one thread); each part walks every column's entries in its rows
  // (detail::clip_to_rows), so no two parts write one row's records:
  //   1. (several parts) clip every column's span to its rows, O(k) over the
  //      compact spans: the segments it walks next, and its entry count;
  //   2. its rows in first-touch order and their entry counts, into scratch;
  //   3. after the prefix sums over parts, its rows, row offsets, and its
  //      entries in increasing position into the list.
  // A row's entries, hence its sum, come out in the same order for any number
  // of parts; the order of the rows in the list does not change the sums.
  template <class ExecutionSpace>
  void compile(ExecutionSpace const &space, Ordinal const *cols, std::size_t k)
  {
    auto const &csc = this->op_->csc_host;
    std::size_t const *const col_ptr = csc.col_ptr.data();
    Ordinal const *const csc_row_data = csc.row.data();
    Kokkos::View<Ordinal const *, Kokkos::HostSpace,
                 Kokkos::MemoryTraits<Kokkos::Unmanaged>> const csc_row(csc_row_data,
                                                                        csc.row.size());
    Scalar const *const csc_val = csc.val.data();
    // The entry count decides whether the compile is split (and bounds the
    // list): one pass over col_ptr on the calling thread, before the split.
    std::size_t entries = 0;
    for (Ordinal const *c = cols; c != cols + k; ++c)
      entries += col_ptr[*c + 1] - col_ptr[*c];
    if (entries > std::size_t(std::numeric_limits<std::int32_t>::max()))
      detail::throw_invalid(name, ": argument 'cols' selects ", entries,
                            " entries, more than the 2^31 - 1 an exact-set list "
                            "holds");
    auto const &host = compile_space(space);
    static std::string const label = "hst::ExactSetArm::compile";
    bool const one_part = detail::run_inline(host, std::int64_t(entries) * this->width_,
                                             this->op_->options.min_parallel_work);
    std::size_t const max_rows = std::min(entries, std::size_t(this->op_->n_rows));
    Layout const layout(entries, max_rows);
    list_.reserve(layout.end);
    layout_ = layout;
    // Row marks from the operator's shared scratch: a new generation per
    // compile, nothing cleared, nothing of the operator's size held here.
    auto const lease = this->op_->scratch->acquire();
    std::uint32_t const epoch = lease->new_row_generation();
    RowMark *const mark = lease->row_mark();
    unsigned char *const base = list_.host();
    auto *const rows = reinterpret_cast<Ordinal *>(base + layout.rows);
    auto *const row_ptr = reinterpret_cast<std::int32_t *>(base + layout.row_ptr);
    auto *const position = reinterpret_cast<std::int32_t *>(base + layout.position);
    auto *const value = reinterpret_cast<Scalar *>(base + layout.value);

    // Several parts: the touched rows' ranges (one part needs none: it walks
    // every entry).
    parts_.resize(1);
    if (!one_part)
    {
      auto const ranges = detail::split_rows_by_entries(host, col_ptr, csc_row_data, cols,
                                                        k, this->op_->n_rows, spans_);
      parts_.resize(std::size_t(ranges.parts));
      Part *const parts = parts_.data();
      for (int t = 0; t < ranges.parts; ++t)
      {
        parts[t].lo = ranges.begin(t);
        parts[t].hi = ranges.end(t);
      }
    }
    int const n_parts = int(parts_.size());
    Part *const parts = parts_.data();
    // 1. Each part's segments and entries (one part: every column, all of
    // its entries).
    parts[0].entries = entries;
    if (n_parts > 1)
    {
      segments_.resize(std::size_t(n_parts) * k);
      detail::for_each_part(host, label, n_parts, [&](int t) {
        Segment *const segment = segments_.data() + std::size_t(t) * k;
        std::size_t n = 0, count = 0;
        for (std::size_t i = 0; i < k; ++i)
        {
          std::size_t begin = 0, end = 0;
          if (detail::clip_to_rows(csc_row, spans_[i], parts[t].lo, parts[t].hi, begin,
                                   end))
          {
            segment[count++] = Segment{begin, end, std::int32_t(i)};
            n += end - begin;
          }
        }
        parts[t].segments = count;
        parts[t].entries = n;
      });
    }
    // Calls walk(i, begin, end) for each column i, in order, with its entries
    // in part t's rows.
    auto const for_entries_in = [&](int t, auto &&walk) {
      if (n_parts == 1)
        for (std::size_t i = 0; i < k; ++i)
          walk(i, col_ptr[cols[i]], col_ptr[cols[i] + 1]);
      else
      {
        Segment const *const segment = segments_.data() + std::size_t(t) * k;
        for (std::size_t s = 0; s < parts[t].segments; ++s)
          walk(std::size_t(segment[s].position), segment[s].begin, segment[s].end);
      }
    };
    std::size_t scratch_size = 0;
    for (int t = 0; t < n_parts; ++t)
    {
      parts[t].entry_offset =
          t == 0 ? 0 : parts[t - 1].entry_offset + parts[t - 1].entries;
      parts[t].scratch = scratch_size;
      // rows <= entries; one spare slot each for the branch-free pass below
      scratch_size += parts[t].entries + 1;
    }
    first_touch_.resize(scratch_size);
    row_count_.resize(scratch_size + 1);

    // 2. Each part's rows in first-touch order, and their entry counts.
    // Branch-free: whether a row is new is unpredictable, so it selects, not
    // branches; it writes the spare slot rows[n] and counts into
    // count[n + 1] without testing whether the row is new.
    detail::for_each_part(host, label, n_parts, [&](int t) {
      Ordinal *const part_rows = first_touch_.data() + parts[t].scratch;
      std::int32_t *const count = row_count_.data() + parts[t].scratch;
      std::fill(count, count + parts[t].entries + 1, 0);
      std::int32_t n = 0;
      for_entries_in(t, [&](std::size_t, std::size_t begin, std::size_t end) {
        for (auto p = begin; p < end; ++p)
        {
          Ordinal const r = csc_row_data[p];
          RowMark const m = mark[r];
          bool const fresh = m.generation != epoch;
          std::int32_t const slot = fresh ? n : m.slot;
          mark[r] = RowMark{epoch, slot};
          part_rows[n] = r;
          n += fresh;
          ++count[slot + 1];
        }
      });
      parts[t].rows = n;
    });
    std::int32_t n_touched = 0;
    for (int t = 0; t < n_parts; ++t)
    {
      parts[t].row_offset = n_touched;
      n_touched += parts[t].rows;
    }

    // 3. The list: rows, row offsets, then entries in increasing position
    // (the counts become each row's write cursor).
    detail::for_each_part(host, label, n_parts, [&](int t) {
      Part const &part = parts[t];
      Ordinal const *const part_rows = first_touch_.data() + part.scratch;
      std::int32_t *const cursor = row_count_.data() + part.scratch;
      auto const entry_offset = std::int32_t(part.entry_offset);
      for (std::int32_t s = 0; s < part.rows; ++s)
      {
        cursor[s + 1] += cursor[s];
        cursor[s] += entry_offset;
        rows[part.row_offset + s] = part_rows[s];
        row_ptr[part.row_offset + s] = cursor[s];
      }
      for_entries_in(t, [&](std::size_t i, std::size_t begin, std::size_t end) {
        for (auto p = begin; p < end; ++p)
        {
          auto const e = cursor[mark[csc_row_data[p]].slot]++;
          position[e] = std::int32_t(i);
          value[e] = csc_val[p];
        }
      });
    });
    row_ptr[n_touched] = std::int32_t(entries);

    n_touched_ = n_touched;
    n_entries_ = entries;
    list_.upload(space, layout.end);
  }

  // The host threads a compile runs on: the step's own space where it is a
  // host space, else the default host space.
  template <class ExecutionSpace>
  decltype(auto) compile_space(ExecutionSpace const &space) const
  {
    // A reference, not a copy: copying an instance touches its reference
    // count on Kokkos 4.
    if constexpr (detail::is_synchronous_host_space<ExecutionSpace>)
      return space;
    else
      return (void)space, host_space_;
  }

  // Per operator row: the compile that last touched it, and its index in
  // that compile's part (in the operator's shared scratch).
  using RowMark = detail::RowMark;

  detail::ColumnSetHistory<Ordinal> history_;
  std::vector<Part> parts_;
  std::vector<detail::ColumnSpan<Ordinal>> spans_; // the changed columns' spans
  std::vector<Segment> segments_; // part t's at [t * k, t * k + its segments)
  // Where a device's compile runs, made once: on Kokkos 4 making an
  // execution-space instance allocates.
  Kokkos::DefaultHostExecutionSpace host_space_;
  std::vector<Ordinal> first_touch_;    // each part's rows, first touch first
  std::vector<std::int32_t> row_count_; // their entry counts, then cursors
  // The list (values, rows, row_ptr, positions at layout_'s offsets).
  detail::PlannedBuffer<unsigned char, MemorySpace> list_;
  Layout layout_;
  std::int32_t n_touched_ = 0;
  std::size_t n_entries_ = 0;
  std::int64_t compiles_ = 0;
  std::int64_t recompiles_ = 0;
  // time_next_compile: for the next step only
  std::function<double()> const *compile_clock_ = nullptr;
  bool recompile_next_ = false;
  double last_compile_seconds_ = 0;
};

} // namespace hst
