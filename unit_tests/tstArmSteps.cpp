// The arms step by step against a plain host loop: edge cases (empty, one
// and every column, rectangular operators), the scheduled arm's tiles as they
// grow, retire and are patched through irregular changes, and the row ranges
// host threads split a step by. (tstArms.cpp: 200-step workloads against a
// full recompute; one executable, two translation units, so that the builds
// compile them on two cores.)

#include <hst/detail/RowRanges.hpp>

#include "HSTTestHelpers.hpp"
#include <workload/Workload.hpp>

#include <cstdint>

namespace
{

using namespace hst_test;

template <class ExecutionSpace>
struct ArmSteps : ::testing::Test
{};
TYPED_TEST_SUITE(ArmSteps, DeviceTypes);

// One step of each arm on the given columns against the host loop, with
// parallel kernels and on one thread.
template <class ExecutionSpace>
void expect_step_matches_reference(Triplets const &t, std::vector<Ordinal> const &cols,
                                   int width, std::vector<Ordinal> const &expected)
{
  using memory_space = typename ExecutionSpace::memory_space;
  auto const A = to_matrix<ExecutionSpace>(t);
  for (auto const &options : {every_step_parallel(), every_step_on_one_thread()})
  {
    hst::Operator op(A, options);
    std::vector<Scalar> dx(cols.size() * width);
    for (std::size_t e = 0; e < dx.size(); ++e)
      dx[e] = 0.25 + double(e % 7);
    std::vector<Scalar> y0(std::size_t(t.n_rows) * width);
    for (std::size_t e = 0; e < y0.size(); ++e)
      y0[e] = double(e % 5) - 2.0;
    auto expected_y = y0;
    reference_apply(t, cols, dx, width, expected_y);

    auto const cols_view = to_view<memory_space>(cols);
    auto const dx_view =
        to_matrix_view<Kokkos::LayoutLeft, memory_space>(dx, cols.size(), width);
    auto run = [&](auto &&arm) {
      auto y = to_matrix_view<Kokkos::LayoutRight, memory_space>(y0, t.n_rows, width);
      arm.apply_cols(cols_view, dx_view, y);
      return to_host_rows(y);
    };
    EXPECT_LE(relative_error(run(op.session(to_view<memory_space>(expected), width)),
                             expected_y),
              1e-14);
    EXPECT_LE(relative_error(run(op.baseline(width)), expected_y), 1e-14);
    EXPECT_LE(relative_error(run(op.scatter(width)), expected_y), 1e-14);
  }
}

TYPED_TEST(ArmSteps, edge_cases_match_host_loop)
{
  using ExecutionSpace = TypeParam;
  auto const t = hst::workload::grid_2d<Scalar, Ordinal>(30, 20);
  std::vector<Ordinal> all(t.n_cols);
  for (Ordinal c = 0; c < t.n_cols; ++c)
    all[c] = (c * 7) % t.n_cols; // every column, out of order
  std::vector<Ordinal> const none, one{17},
      spread{599, 3, 250, 251, 42, 0, 300, 7, 8, 9, 10};
  for (int width : {1, 8, 13})
  {
    SCOPED_TRACE("B = " + std::to_string(width));
    {
      SCOPED_TRACE("empty set");
      expect_step_matches_reference<ExecutionSpace>(t, none, width, none);
    }
    {
      SCOPED_TRACE("one column, outside the expected set");
      expect_step_matches_reference<ExecutionSpace>(t, one, width, none);
    }
    {
      SCOPED_TRACE("all columns");
      expect_step_matches_reference<ExecutionSpace>(t, all, width, all);
    }
    {
      SCOPED_TRACE("k larger than a tile, scattered");
      expect_step_matches_reference<ExecutionSpace>(t, spread, width, one);
    }
  }
  auto const holes = hst::workload::with_empty_lines(t, 3, 4);
  expect_step_matches_reference<ExecutionSpace>(holes, {0, 4, 8, 5, 9}, 8, {0});
  auto const wide = hst::workload::rectangular_band<Scalar, Ordinal>(10, 3000, 2);
  expect_step_matches_reference<ExecutionSpace>(wide, {2999, 0, 1500}, 8, {});
  auto const no_rows = Triplets(0, 50);
  expect_step_matches_reference<ExecutionSpace>(no_rows, {3, 4}, 8, {3});
}

TYPED_TEST(ArmSteps, schedule_grows_and_retires_tiles)
{
  using ExecutionSpace = TypeParam;
  using memory_space = typename ExecutionSpace::memory_space;
  auto const t = hst::workload::grid_2d<Scalar, Ordinal>(100, 100);
  auto const A = to_matrix<ExecutionSpace>(t);
  hst::workload::WorkloadOptions w;
  w.churn = 0.25;
  hst::workload::Workload<Scalar, Ordinal> workload(A, w);
  hst::Operator op(A);
  hst::SessionOptions options;
  options.retire_after = 4;
  auto session = op.session(to_view<memory_space>(workload.columns()), 8, options);
  auto const initial_tiles = session.stats().column_tiles;
  Kokkos::View<Scalar **, memory_space> dx("dx", workload.columns().size(), 8);
  Kokkos::View<Scalar **, memory_space> y("y", t.n_rows, 8);
  std::int64_t most_tiles = 0;
  for (int step = 0; step < 300; ++step)
  {
    session.apply_cols(to_view<memory_space>(workload.columns()), dx, y);
    most_tiles = std::max(most_tiles, session.stats().column_tiles);
    workload.advance();
  }
  auto const &stats = session.stats();
  EXPECT_EQ(stats.steps, 300);
  EXPECT_GT(stats.tiles_compiled, initial_tiles);
  EXPECT_GT(stats.tiles_retired, 0);
  // The set moved far over 300 steps; retirement keeps the schedule near the
  // size of the set's own footprint instead of its whole trail.
  EXPECT_LT(most_tiles, stats.tiles_compiled / 2);
  EXPECT_EQ(stats.column_tiles, stats.tiles_compiled - stats.tiles_retired);
}

// The expected set is planned when the arm is made, so a first step on it
// does not re-plan; a list with a repeated id only compiles its tiles, and
// the first step plans. Either way the step is right.
TYPED_TEST(ArmSteps, expected_set_is_planned_unless_it_repeats_an_id)
{
  using ExecutionSpace = TypeParam;
  using memory_space = typename ExecutionSpace::memory_space;
  auto const t = hst::workload::grid_2d<Scalar, Ordinal>(40, 30);
  auto const A = to_matrix<ExecutionSpace>(t);
  hst::Operator op(A);
  std::vector<Ordinal> const set{700, 3, 250, 251, 42};
  std::vector<Ordinal> const repeats{700, 3, 250, 3, 251, 42};
  std::vector<Scalar> dx(set.size() * 8, 1.5);
  std::vector<Scalar> expected_y(std::size_t(t.n_rows) * 8, 0.0);
  reference_apply(t, set, dx, 8, expected_y);
  auto const dx_view =
      to_matrix_view<Kokkos::LayoutLeft, memory_space>(dx, set.size(), 8);
  for (bool repeat : {false, true})
  {
    SCOPED_TRACE(repeat ? "expected set with a repeated id" : "distinct expected set");
    auto session = op.session(to_view<memory_space>(repeat ? repeats : set), 8);
    auto const tiles = session.stats().column_tiles;
    Kokkos::View<Scalar **, Kokkos::LayoutRight, memory_space> y("y", t.n_rows, 8);
    session.apply_cols(to_view<memory_space>(set), dx_view, y);
    EXPECT_EQ(session.stats().replans, repeat ? 1 : 0);
    EXPECT_EQ(session.stats().column_tiles, tiles); // no tile compiled by the step
    EXPECT_LE(relative_error(to_host_rows(y), expected_y), 1e-14);
  }
}

// The scheduled arm patches its per-row-block piece lists from step to step.
// A long irregular run against the host loop: small replacements, recent
// leavers re-entering, members moving to other positions of `cols`, the set
// shrinking to empty and growing back, jumps and repeats, on short row blocks
// (many work items) with tiles retired while the lists are patched, and a
// strict session (fixed schedule) beside it.
TYPED_TEST(ArmSteps, patched_schedule_matches_host_loop_through_irregular_changes)
{
  using ExecutionSpace = TypeParam;
  using memory_space = typename ExecutionSpace::memory_space;
  auto const t =
      hst::workload::shuffled(hst::workload::grid_2d<Scalar, Ordinal>(40, 40), 3);
  auto const A = to_matrix<ExecutionSpace>(t);
  hst::OperatorOptions tiling;
  tiling.row_block = 32;
  hst::Operator op(A, tiling);
  int const width = 3;
  std::uint64_t state = 17;
  auto below = [&](std::int64_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return Ordinal((state >> 33) % std::uint64_t(n));
  };
  std::vector<Ordinal> set, all(t.n_cols), left;
  std::vector<char> member(t.n_cols, 0);
  for (Ordinal c = 0; c < t.n_cols; ++c)
    all[c] = c;
  auto enter = [&](bool recent) {
    Ordinal c = recent && !left.empty() ? left[below(std::int64_t(left.size()))]
                                        : below(t.n_cols);
    while (member[c]) // a leaver that re-entered already: any non-member
      c = below(t.n_cols);
    member[c] = 1;
    return c;
  };
  for (int i = 0; i < 60; ++i)
    set.push_back(enter(false));
  hst::SessionOptions retiring, strict;
  retiring.retire_after = 2;
  strict.strict = true;
  auto session = op.session(to_view<memory_space>(set), width, retiring);
  auto fixed = op.session(to_view<memory_space>(all), width, strict);
  Kokkos::View<Scalar **, Kokkos::LayoutRight, memory_space> y("y", t.n_rows, width),
      y_fixed("y", t.n_rows, width);
  std::vector<Scalar> y_ref(std::size_t(t.n_rows) * width, 0.0);
  bool emptied = false, refilled = false;
  for (int step = 0; step < 400; ++step)
  {
    auto const action = step % 97 == 50 ? 100 : below(20);
    if (action < 12) // replace 1-3 members, half the time by a recent leaver
      for (auto n = 1 + below(3); n > 0 && !set.empty(); --n)
      {
        auto const i = std::size_t(below(std::int64_t(set.size())));
        auto const c = enter(below(2) == 0);
        member[set[i]] = 0;
        left.push_back(set[i]);
        set[i] = c;
      }
    else if (action < 14) // members move to other positions
      for (auto n = 1 + below(4); n > 0 && set.size() > 1; --n)
        std::swap(set[std::size_t(below(std::int64_t(set.size())))],
                  set[std::size_t(below(std::int64_t(set.size())))]);
    else if (action < 16 || action == 100) // shrink, at times to empty
    {
      auto const keep = action == 100 || below(3) == 0
                            ? std::size_t(0)
                            : std::size_t(below(std::int64_t(set.size()) + 1));
      for (std::size_t i = keep; i < set.size(); ++i)
      {
        member[set[i]] = 0;
        left.push_back(set[i]);
      }
      set.resize(keep);
      emptied = emptied || set.empty();
    }
    else if (action < 18) // grow
    {
      refilled = refilled || (emptied && set.empty());
      for (auto n = 1 + below(20); n > 0; --n)
        set.push_back(enter(below(2) == 0));
    }
    else if (action == 18) // jump: a new set of another size
    {
      for (Ordinal c : set)
        member[c] = 0;
      set.clear();
      for (auto n = below(80); n > 0; --n)
        set.push_back(enter(false));
    } // else the set repeats
    if (left.size() > 32)
      left.erase(left.begin(), left.end() - 32);

    std::vector<Scalar> dx(set.size() * width);
    for (auto &v : dx)
      v = double(below(2001) - 1000) / 1000.0;
    auto const cols = to_view<memory_space>(set);
    auto const dx_view =
        to_matrix_view<Kokkos::LayoutLeft, memory_space>(dx, set.size(), width);
    session.apply_cols(cols, dx_view, y);
    fixed.apply_cols(cols, dx_view, y_fixed);
    reference_apply(t, set, dx, width, y_ref);
    if (step % 50 == 49)
    {
      SCOPED_TRACE("step " + std::to_string(step));
      ASSERT_LE(relative_error(to_host_rows(y), y_ref), 1e-13);
      ASSERT_LE(relative_error(to_host_rows(y_fixed), y_ref), 1e-13);
    }
  }
  EXPECT_TRUE(emptied && refilled);
  EXPECT_GT(session.stats().replans, 250);
  EXPECT_GT(session.stats().tiles_retired, 0);
  EXPECT_EQ(fixed.stats().tiles_retired, 0);
  EXPECT_EQ(session.stats().column_tiles,
            session.stats().tiles_compiled - session.stats().tiles_retired);
}

// The row ranges host threads split a step by (the scatter kernel, the
// exact-set compile): they cover the touched rows in order, and each holds
// about an equal share of the entries, also where most entries crowd into a
// few rows (a cut by row index would give the first of two ranges 95% here).
TEST(RowRanges, cover_the_touched_rows_with_equal_shares_of_entries)
{
  // 900 columns of 5 entries packed into rows [0, 1802), 100 spread over
  // rows [2000, 101004): 5000 entries in all, a column's rows sorted.
  std::vector<std::size_t> col_ptr{0};
  std::vector<Ordinal> row;
  auto add_column = [&](Ordinal first_row) {
    for (Ordinal r = first_row; r < first_row + 5; ++r)
      row.push_back(r);
    col_ptr.push_back(row.size());
  };
  for (Ordinal c = 0; c < 900; ++c)
    add_column(2 * c);
  for (Ordinal c = 0; c < 100; ++c)
    add_column(2000 + 1000 * c);
  std::vector<Ordinal> cols(col_ptr.size() - 1);
  for (std::size_t i = 0; i < cols.size(); ++i) // every column, in a scrambled order
    cols[i] = Ordinal(i * 7 % cols.size());
  Ordinal const n_rows = 200000;
  std::vector<hst::detail::ColumnSpan<Ordinal>> spans(cols.size());
  auto const touched = hst::detail::column_spans(Kokkos::DefaultHostExecutionSpace{},
                                                 col_ptr.data(), row.data(), cols.data(),
                                                 cols.size(), n_rows, spans.data());
  ASSERT_EQ(touched.first, 0);
  ASSERT_EQ(touched.last, 2000 + 1000 * 99 + 4);
  ASSERT_EQ(touched.entries, std::size_t(5000));

  for (int parts : {1, 2, 3, 4, 8, 1000})
  {
    SCOPED_TRACE("parts " + std::to_string(parts));
    auto const ranges =
        hst::detail::split_by_entries(touched, spans.data(), cols.size(), parts);
    ASSERT_EQ(ranges.parts, std::min(parts, ranges.max_parts));
    EXPECT_EQ(ranges.begin(0), touched.first);
    EXPECT_EQ(ranges.end(ranges.parts - 1), touched.last + 1);
    std::vector<std::size_t> entries(std::size_t(ranges.parts), 0);
    for (int t = 0; t < ranges.parts; ++t)
    {
      EXPECT_LE(ranges.begin(t), ranges.end(t));
      if (t > 0)
      {
        EXPECT_EQ(ranges.begin(t), ranges.end(t - 1));
      }
      for (Ordinal r : row)
        entries[std::size_t(t)] += r >= ranges.begin(t) && r < ranges.end(t);
    }
    if (parts > 8)
      continue;
    // A bin holds 100 rows here, 250 entries where they crowd.
    double const share = 5000.0 / parts;
    for (int t = 0; t < parts; ++t)
      EXPECT_LE(double(entries[std::size_t(t)]), share + 300) << "range " << t;
  }

  // Nothing touched: every range empty.
  std::vector<std::size_t> const no_entries{0, 0, 0};
  std::vector<Ordinal> const empty_cols{0, 1};
  auto const none =
      hst::detail::column_spans(Kokkos::DefaultHostExecutionSpace{}, no_entries.data(),
                                row.data(), empty_cols.data(), 2, n_rows, spans.data());
  EXPECT_EQ(none.entries, std::size_t(0));
  auto const ranges = hst::detail::split_by_entries(none, spans.data(), 2, 4);
  for (int t = 0; t < ranges.parts; ++t)
    EXPECT_EQ(ranges.begin(t), ranges.end(t));
}

// The columns' spans, gathered by the host's threads in chunks of columns: each
// span is its column's entries and end rows, and the touched rows and entries
// combine every chunk's (several chunks where the host runs several threads:
// 5998 columns make up to 11 of at least 512).
TEST(RowRanges, column_spans_describe_every_column_and_combine_all_chunks)
{
  // Column c holds c % 7 entries (none for every seventh) from row 3 * c.
  std::vector<std::size_t> col_ptr{0};
  std::vector<Ordinal> row;
  Ordinal const n_cols = 6000;
  for (Ordinal c = 0; c < n_cols; ++c)
  {
    for (Ordinal r = 3 * c; r < 3 * c + c % 7; ++r)
      row.push_back(r);
    col_ptr.push_back(row.size());
  }
  Ordinal const n_rows = 3 * n_cols + 7;
  // Columns 1 to n_cols - 2, the first (lowest rows) and the last (highest
  // rows) at positions 0 and 1: both in the first chunk, so a combine that
  // kept the last chunk's rows, or any one chunk's entries, comes out wrong.
  std::vector<Ordinal> cols{1, n_cols - 2};
  for (Ordinal c = 2; c < n_cols - 2; ++c)
    cols.push_back(c);
  std::vector<hst::detail::ColumnSpan<Ordinal>> spans(cols.size());
  auto const touched = hst::detail::column_spans(Kokkos::DefaultHostExecutionSpace{},
                                                 col_ptr.data(), row.data(), cols.data(),
                                                 cols.size(), n_rows, spans.data());
  std::size_t entries = 0;
  for (std::size_t i = 0; i < cols.size(); ++i)
  {
    auto const c = cols[i];
    auto const &span = spans[i];
    ASSERT_EQ(span.begin, col_ptr[std::size_t(c)]) << "column " << c;
    ASSERT_EQ(span.end, col_ptr[std::size_t(c) + 1]) << "column " << c;
    if (span.begin < span.end)
    {
      ASSERT_EQ(span.first, 3 * c) << "column " << c;
      ASSERT_EQ(span.last, 3 * c + c % 7 - 1) << "column " << c;
    }
    else
      ASSERT_LT(span.last, span.first) << "column " << c;
    entries += span.end - span.begin;
  }
  EXPECT_EQ(touched.first, 3); // column 1
  EXPECT_EQ(touched.last, 3 * (n_cols - 2) + (n_cols - 2) % 7 - 1);
  EXPECT_EQ(touched.entries, entries);
}

// A column's entries clipped to rows [lo, hi) are exactly its entries in
// those rows: every range over a small row space, for columns inside it, on
// either side, crossing one edge or both, with one entry and with none.
TEST(RowRanges, clip_to_rows_keeps_exactly_the_entries_in_the_range)
{
  std::vector<std::vector<Ordinal>> const columns{
      {},           {0},       {5}, {11}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11},
      {2, 3, 7, 8}, {1, 6, 10}};
  std::vector<std::size_t> col_ptr{0};
  std::vector<Ordinal> rows;
  for (auto const &column : columns)
  {
    rows.insert(rows.end(), column.begin(), column.end());
    col_ptr.push_back(rows.size());
  }
  std::vector<Ordinal> cols(columns.size());
  for (std::size_t i = 0; i < cols.size(); ++i)
    cols[i] = Ordinal(i);
  std::vector<hst::detail::ColumnSpan<Ordinal>> spans(cols.size());
  hst::detail::column_spans(Kokkos::DefaultHostExecutionSpace{}, col_ptr.data(),
                            rows.data(), cols.data(), cols.size(), Ordinal(12),
                            spans.data());
  Kokkos::View<Ordinal const *, Kokkos::HostSpace,
               Kokkos::MemoryTraits<Kokkos::Unmanaged>> const row(rows.data(),
                                                                  rows.size());
  for (std::size_t c = 0; c < columns.size(); ++c)
    for (Ordinal lo = 0; lo <= 13; ++lo)
      for (Ordinal hi = lo; hi <= 13; ++hi)
      {
        std::vector<Ordinal> expected;
        for (Ordinal r : columns[c])
          if (r >= lo && r < hi)
            expected.push_back(r);
        std::size_t begin = 99, end = 99;
        bool const any = hst::detail::clip_to_rows(row, spans[c], lo, hi, begin, end);
        std::vector<Ordinal> got;
        if (any)
          got.assign(rows.begin() + std::ptrdiff_t(begin),
                     rows.begin() + std::ptrdiff_t(end));
        ASSERT_EQ(got, expected)
            << "column " << c << ", rows [" << lo << ", " << hi << ")";
        ASSERT_EQ(any, !expected.empty())
            << "column " << c << ", rows [" << lo << ", " << hi << ")";
      }
}

} // namespace
