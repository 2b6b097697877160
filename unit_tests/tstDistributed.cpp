// The distributed layer on any number of ranks (ctest runs it on 1 to 4):
// every arm against a plain host loop over the global operator, the edges of
// partitions and change sets, bad input seen on one rank, the adaptive
// session's agreement, and steady-state steps that allocate nothing.

#include <hst/kokkos_ext/Compat.hpp>

#include "AllocationWatch.hpp"
#include "DistributedTestHelpers.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <sstream>

namespace
{

using namespace hst_test;
namespace wl = hst::workload;

template <class ExecutionSpace>
struct Distributed : ::testing::Test
{};
TYPED_TEST_SUITE(Distributed, DeviceTypes);

using ArmKind = hst::Arm;
template <class ExecutionSpace>
using DOperator =
    hst::DistributedOperator<Scalar, Ordinal, typename ExecutionSpace::memory_space>;

template <class LocalArm>
std::int64_t steps_of(hst::DistributedArm<LocalArm> const &arm)
{
  return arm.stats().steps;
}
template <class S, class O, class M>
std::int64_t steps_of(hst::DistributedAdaptiveSession<S, O, M> const &session)
{
  return session.report().steps;
}

struct Case
{
  std::string name;
  Triplets A;
  hst::BlockPartition rows;
  hst::BlockPartition cols;
};

// Runs `steps` steps of the workload through the distributed arm and
// returns the largest relative error over ranks against a host loop over
// the global operator (every rank runs the same global workload).
template <class ExecutionSpace, class Layout>
double run_against_reference(Case const &c, Kind kind, wl::WorkloadOptions w, int steps)
{
  using memory_space = typename ExecutionSpace::memory_space;
  int const rank = world_rank();
  int const width = w.width;
  DOperator<ExecutionSpace> op(MPI_COMM_WORLD, local_rows<ExecutionSpace>(c.A, c.rows),
                               c.rows, c.cols);
  auto const global = to_matrix<ExecutionSpace>(c.A);
  wl::Workload<Scalar, Ordinal> workload(global, w);
  auto const n_local = std::size_t(c.rows.local_size(rank));
  std::vector<Scalar> y_ref(std::size_t(c.A.n_rows) * width, 0.0);
  Kokkos::View<Scalar **, Layout, memory_space> y("y", n_local, width);
  double error = 0;
  auto const first = owned_changes(workload.columns(), workload.dx(), width, c.cols);
  with_arm(op, kind, to_view<typename ExecutionSpace::memory_space>(first.cols), width,
           [&](auto &arm) {
             for (int step = 0; step < steps; ++step, workload.advance())
             {
               auto const owned =
                   owned_changes(workload.columns(), workload.dx(), width, c.cols);
               arm.apply_cols(to_view<memory_space>(owned.cols),
                              to_matrix_view<Layout, memory_space>(
                                  owned.dx, owned.cols.size(), width),
                              y);
               reference_apply(c.A, workload.columns(), workload.dx(), width, y_ref);
             }
             auto const mine = to_host_rows(y);
             std::vector<Scalar> const expected(
                 y_ref.begin() + std::ptrdiff_t(c.rows.begin(rank) * width),
                 y_ref.begin() + std::ptrdiff_t(c.rows.end(rank) * width));
             // Scale by the global result: a rank's rows may all be zero.
             double scale = 0;
             for (auto v : y_ref)
               scale = std::max(scale, std::abs(v));
             double diff = 0;
             for (std::size_t i = 0; i < mine.size(); ++i)
               diff = std::max(diff, std::abs(mine[i] - expected[i]));
             error = scale > 0 ? diff / scale : diff;
           });
  return max_over_ranks(error);
}

std::vector<Case> oracle_cases()
{
  std::vector<Case> cases;
  auto add = [&](std::string name, Triplets A) {
    auto const n_rows = A.n_rows, n_cols = A.n_cols;
    cases.push_back({name + "/uniform", A,
                     hst::BlockPartition::uniform(n_rows, MPI_COMM_WORLD),
                     hst::BlockPartition::uniform(n_cols, MPI_COMM_WORLD)});
    cases.push_back(
        {name + "/uneven", std::move(A), uneven_rows(n_rows), uneven_cols(n_cols)});
  };
  add("grid2d", wl::grid_2d<Scalar, Ordinal>(20, 20));
  add("band_300x420", wl::rectangular_band<Scalar, Ordinal>(300, 420, 6));
  add("power_law", wl::power_law<Scalar, Ordinal>(400, 4, 3));
  return cases;
}

// Every arm, motion, layout and B = 1 and 8 against the host loop, 200
// steps each.
TYPED_TEST(Distributed, every_arm_matches_the_global_reference)
{
  using ExecutionSpace = TypeParam;
  for (auto const &c : oracle_cases())
    for (auto motion : {wl::Motion::drift, wl::Motion::jump, wl::Motion::frozen})
      for (int width : {1, 8})
        for (Kind kind : all_kinds)
        {
          wl::WorkloadOptions w;
          w.motion = motion;
          w.churn = 0.05;
          w.width = width;
          w.seed = 7;
          double const left =
              run_against_reference<ExecutionSpace, Kokkos::LayoutLeft>(c, kind, w, 200);
          EXPECT_LE(left, 1e-13)
              << c.name << ' ' << wl::to_string(motion) << " B=" << width << ' '
              << to_string(kind) << " LayoutLeft";
          double const right =
              run_against_reference<ExecutionSpace, Kokkos::LayoutRight>(c, kind, w, 200);
          EXPECT_LE(right, 1e-13)
              << c.name << ' ' << wl::to_string(motion) << " B=" << width << ' '
              << to_string(kind) << " LayoutRight";
        }
}

// Applies one step of explicit per-rank changes with every plain arm and
// checks y against the host loop. `owned[r]` are rank r's column ids.
template <class ExecutionSpace>
void expect_step(Triplets const &A, hst::BlockPartition const &rows,
                 hst::BlockPartition const &cols,
                 std::vector<std::vector<Ordinal>> const &owned, char const *what)
{
  using memory_space = typename ExecutionSpace::memory_space;
  int const rank = world_rank();
  int const width = 3;
  DOperator<ExecutionSpace> op(MPI_COMM_WORLD, local_rows<ExecutionSpace>(A, rows), rows,
                               cols);
  std::vector<Ordinal> all;
  std::vector<Scalar> all_dx;
  for (auto const &list : owned)
    for (Ordinal c : list)
    {
      all.push_back(c);
      for (int b = 0; b < width; ++b)
        all_dx.push_back(0.5 + 0.01 * c - 0.3 * b);
    }
  std::vector<Scalar> y_ref(std::size_t(A.n_rows) * width, 0.0);
  reference_apply(A, all, all_dx, width, y_ref);
  auto const mine = owned_changes(all, all_dx, width, cols);
  for (Kind kind : all_kinds)
    with_arm(op, kind, to_view<typename ExecutionSpace::memory_space>(mine.cols), width,
             [&](auto &arm) {
               Kokkos::View<Scalar **, Kokkos::LayoutLeft, memory_space> y(
                   "y", std::size_t(rows.local_size(rank)), width);
               arm.apply_cols(to_view<memory_space>(mine.cols),
                              to_matrix_view<Kokkos::LayoutLeft, memory_space>(
                                  mine.dx, mine.cols.size(), width),
                              y);
               std::vector<Scalar> const expected(
                   y_ref.begin() + std::ptrdiff_t(rows.begin(rank) * width),
                   y_ref.begin() + std::ptrdiff_t(rows.end(rank) * width));
               double const error =
                   max_over_ranks(relative_error(to_host_rows(y), expected));
               EXPECT_LE(error, 1e-14) << what << ", " << to_string(kind);
             });
}

std::vector<Ordinal> range_of(hst::BlockPartition const &p, int rank)
{
  std::vector<Ordinal> ids(std::size_t(p.local_size(rank)));
  std::iota(ids.begin(), ids.end(), Ordinal(p.begin(rank)));
  return ids;
}

TYPED_TEST(Distributed, edge_steps_match_the_global_reference)
{
  using ExecutionSpace = TypeParam;
  int const size = world_size();
  auto const A = wl::grid_2d<Scalar, Ordinal>(12, 9);
  auto const rows = uneven_rows(A.n_rows);
  auto const cols = uneven_cols(A.n_cols);
  std::vector<std::vector<Ordinal>> const none(static_cast<std::size_t>(size));
  expect_step<ExecutionSpace>(A, rows, cols, none, "no changes anywhere");

  auto all = none;
  for (int r = 0; r < size; ++r)
    all[r] = range_of(cols, r);
  expect_step<ExecutionSpace>(A, rows, cols, all, "every column");

  // The last rank (which owns columns) changes all of them, the others none.
  auto one_rank = none;
  one_rank[size - 1] = range_of(cols, size - 1);
  std::reverse(one_rank[size - 1].begin(), one_rank[size - 1].end());
  expect_step<ExecutionSpace>(A, rows, cols, one_rank, "one rank has every change");

  // One column, B = 3, on a rank that owns columns.
  auto single = none;
  single[size - 1] = {Ordinal(cols.begin(size - 1))};
  expect_step<ExecutionSpace>(A, rows, cols, single, "one column");

  // Rectangular, more columns than rows, uniform partitions.
  auto const wide = wl::rectangular_band<Scalar, Ordinal>(40, 90, 3);
  auto const wide_rows = hst::BlockPartition::uniform(wide.n_rows, MPI_COMM_WORLD);
  auto const wide_cols = hst::BlockPartition::uniform(wide.n_cols, MPI_COMM_WORLD);
  auto wide_all = none;
  for (int r = 0; r < size; ++r)
    wide_all[r] = range_of(wide_cols, r);
  expect_step<ExecutionSpace>(wide, wide_rows, wide_cols, wide_all, "rectangular");
}

// A block-diagonal operator whose blocks match the partition: no column is
// touched by another rank, so nothing is sent.
TYPED_TEST(Distributed, columns_nobody_else_touches_send_nothing)
{
  using ExecutionSpace = TypeParam;
  using memory_space = typename ExecutionSpace::memory_space;
  int const size = world_size(), rank = world_rank();
  Ordinal const block = 30;
  Triplets A(block * size, block * size);
  for (int r = 0; r < size; ++r)
  {
    auto const g = wl::grid_2d<Scalar, Ordinal>(6, 5);
    for (Ordinal i = 0; i < block; ++i)
      for (auto const &[c, v] : g.rows[i])
        A.add(r * block + i, r * block + c, v);
  }
  auto const p = hst::BlockPartition::uniform(A.n_rows, MPI_COMM_WORLD);
  DOperator<ExecutionSpace> op(MPI_COMM_WORLD, local_rows<ExecutionSpace>(A, p), p, p);
  EXPECT_TRUE(op.send_neighbours().empty());
  EXPECT_TRUE(op.recv_neighbours().empty());
  EXPECT_EQ(op.num_ghost_cols(), 0);
  auto scatter = op.scatter(2);
  auto const owned = range_of(p, rank);
  std::vector<Scalar> dx(owned.size() * 2, 1.0);
  Kokkos::View<Scalar **, Kokkos::LayoutLeft, memory_space> y("y", std::size_t(block), 2);
  scatter.apply_cols(
      to_view<memory_space>(owned),
      to_matrix_view<Kokkos::LayoutLeft, memory_space>(dx, owned.size(), 2), y);
  EXPECT_EQ(scatter.stats().messages_sent, 0);
  EXPECT_EQ(scatter.stats().bytes_sent, 0);
  std::vector<Scalar> y_ref(std::size_t(A.n_rows) * 2, 0.0);
  std::vector<Ordinal> every(std::size_t(A.n_cols));
  std::iota(every.begin(), every.end(), 0);
  std::vector<Scalar> every_dx(every.size() * 2, 1.0);
  reference_apply(A, every, every_dx, 2, y_ref);
  std::vector<Scalar> const expected(y_ref.begin() + rank * block * 2,
                                     y_ref.begin() + (rank + 1) * block * 2);
  EXPECT_LE(relative_error(to_host_rows(y), expected), 1e-14);
}

// Bytes sent follow the changes that cross a block boundary, not k.
TYPED_TEST(Distributed, only_boundary_changes_are_sent)
{
  using ExecutionSpace = TypeParam;
  using memory_space = typename ExecutionSpace::memory_space;
  int const rank = world_rank();
  auto const A = wl::grid_2d<Scalar, Ordinal>(16, 16);
  auto const p = hst::BlockPartition::uniform(A.n_rows, MPI_COMM_WORLD);
  DOperator<ExecutionSpace> op(MPI_COMM_WORLD, local_rows<ExecutionSpace>(A, p), p, p);
  auto scatter = op.scatter(4);
  auto const owned = range_of(p, rank);
  // Every owned column changes: each is sent once per other rank whose rows
  // touch it, which is exactly boundary_pairs().
  std::vector<Scalar> dx(owned.size() * 4, 1.0);
  Kokkos::View<Scalar **, Kokkos::LayoutLeft, memory_space> y("y", owned.size(), 4);
  scatter.apply_cols(
      to_view<memory_space>(owned),
      to_matrix_view<Kokkos::LayoutLeft, memory_space>(dx, owned.size(), 4), y);
  EXPECT_EQ(scatter.stats().changes_sent, op.boundary_pairs());
  EXPECT_EQ(scatter.stats().bytes_sent,
            op.boundary_pairs() *
                std::int64_t(sizeof(std::int32_t) + 4 * sizeof(Scalar)));
  std::int64_t crossing = 0;
  for (Ordinal c : owned)
    crossing += op.crosses_boundary(c);
  // A 5-point grid cut into row blocks: one grid row of columns on each side
  // of each cut crosses.
  if (world_size() == 1)
    EXPECT_EQ(crossing, 0);
  else
    EXPECT_GT(crossing, 0);
  EXPECT_LE(crossing, 2 * 16);
  EXPECT_EQ(op.send_neighbours().size(), op.recv_neighbours().size()); // symmetric A
}

TYPED_TEST(Distributed, block_partition_helpers)
{
  int const size = world_size(), rank = world_rank();
  auto const u = hst::BlockPartition::uniform(10, MPI_COMM_WORLD);
  EXPECT_EQ(u.ranks(), size);
  EXPECT_EQ(u.size(), 10);
  for (int r = 0; r < size; ++r)
    EXPECT_LE(u.local_size(0) - u.local_size(r), 1);
  for (std::int64_t id = 0; id < 10; ++id)
  {
    int const o = u.owner(id);
    EXPECT_GE(id, u.begin(o));
    EXPECT_LT(id, u.end(o));
  }
  auto const f =
      hst::BlockPartition::from_local_sizes(rank == 0 ? 0 : rank + 2, MPI_COMM_WORLD);
  EXPECT_EQ(f.local_size(rank), rank == 0 ? 0 : rank + 2);
  if (size > 1)
  {
    EXPECT_EQ(f.owner(0), 1); // rank 0 owns nothing
  }
  expect_invalid([] { hst::BlockPartition({0, 3, 2}); }, {"'offsets'", "decreases"});
  expect_invalid([] { hst::BlockPartition({1, 3}); }, {"'offsets'", "start at 0"});
  // A negative size on one rank: every rank throws, naming it.
  expect_invalid(
      [&] {
        hst::BlockPartition::from_local_sizes(rank == size - 1 ? -4 : 3, MPI_COMM_WORLD);
      },
      {"'n_local'", "-4", "rank " + std::to_string(size - 1)});
}

// Bad input on one rank: every rank throws std::invalid_argument naming that
// rank, nobody hangs, every y is untouched, and the next good step works.
TYPED_TEST(Distributed, bad_input_on_one_rank_throws_on_every_rank)
{
  using ExecutionSpace = TypeParam;
  using memory_space = typename ExecutionSpace::memory_space;
  int const size = world_size(), rank = world_rank();
  int const bad = size - 1;
  auto const A = wl::grid_2d<Scalar, Ordinal>(10, 10);
  auto const p = hst::BlockPartition::uniform(A.n_rows, MPI_COMM_WORLD);
  DOperator<ExecutionSpace> op(MPI_COMM_WORLD, local_rows<ExecutionSpace>(A, p), p, p);
  int const width = 2;
  auto const n_local = std::size_t(p.local_size(rank));
  std::vector<Ordinal> good = {Ordinal(p.begin(rank)), Ordinal(p.begin(rank) + 1)};
  std::vector<Scalar> dx(good.size() * width, 1.5);
  auto const good_dx = to_matrix_view<Kokkos::LayoutLeft, memory_space>(dx, 2, width);
  auto const rank_text = "on rank " + std::to_string(bad);

  for (Kind kind : all_kinds)
    with_arm(
        op, kind, to_view<typename ExecutionSpace::memory_space>(good), width,
        [&](auto &arm) {
          Kokkos::View<Scalar **, Kokkos::LayoutLeft, memory_space> y("y", n_local,
                                                                      width);
          Kokkos::deep_copy(y, 7.0);
          auto const before = to_host_rows(y);
          auto cols = good;
          // Out of this rank's range: the first column of the next rank (or n).
          if (rank == bad)
            cols[1] = Ordinal(p.end(rank));
          expect_invalid([&] { arm.apply_cols(to_view<memory_space>(cols), good_dx, y); },
                         {rank_text, "'cols'", std::to_string(p.end(bad)), "outside"});
          cols = good;
          if (rank == bad)
            cols[1] = cols[0];
          expect_invalid([&] { arm.apply_cols(to_view<memory_space>(cols), good_dx, y); },
                         {rank_text, "'cols'", "twice"});
          auto const short_dx =
              to_matrix_view<Kokkos::LayoutLeft, memory_space>(dx, 1, width);
          expect_invalid(
              [&] {
                arm.apply_cols(to_view<memory_space>(good),
                               rank == bad ? short_dx : good_dx, y);
              },
              {rank_text, "'dx'", "1 rows"});
          Kokkos::View<Scalar **, Kokkos::LayoutLeft, memory_space> wrong_y(
              "wrong_y", n_local + 1, width);
          expect_invalid(
              [&] {
                if (rank == bad)
                  arm.apply_cols(to_view<memory_space>(good), good_dx, wrong_y);
                else
                  arm.apply_cols(to_view<memory_space>(good), good_dx, y);
              },
              {rank_text, "'y'"});
          EXPECT_EQ(to_host_rows(y), before)
              << "a rejected step wrote y, " << to_string(kind);
          EXPECT_EQ(steps_of(arm), 0) << to_string(kind);
          // The next good step runs on every rank.
          arm.apply_cols(to_view<memory_space>(good), good_dx, y);
          EXPECT_EQ(steps_of(arm), 1) << to_string(kind);
        });

  // B that differs across ranks, or is not positive on one.
  if (size > 1)
    expect_invalid([&] { (void)op.baseline(rank == bad ? 4 : 2); },
                   {"'B'", "across the ranks"});
  expect_invalid([&] { (void)op.scatter(rank == bad ? 0 : 2); },
                 {rank_text, "'B' must be positive"});
  // Session options every rank must agree on: a bad one on one rank makes
  // every rank throw; a strict schedule is refused (the ghost arm's set is
  // other ranks' changes).
  hst::SessionOptions retire;
  retire.retire_after = rank == bad ? 0 : 64;
  expect_invalid([&] { (void)op.session(to_view<memory_space>(good), 2, retire); },
                 {rank_text, "'options.retire_after'"});
  hst::SessionOptions strict;
  strict.strict = true;
  expect_invalid([&] { (void)op.session(to_view<memory_space>(good), 2, strict); },
                 {"on rank 0", "'options.strict'"});
  // The adaptive session checks the scheduled arm's options when it is made,
  // not at the step that first runs that arm.
  hst::DistributedAdaptiveOptions adaptive_retire;
  adaptive_retire.session = retire;
  expect_invalid(
      [&] { (void)op.adaptive(to_view<memory_space>(good), 2, adaptive_retire); },
      {rank_text, "'options.session.retire_after'"});
  hst::DistributedAdaptiveOptions adaptive_strict;
  adaptive_strict.session = strict;
  expect_invalid(
      [&] { (void)op.adaptive(to_view<memory_space>(good), 2, adaptive_strict); },
      {"on rank 0", "'options.session.strict'"});
  // The settle rule's cap: bad on one rank, or different on one rank (it
  // changes which arm runs at which step, so every rank must hold the same).
  hst::DistributedAdaptiveOptions adaptive_settle;
  adaptive_settle.scheduled_settle_steps = rank == bad ? -1 : 3;
  expect_invalid(
      [&] { (void)op.adaptive(to_view<memory_space>(good), 2, adaptive_settle); },
      {rank_text, "'options.scheduled_settle_steps' must be >= 0"});
  if (size > 1)
  {
    adaptive_settle.scheduled_settle_steps = rank == bad ? 4 : 3;
    expect_invalid(
        [&] { (void)op.adaptive(to_view<memory_space>(good), 2, adaptive_settle); },
        {"'options' differs from rank 0's"});
  }
  // More columns than the rank owns (one repeats).
  with_arm(op, Kind::scatter, to_view<typename ExecutionSpace::memory_space>(good), width,
           [&](auto &arm) {
             Kokkos::View<Scalar **, Kokkos::LayoutLeft, memory_space> y("y", n_local,
                                                                         width);
             auto many = range_of(p, rank);
             if (rank == bad)
               many.push_back(many.empty() ? 0 : many.front());
             std::vector<Scalar> many_dx(many.size() * width, 1.0);
             expect_invalid(
                 [&] {
                   arm.apply_cols(to_view<memory_space>(many),
                                  to_matrix_view<Kokkos::LayoutLeft, memory_space>(
                                      many_dx, many.size(), width),
                                  y);
                 },
                 {rank_text, "'cols'", "owns only"});
           });
  // Expected columns outside the rank's range.
  std::vector<Ordinal> outside = {Ordinal(rank == bad ? A.n_cols : p.begin(rank))};
  if (p.local_size(rank) == 0 && rank != bad)
    outside.clear();
  expect_invalid([&] { (void)op.session(to_view<memory_space>(outside), 2); },
                 {rank_text, "'expected_owned_cols'"});
  expect_invalid([&] { (void)op.adaptive(to_view<memory_space>(outside), 2); },
                 {rank_text, "'expected_owned_cols'"});
  // Expected columns with a repeat on one rank (found with the local
  // operator's column stamps).
  std::vector<Ordinal> twice = good;
  if (rank == bad)
    twice.push_back(good.front());
  expect_invalid([&] { (void)op.adaptive(to_view<memory_space>(twice), 2); },
                 {rank_text, "'expected_owned_cols'", "twice"});
  expect_invalid([&] { (void)op.session(to_view<memory_space>(twice), 2); },
                 {rank_text, "'expected_owned_cols'", "twice"});
}

TYPED_TEST(Distributed, bad_construction_on_one_rank_throws_on_every_rank)
{
  using ExecutionSpace = TypeParam;
  int const size = world_size(), rank = world_rank();
  int const bad = size - 1;
  auto const A = wl::grid_2d<Scalar, Ordinal>(8, 8);
  auto const p = hst::BlockPartition::uniform(A.n_rows, MPI_COMM_WORLD);
  auto const rank_text = "on rank " + std::to_string(bad);
  // Rows for the wrong block on one rank.
  auto const other = hst::BlockPartition::uniform(A.n_rows - 1, MPI_COMM_WORLD);
  auto const wrong_rows = local_rows<ExecutionSpace>(
      A, rank == bad && p.local_size(bad) != other.local_size(bad) ? other : p);
  if (p.local_size(bad) != other.local_size(bad))
    expect_invalid(
        [&] { DOperator<ExecutionSpace> op(MPI_COMM_WORLD, wrong_rows, p, p); },
        {rank_text, "'A_local'", "rows"});
  // A column partition that differs from rank 0's (same size).
  if (size > 1)
  {
    auto const mine = rank == bad ? uneven_cols(A.n_cols) : p;
    expect_invalid(
        [&] {
          DOperator<ExecutionSpace> op(MPI_COMM_WORLD, local_rows<ExecutionSpace>(A, p),
                                       p, mine);
        },
        {rank_text, "'cols'", "rank 0's partition"});
    // A partition over the wrong number of ranks.
    expect_invalid(
        [&] {
          DOperator<ExecutionSpace> op(MPI_COMM_WORLD, local_rows<ExecutionSpace>(A, p),
                                       hst::BlockPartition({0, A.n_rows}), p);
        },
        {"on rank 0", "'rows'", "1 ranks"});
  }
  // Column ids beyond the partitioned columns.
  Triplets wide = A;
  wide.add(Ordinal(p.end(bad) - 1), A.n_cols, 1.0);
  expect_invalid(
      [&] {
        DOperator<ExecutionSpace> op(MPI_COMM_WORLD, local_rows<ExecutionSpace>(wide, p),
                                     p, p);
      },
      {rank_text, "'A_local'", "column id " + std::to_string(A.n_cols)});
}

// With a clock that makes each rank see different arm costs, every rank
// chooses the arm whose slowest rank is fastest (MAX, then min).
// Runs `steps` steps of an adaptive session with `options` (their clock set
// by the caller) on a 10 x 10 grid, every rank changing the same owned
// columns (at most 3) at every step; returns the session's report.
template <class ExecutionSpace>
hst::DistributedAdaptiveReport
run_on_a_standing_set(hst::DistributedAdaptiveOptions const &options, int steps)
{
  using memory_space = typename ExecutionSpace::memory_space;
  int const rank = world_rank();
  auto const A = wl::grid_2d<Scalar, Ordinal>(10, 10);
  auto const p = hst::BlockPartition::uniform(A.n_rows, MPI_COMM_WORLD);
  DOperator<ExecutionSpace> op(MPI_COMM_WORLD, local_rows<ExecutionSpace>(A, p), p, p);
  std::vector<Ordinal> owned = range_of(p, rank);
  owned.resize(std::min<std::size_t>(owned.size(), 3));
  auto session = op.adaptive(to_view<memory_space>(owned), 2, options);
  std::vector<Scalar> dx(owned.size() * 2, 1.0);
  Kokkos::View<Scalar **, Kokkos::LayoutLeft, memory_space> y(
      "y", std::size_t(p.local_size(rank)), 2);
  for (int step = 0; step < steps; ++step)
    session.apply_cols(
        to_view<memory_space>(owned),
        to_matrix_view<Kokkos::LayoutLeft, memory_space>(dx, owned.size(), 2), y);
  return session.report();
}

TYPED_TEST(Distributed, adaptive_agrees_on_the_arm_with_the_lowest_slowest_rank_cost)
{
  int const size = world_size(), rank = world_rank();
  // Seconds per step of each arm (indexed by hst::Arm) on rank r: rank 0
  // finds the exact-set arm fastest; on 2+ ranks, rank 1 finds it slowest.
  auto cost = [](int r, hst::Arm a) {
    double const table[2][3] = {{5, 1, 3}, {5, 9, 3}};
    return table[std::min(r, 1)][int(a)];
  };
  hst::DistributedAdaptiveOptions options;
  options.sample_period = 0;
  options.recheck_period = 0;
  options.defer_scheduled = false; // the set below stands; every arm is probed
  options.cut_ratio = std::numeric_limits<double>::infinity(); // and runs all its steps
  // The probe order is options.arms, warmup_steps + measure_steps steps each;
  // the clock is read twice per timed step.
  std::int64_t reads = 0;
  double now = 0;
  options.clock = [&] {
    std::int64_t const step = reads / 2;
    if (reads++ % 2 == 1)
      now += cost(rank, options.arms[std::size_t(step / 3)]);
    return now;
  };
  auto const report = run_on_a_standing_set<TypeParam>(options, 12);
  ASSERT_EQ(report.decisions.size(), 1u);
  auto const expected = size > 1 ? hst::Arm::scatter : hst::Arm::exact_set;
  EXPECT_EQ(report.decisions[0].chosen, expected);
  EXPECT_EQ(report.decisions[0].step, 9);
  EXPECT_EQ(report.arm_steps[int(expected)], 3 + 3);
  for (hst::Arm a : {hst::Arm::scheduled, hst::Arm::exact_set, hst::Arm::scatter})
  {
    double worst = cost(0, a);
    if (size > 1)
      worst = std::max(worst, cost(1, a));
    EXPECT_DOUBLE_EQ(report.decisions[0].us_per_step[int(a)], 1e6 * worst);
  }
  std::ostringstream text;
  text << report;
  EXPECT_TRUE(same_on_every_rank(text.str())) << text.str();
}

// The cut is decided on the slowest rank's times: only rank 0 finds the
// scheduled arm slow, and every rank ends its block after one measured step.
TYPED_TEST(Distributed, adaptive_cuts_an_arm_slow_on_one_rank_on_every_rank)
{
  int const rank = world_rank();
  hst::DistributedAdaptiveOptions options;
  options.sample_period = 0;
  options.recheck_period = 0;
  options.defer_scheduled = false;
  options.cut_ratio = 2;
  // Seconds of each timed step, in probe order: exact_set (warm-up, 2
  // measured), scheduled (warm-up, then 5 s on rank 0: cut), scatter.
  std::vector<double> const times = {100, 1,   1,  100, rank == 0 ? 5.0 : 1.2,
                                     100, 1.5, 1.5};
  std::size_t reads = 0;
  double now = 0;
  options.clock = [&] {
    if (reads++ % 2 == 1)
      now += times.at(reads / 2 - 1);
    return now;
  };
  auto const report = run_on_a_standing_set<TypeParam>(options, int(times.size()));
  ASSERT_EQ(report.decisions.size(), 1u);
  auto const &d = report.decisions[0];
  EXPECT_EQ(d.step, 8);
  EXPECT_EQ(d.chosen, hst::Arm::exact_set);
  EXPECT_TRUE(d.cut[int(hst::Arm::scheduled)]);
  EXPECT_EQ(report.arm_steps[int(hst::Arm::scheduled)], 2);
  EXPECT_DOUBLE_EQ(d.us_per_step[int(hst::Arm::scheduled)], 5e6);
  std::ostringstream text;
  text << report;
  EXPECT_NE(text.str().find("; scheduled cut after 1 measured step)"), std::string::npos)
      << text.str();
  EXPECT_TRUE(same_on_every_rank(text.str())) << text.str();
}

// On real clocks each rank times something else; the decisions, the report
// and the arm each step ran are still the same everywhere.
TYPED_TEST(Distributed, adaptive_decisions_are_identical_on_every_rank)
{
  using ExecutionSpace = TypeParam;
  using memory_space = typename ExecutionSpace::memory_space;
  auto const A = wl::grid_2d<Scalar, Ordinal>(40, 40);
  auto const p = hst::BlockPartition::uniform(A.n_rows, MPI_COMM_WORLD);
  DOperator<ExecutionSpace> op(MPI_COMM_WORLD, local_rows<ExecutionSpace>(A, p), p, p);
  auto const global = to_matrix<ExecutionSpace>(A);
  wl::WorkloadOptions w;
  w.motion = wl::Motion::jump;
  w.churn = 0.2;
  w.width = 4;
  wl::Workload<Scalar, Ordinal> workload(global, w);
  hst::DistributedAdaptiveOptions options;
  options.sample_period = 4;
  options.time_shift_ratio = 1.01; // samples shift often: re-probes happen
  options.shift_samples = 1;
  options.recheck_period = 20;
  auto const first = owned_changes(workload.columns(), workload.dx(), 4, p);
  auto session = op.adaptive(to_view<memory_space>(first.cols), 4, options);
  Kokkos::View<Scalar **, Kokkos::LayoutLeft, memory_space> y(
      "y", std::size_t(p.local_size(world_rank())), 4);
  for (int step = 0; step < 150; ++step, workload.advance())
  {
    auto const owned = owned_changes(workload.columns(), workload.dx(), 4, p);
    session.apply_cols(
        to_view<memory_space>(owned.cols),
        to_matrix_view<Kokkos::LayoutLeft, memory_space>(owned.dx, owned.cols.size(), 4),
        y);
  }
  std::ostringstream text;
  text << session.report();
  EXPECT_GE(session.report().decisions.size(), 2u) << text.str();
  EXPECT_TRUE(same_on_every_rank(text.str())) << text.str();
}

// One step of `cols` (B = 2, dx values from the step t) through the session
// and through a scatter arm into a reference y.
template <class MemorySpace, class Session, class Reference, class Y>
void apply_with_reference(Session &session, Reference &reference,
                          std::vector<Ordinal> const &cols, int t, Y const &y,
                          Y const &y_reference)
{
  std::vector<Scalar> dx(cols.size() * 2);
  for (std::size_t i = 0; i < dx.size(); ++i)
    dx[i] = 1.0 + 0.25 * double(i) + double(t);
  auto const c = to_view<MemorySpace>(cols);
  auto const d = to_matrix_view<Kokkos::LayoutLeft, MemorySpace>(dx, cols.size(), 2);
  session.apply_cols(c, d, y);
  reference.apply_cols(c, d, y_reference);
}

// While no rank's set moves the scheduled arm is deferred on every rank
// (never made); once the set moves on one rank only, a sample sees it on
// every rank and the re-probe runs the scheduled arm everywhere.
TYPED_TEST(Distributed, adaptive_defers_the_scheduled_arm_until_a_set_moves_on_any_rank)
{
  using ExecutionSpace = TypeParam;
  using memory_space = typename ExecutionSpace::memory_space;
  int const size = world_size(), rank = world_rank();
  auto const A = wl::grid_2d<Scalar, Ordinal>(12, 12);
  auto const p = hst::BlockPartition::uniform(A.n_rows, MPI_COMM_WORLD);
  DOperator<ExecutionSpace> op(MPI_COMM_WORLD, local_rows<ExecutionSpace>(A, p), p, p);
  hst::DistributedAdaptiveOptions options;
  options.sample_period = 4;
  options.recheck_period = 0;
  // Every timed step takes 1 us on every rank: only a move can start a
  // probe (on real clocks a slow sample on a loaded machine starts one too).
  double now = 0;
  options.clock = [&] { return now += 1e-6; };
  std::vector<Ordinal> const range = range_of(p, rank);
  ASSERT_GE(range.size(), 5u);
  std::vector<Ordinal> const sets[3] = {{range.begin(), range.begin() + 3},
                                        {range.begin() + 1, range.begin() + 4},
                                        {range.begin() + 2, range.begin() + 5}};
  auto const &standing = sets[0];
  auto session = op.adaptive(to_view<memory_space>(standing), 2, options);
  auto reference = op.scatter(2);
  Kokkos::View<Scalar **, Kokkos::LayoutLeft, memory_space> y(
      "y", std::size_t(p.local_size(rank)), 2);
  Kokkos::View<Scalar **, Kokkos::LayoutLeft, memory_space> y_reference(
      "y_reference", std::size_t(p.local_size(rank)), 2);
  auto step = [&](std::vector<Ordinal> const &cols, int t) {
    apply_with_reference<memory_space>(session, reference, cols, t, y, y_reference);
  };
  int t = 0;
  for (; t < 12; ++t)
    step(standing, t);
  auto const &report = session.report();
  ASSERT_EQ(report.decisions.size(), 1u);
  EXPECT_TRUE(report.decisions[0].scheduled_deferred);
  EXPECT_EQ(report.decisions[0].same_set_steps, 6);
  EXPECT_NE(report.decisions[0].chosen, hst::Arm::scheduled);
  EXPECT_EQ(session.scheduled(), nullptr);
  // The last rank's set changes at every step; the others' stands.
  for (; t < 40; ++t)
    step(rank == size - 1 ? sets[t % 3] : standing, t);
  ASSERT_EQ(report.decisions.size(), 2u);
  EXPECT_EQ(report.decisions[1].reason,
            "the set moved after a probe that deferred scheduled");
  EXPECT_NE(session.scheduled(), nullptr);
  EXPECT_GE(report.arm_steps[std::size_t(hst::Arm::scheduled)], 3);
  EXPECT_LE(relative_error(to_host_rows(y), to_host_rows(y_reference)), 1e-13);
  std::ostringstream text;
  text << report;
  EXPECT_NE(text.str().find("scheduled deferred (the same set on 6 steps)"),
            std::string::npos)
      << text.str();
  EXPECT_TRUE(same_on_every_rank(text.str())) << text.str();
}

// A set that jumps on one rank only (its columns replaced by far-apart ones
// at every step, each opening a column tile the previous set did not touch)
// defers the scheduled arm on every rank: the ranks' largest opened-tile
// count over the largest column count rides in the steps' MPI_Allreduce.
TYPED_TEST(Distributed, adaptive_defers_the_scheduled_arm_when_a_set_jumps_on_any_rank)
{
  using ExecutionSpace = TypeParam;
  using memory_space = typename ExecutionSpace::memory_space;
  int const size = world_size(), rank = world_rank();
  auto const A = wl::grid_2d<Scalar, Ordinal>(40, 40);
  auto const p = hst::BlockPartition::uniform(A.n_rows, MPI_COMM_WORLD);
  DOperator<ExecutionSpace> op(MPI_COMM_WORLD, local_rows<ExecutionSpace>(A, p), p, p);
  hst::DistributedAdaptiveOptions options;
  options.sample_period = 4;
  options.recheck_period = 0;
  double now = 0;
  options.clock = [&] { return now += 1e-6; }; // no timer starts a probe
  std::vector<Ordinal> const range = range_of(p, rank);
  ASSERT_GE(range.size(), 400u);
  std::vector<Ordinal> const standing(range.begin(), range.begin() + 3);
  auto jumped = [&](int t) {
    std::vector<Ordinal> cols;
    for (int j = 0; j < 8; ++j)
      cols.push_back(range[std::size_t(t * 97 + j * 41) % range.size()]);
    return cols;
  };
  bool const jumps = rank == size - 1;
  auto const first = jumps ? jumped(0) : standing;
  auto session = op.adaptive(to_view<memory_space>(first), 2, options);
  auto reference = op.scatter(2);
  Kokkos::View<Scalar **, Kokkos::LayoutLeft, memory_space> y(
      "y", std::size_t(p.local_size(rank)), 2);
  Kokkos::View<Scalar **, Kokkos::LayoutLeft, memory_space> y_reference(
      "y_reference", std::size_t(p.local_size(rank)), 2);
  for (int t = 0; t < 30; ++t)
    apply_with_reference<memory_space>(session, reference, jumps ? jumped(t) : standing,
                                       t, y, y_reference);
  auto const &report = session.report();
  std::ostringstream text;
  text << report;
  ASSERT_EQ(report.decisions.size(), 1u) << text.str(); // not watched: the set moves
  auto const &d = report.decisions[0];
  EXPECT_TRUE(d.scheduled_jumping) << text.str();
  EXPECT_FALSE(d.scheduled_deferred);
  EXPECT_EQ(d.jump_pairs, 2); // the exact-set arm's steps 1 and 2
  EXPECT_GE(d.jump_share, options.defer_jump_share);
  EXPECT_LE(d.jump_share, 1.0);
  EXPECT_EQ(session.scheduled(), nullptr);
  EXPECT_EQ(report.arm_steps[std::size_t(hst::Arm::scheduled)], 0);
  EXPECT_NE(
      text.str().find("scheduled deferred (the set jumps: entering columns opened "),
      std::string::npos)
      << text.str();
  EXPECT_TRUE(same_on_every_rank(text.str())) << text.str();
  EXPECT_LE(relative_error(to_host_rows(y), to_host_rows(y_reference)), 1e-13);
}

// With a cost model, each rank's predictions travel in the step's
// MPI_Allreduce: one rank whose constants price the scatter arm at a second
// per step makes every rank skip it (never made), and the scheduled arm's
// prediction (not in options.arms, so never timed; scaled by the timed
// arm's measured over predicted time, 1 here) reads the slowest rank's
// counters: entries of its rows in the changed columns of
// all ranks, and the share of them in columns that entered or left.
TYPED_TEST(Distributed, adaptive_model_predictions_are_the_slowest_ranks_and_skip_alike)
{
  using ExecutionSpace = TypeParam;
  using memory_space = typename ExecutionSpace::memory_space;
  int const size = world_size(), rank = world_rank();
  auto const A = wl::grid_2d<Scalar, Ordinal>(10, 10);
  auto const p = hst::BlockPartition::uniform(A.n_rows, MPI_COMM_WORLD);
  DOperator<ExecutionSpace> op(MPI_COMM_WORLD, local_rows<ExecutionSpace>(A, p), p, p);
  hst::DistributedAdaptiveOptions options;
  options.arms = {hst::Arm::exact_set, hst::Arm::scatter};
  options.sample_period = 0;
  options.recheck_period = 0;
  double now = 0;
  options.clock = [&] { return now += 1e-6; }; // every timed step: 1 us
  options.model.emplace();
  // Scheduled: 1 us per entry, 1 ms per changed entry (in microseconds the
  // prediction is entries + 1000 x changed entries).
  options.model->arm[int(hst::Arm::scheduled)] = {0, 1e-6, 1e-3};
  options.model->arm[int(hst::Arm::exact_set)] = {1e-6, 0, 0};
  options.model->arm[int(hst::Arm::scatter)] = {rank == size - 1 ? 1.0 : 1e-6, 0, 0};
  // Two sets of each rank's owned columns, alternating.
  std::vector<Ordinal> const range = range_of(p, rank);
  ASSERT_GE(range.size(), 4u);
  std::vector<Ordinal> const sets[2] = {{range.begin(), range.begin() + 3},
                                        {range.begin() + 1, range.begin() + 4}};
  auto session = op.adaptive(to_view<memory_space>(sets[0]), 2, options);
  auto reference = op.baseline(2);
  Kokkos::View<Scalar **, Kokkos::LayoutLeft, memory_space> y(
      "y", std::size_t(p.local_size(rank)), 2),
      y_reference("y_reference", std::size_t(p.local_size(rank)), 2);
  int const steps = 3 + 40; // the probe: exact_set's block only
  for (int t = 0; t < steps; ++t)
  {
    auto const &cols = sets[t % 2];
    std::vector<Scalar> dx(cols.size() * 2, 1.0 + double(t));
    auto const c = to_view<memory_space>(cols);
    auto const d = to_matrix_view<Kokkos::LayoutLeft, memory_space>(dx, cols.size(), 2);
    session.apply_cols(c, d, y);
    reference.apply_cols(c, d, y_reference);
  }
  EXPECT_LE(relative_error(to_host_rows(y), to_host_rows(y_reference)), 1e-13);
  auto const &report = session.report();
  ASSERT_EQ(report.decisions.size(), 1u);
  auto const &d = report.decisions[0];
  EXPECT_EQ(d.step, 3);
  EXPECT_EQ(d.chosen, hst::Arm::exact_set);
  EXPECT_TRUE(d.skipped[int(hst::Arm::scatter)]);
  EXPECT_EQ(session.scatter(), nullptr);
  EXPECT_EQ(report.arm_steps[int(hst::Arm::scatter)], 0);
  // a second per step, scaled by the exact-set arm's ratio (1 up to the
  // fake clock's rounding)
  EXPECT_NEAR(d.skip_us[int(hst::Arm::scatter)], 1e6, 1e-3);
  EXPECT_DOUBLE_EQ(d.skip_bound_us, 1.0);
  // The probe's last step (t = 2) ran sets[0] after sets[1] on every rank.
  std::vector<bool> in[2] = {std::vector<bool>(std::size_t(A.n_cols)),
                             std::vector<bool>(std::size_t(A.n_cols))};
  for (int r = 0; r < size; ++r)
  {
    auto const owned = range_of(p, r);
    if (owned.size() < 4)
      continue;
    for (int s = 0; s < 2; ++s)
      for (int i = s; i < s + 3; ++i)
        in[s][std::size_t(owned[std::size_t(i)])] = true;
  }
  // The churn is weighed over the counted steps (1 and 2; hst::Churn, each
  // new step weighing 0.5): both changed the set, and the changed entries'
  // share of step 1's entries (set 1) and of step 2's (set 0) count half
  // each; the prediction is for step 2's entries.
  double worst = 0;
  for (int r = 0; r < size; ++r)
  {
    double entries[2] = {0, 0}, changed = 0;
    for (auto row = p.begin(r); row < p.end(r); ++row)
      for (auto const &[c, v] : A.rows[std::size_t(row)])
      {
        entries[0] += in[0][std::size_t(c)];
        entries[1] += in[1][std::size_t(c)];
        changed += in[0][std::size_t(c)] != in[1][std::size_t(c)];
      }
    double const share = 0.5 * changed / entries[1] + 0.5 * changed / entries[0];
    worst = std::max(worst, entries[0] + 1000 * share * entries[0]);
  }
  EXPECT_NEAR(d.predicted_us_per_step[int(hst::Arm::scheduled)], worst, 1e-9 * worst);
  std::ostringstream text;
  text << report;
  EXPECT_NE(text.str().find("; scatter not probed (predicted "), std::string::npos)
      << text.str();
  EXPECT_TRUE(same_on_every_rank(text.str())) << text.str();
}

// Settled with a cost model: each sample's predictions (the step before it
// keeps its ids) are combined over the ranks, and two samples in a row that
// put the active arm above model_margin x another start a re-probe on every
// rank at the same step.
// Every timed step takes 1 us; the model prices the scatter arm by its
// entries and the exact-set arm by the step. Settled on the exact-set arm (a
// tie: the first), when the set shrinks eightfold after the probe the
// scatter arm's prediction (scaled by what its probe steps measured) falls
// below the exact-set arm's by more than model_margin.
TYPED_TEST(Distributed, adaptive_model_samples_start_a_reprobe_on_every_rank)
{
  using ExecutionSpace = TypeParam;
  using memory_space = typename ExecutionSpace::memory_space;
  int const rank = world_rank();
  auto const A = wl::grid_2d<Scalar, Ordinal>(10, 10);
  auto const p = hst::BlockPartition::uniform(A.n_rows, MPI_COMM_WORLD);
  DOperator<ExecutionSpace> op(MPI_COMM_WORLD, local_rows<ExecutionSpace>(A, p), p, p);
  hst::DistributedAdaptiveOptions options;
  options.arms = {hst::Arm::exact_set, hst::Arm::scatter};
  options.sample_period = 4;
  options.recheck_period = 0;
  options.time_shift_ratio = 1e6; // only the model can start a re-probe
  double now = 0;
  options.clock = [&] { return now += 1e-6; };
  options.model.emplace();
  options.model->arm[int(hst::Arm::scatter)] = {0, 1e-9, 0};
  options.model->arm[int(hst::Arm::exact_set)] = {1e-6, 0, 0};
  options.model->arm[int(hst::Arm::scheduled)] = {1e-6, 0, 0};
  std::vector<Ordinal> const range = range_of(p, rank);
  ASSERT_GE(range.size(), 8u);
  std::vector<Ordinal> const small(range.begin(), range.begin() + 1),
      big(range.begin(), range.begin() + 8);
  auto session = op.adaptive(to_view<memory_space>(big), 2, options);
  Kokkos::View<Scalar **, Kokkos::LayoutLeft, memory_space> y(
      "y", std::size_t(p.local_size(rank)), 2);
  auto const &report = session.report();
  for (int t = 0; t < 40; ++t)
  {
    auto const &cols = t < 12 ? big : small;
    std::vector<Scalar> dx(cols.size() * 2, 1.0);
    session.apply_cols(
        to_view<memory_space>(cols),
        to_matrix_view<Kokkos::LayoutLeft, memory_space>(dx, cols.size(), 2), y);
    if (t == 11)
    {
      ASSERT_EQ(report.decisions.size(), 1u);
      EXPECT_EQ(report.decisions[0].chosen, hst::Arm::exact_set); // a tie: the first
      EXPECT_FALSE(report.probing) << "no re-probe on the big set";
    }
  }
  ASSERT_GE(report.decisions.size(), 2u);
  EXPECT_EQ(report.decisions[1].reason.rfind("predicted scatter ", 0), 0u)
      << report.decisions[1].reason;
  std::ostringstream text;
  text << report;
  EXPECT_TRUE(same_on_every_rank(text.str())) << text.str();
}

// Making the session makes no arm; each is made, on every rank, at the
// first step that runs it, and an arm the probe never runs is never made.
TYPED_TEST(Distributed, adaptive_makes_each_arm_at_its_first_step)
{
  using ExecutionSpace = TypeParam;
  using memory_space = typename ExecutionSpace::memory_space;
  auto const A = wl::grid_2d<Scalar, Ordinal>(12, 12);
  auto const p = hst::BlockPartition::uniform(A.n_rows, MPI_COMM_WORLD);
  DOperator<ExecutionSpace> op(MPI_COMM_WORLD, local_rows<ExecutionSpace>(A, p), p, p);
  auto const global = to_matrix<ExecutionSpace>(A);
  wl::WorkloadOptions w;
  w.churn = 0.2;
  w.width = 2;
  wl::Workload<Scalar, Ordinal> workload(global, w);
  hst::DistributedAdaptiveOptions options;
  options.arms = {hst::Arm::scheduled, hst::Arm::scatter}; // never the exact set
  options.defer_scheduled = false; // in the listed order (deferral: its own test)
  options.warmup_steps = 1;
  options.measure_steps = 1;
  auto const first = owned_changes(workload.columns(), workload.dx(), 2, p);
  auto session = op.adaptive(to_view<memory_space>(first.cols), 2, options);
  EXPECT_EQ(session.scheduled(), nullptr);
  EXPECT_EQ(session.exact_set(), nullptr);
  EXPECT_EQ(session.scatter(), nullptr);
  Kokkos::View<Scalar **, Kokkos::LayoutLeft, memory_space> y(
      "y", std::size_t(p.local_size(world_rank())), 2);
  Kokkos::View<Scalar **, Kokkos::LayoutLeft, memory_space> y_scatter(
      "y_scatter", std::size_t(p.local_size(world_rank())), 2);
  auto reference = op.scatter(2);
  for (int step = 0; step < 8; ++step, workload.advance())
  {
    auto const owned = owned_changes(workload.columns(), workload.dx(), 2, p);
    auto const cols = to_view<memory_space>(owned.cols);
    auto const dx =
        to_matrix_view<Kokkos::LayoutLeft, memory_space>(owned.dx, owned.cols.size(), 2);
    session.apply_cols(cols, dx, y);
    reference.apply_cols(cols, dx, y_scatter);
    // Probe order: scheduled (warm-up, measured), then scatter.
    EXPECT_NE(session.scheduled(), nullptr) << "step " << step;
    EXPECT_EQ(session.scatter() != nullptr, step >= 2) << "step " << step;
    EXPECT_EQ(session.exact_set(), nullptr) << "step " << step;
  }
  // The arm ran the steps the report gives it (2 probe steps, more if chosen).
  EXPECT_EQ(session.scheduled()->stats().steps,
            session.report().arm_steps[std::size_t(hst::Arm::scheduled)]);
  EXPECT_GE(session.scheduled()->stats().steps, 2);
  EXPECT_LE(relative_error(to_host_rows(y), to_host_rows(y_scatter)), 1e-13);
}

// Making a distributed adaptive session allocates the same bytes (heap,
// with no Kokkos tool attached, and Kokkos) on two operators of 16x
// different size with the same expected columns per rank: the first 8 of
// each rank's range (issue 14; the arms, whose exchange buffers grow with
// the partition's interface, are made at their first steps).
TYPED_TEST(Distributed, making_an_adaptive_session_allocates_nothing_of_the_operator_size)
{
  using ExecutionSpace = TypeParam;
  using memory_space = typename ExecutionSpace::memory_space;
  ExecutionSpace space;
  auto made = [&](Ordinal nx) {
    auto const A = wl::grid_2d<Scalar, Ordinal>(nx, nx);
    auto const p = hst::BlockPartition::uniform(A.n_rows, MPI_COMM_WORLD);
    DOperator<ExecutionSpace> op(space, MPI_COMM_WORLD, local_rows<ExecutionSpace>(A, p),
                                 p, p);
    auto expected = range_of(p, world_rank());
    expected.resize(8);
    auto const ids = to_view<memory_space>(expected);
    std::pair<long, long> bytes;
    {
      HeapWatch watch;
      EXPECT_FALSE(watch.tools_loaded());
      auto session = op.adaptive(space, ids, 8);
      bytes.first = HeapWatch::heap_bytes();
    }
    {
      AllocationWatch watch;
      auto session = op.adaptive(space, ids, 8);
      bytes.second = AllocationWatch::kokkos_bytes();
    }
    return bytes;
  };
  auto const small = made(100), large = made(400); // 1e4 and 1.6e5 columns
  EXPECT_EQ(small.first, large.first) << "heap bytes";
  EXPECT_EQ(small.second, large.second) << "Kokkos bytes";
}

// Steady-state distributed steps allocate nothing: no Kokkos allocation, no
// operator new, on any rank.
TYPED_TEST(Distributed, steady_state_steps_allocate_nothing)
{
  using ExecutionSpace = TypeParam;
  using memory_space = typename ExecutionSpace::memory_space;
  ExecutionSpace space;
  int const width = 8;
  auto const A = wl::shuffled(wl::grid_2d<Scalar, Ordinal>(60, 60), 5);
  auto const rows = uneven_rows(A.n_rows);
  auto const cols = uneven_cols(A.n_cols);
  DOperator<ExecutionSpace> op(MPI_COMM_WORLD, local_rows<ExecutionSpace>(A, rows), rows,
                               cols);
  auto const global = to_matrix<ExecutionSpace>(A);
  wl::WorkloadOptions w;
  w.churn = 0.05;
  wl::Workload<Scalar, Ordinal> workload(global, w);
  std::vector<OwnedChanges> steps;
  std::vector<Ordinal> every_column;
  for (int step = 0; step < 60; ++step, workload.advance())
  {
    steps.push_back(owned_changes(workload.columns(), workload.dx(), width, cols));
    every_column.insert(every_column.end(), steps.back().cols.begin(),
                        steps.back().cols.end());
  }
  std::sort(every_column.begin(), every_column.end());
  every_column.erase(std::unique(every_column.begin(), every_column.end()),
                     every_column.end());
  hst::SessionOptions keep_all;
  keep_all.retire_after = 1000;
  auto scheduled = op.session(to_view<memory_space>(every_column), width, keep_all);
  auto exact_set = op.baseline(width);
  auto scatter = op.scatter(width);
  hst::DistributedAdaptiveOptions settle;
  settle.recheck_period = 0;
  settle.sample_period = 5; // sampled steps reduce a double: no allocation
  settle.time_shift_ratio = 1e9;
  auto adaptive = op.adaptive(to_view<memory_space>(every_column), width, settle);
  std::size_t k_max = 0;
  for (auto const &s : steps)
    k_max = std::max(k_max, s.cols.size());
  Kokkos::View<Ordinal *, memory_space> ids("ids", k_max);
  Kokkos::View<Scalar **, Kokkos::LayoutLeft, memory_space> dx("dx", k_max, width);
  Kokkos::View<Scalar **, Kokkos::LayoutLeft, memory_space> y(
      "y", std::size_t(rows.local_size(world_rank())), width);
  auto ids_host = Kokkos::create_mirror_view(ids);
  auto dx_host = Kokkos::create_mirror_view(dx);

  // Kokkos allocations are counted with Kokkos Tools attached, heap
  // allocations with no tool attached (AllocationWatch.hpp).
  enum class Watch
  {
    none,
    tools,
    heap
  };
  auto run = [&](Watch watch) {
    long counted = 0;
    for (auto const &s : steps)
    {
      std::size_t const k = s.cols.size();
      for (std::size_t i = 0; i < k; ++i)
      {
        ids_host(i) = s.cols[i];
        for (int b = 0; b < width; ++b)
          dx_host(i, b) = s.dx[i * width + b];
      }
      Kokkos::deep_copy(space, ids, ids_host);
      Kokkos::deep_copy(space, dx, dx_host);
      space.fence();
      auto const step_ids = Kokkos::subview(ids, std::make_pair(std::size_t(0), k));
      auto const step_dx =
          Kokkos::subview(dx, std::make_pair(std::size_t(0), k), Kokkos::ALL);
      auto const step = [&] {
        scheduled.apply_cols(space, step_ids, step_dx, y);
        exact_set.apply_cols(space, step_ids, step_dx, y);
        scatter.apply_cols(space, step_ids, step_dx, y);
        adaptive.apply_cols(space, step_ids, step_dx, y);
        hst::kokkos_ext::fence(space, "hst_test::fence");
      };
      if (watch == Watch::tools)
      {
        AllocationWatch watching;
        step();
        counted += AllocationWatch::kokkos_allocations();
      }
      else if (watch == Watch::heap)
      {
        HeapWatch watching;
        step();
        counted += HeapWatch::heap_allocations();
        if (watching.tools_loaded())
          ADD_FAILURE() << "a Kokkos tool is loaded (KOKKOS_TOOLS_LIBS?): the heap "
                           "count would include its allocations";
      }
      else
        step();
    }
    return counted;
  };
  // The first replay decides the adaptive session's arm, but the probe steps
  // ran other arms: the chosen arm has not yet seen every step of the
  // sequence (its schedule and staging grow on steps it first meets; a flaky
  // heap count on 4 ranks, 1 in ~12 runs, when the scheduled arm won). The
  // second replay runs the chosen arm on all of them.
  run(Watch::none);
  ASSERT_FALSE(adaptive.report().probing);
  run(Watch::none);
  ASSERT_FALSE(adaptive.report().probing);
  EXPECT_EQ(run(Watch::tools), 0) << "Kokkos allocations during steady-state steps";
  EXPECT_EQ(run(Watch::heap), 0)
      << "heap allocations during steady-state steps (no tool attached)";
  EXPECT_GT(adaptive.report().sampled_steps, 0);
}

} // namespace
