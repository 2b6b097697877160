// The Tpetra adapter on any number of ranks (ctest runs it on 1 to 3): every
// arm of hst::tpetra::DeltaOperator keeps Y equal to Tpetra's own
// A.apply(X_t) over 200 steps whose dX comes from make_delta, on generated
// and Matrix Market matrices, with contiguous, non-contiguous and uneven maps
// (ranks with no rows); bad input seen on one rank; steady-state steps that
// allocate nothing.

#include <hst/tpetra/DeltaOperator.hpp>
#include <hst/tpetra/MultiVectorDelta.hpp>

#include "AllocationWatch.hpp"
#include "DistributedTestHelpers.hpp"
#include <MatrixMarket_Tpetra.hpp>
#include <Teuchos_DefaultMpiComm.hpp>
#include <Tpetra_CrsMatrix.hpp>
#include <Tpetra_Map.hpp>
#include <Tpetra_MultiVector.hpp>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>

namespace
{

using namespace hst_test;
namespace wl = hst::workload;

using crs_type = Tpetra::CrsMatrix<>;
using map_type = Tpetra::Map<>;
using mv_type = Tpetra::MultiVector<>;
using GO = crs_type::global_ordinal_type;
using LO = crs_type::local_ordinal_type;
using SC = crs_type::scalar_type;
using delta_type = hst::tpetra::DeltaOperator<>;
using exec_space = delta_type::execution_space;
using mem_space = delta_type::memory_space;
using Comm = Teuchos::RCP<Teuchos::Comm<int> const>;
using MapPtr = Teuchos::RCP<map_type const>;

Comm world() { return Teuchos::rcp(new Teuchos::MpiComm<int>(MPI_COMM_WORLD)); }

// How a map spreads n global ids over the ranks.
enum class Layout
{
  uniform,     // contiguous blocks of (almost) equal size
  uneven,      // contiguous, the last rank empty (2+ ranks)
  cyclic,      // id g on rank g % ranks: not contiguous
  reversed,    // id g on rank ranks - 1 - g % ranks, listed in descending order
  first_empty, // not contiguous (every other id on the rest), the first rank empty
};

char const *to_string(Layout l)
{
  switch (l)
  {
  case Layout::uniform:
    return "uniform";
  case Layout::uneven:
    return "uneven";
  case Layout::cyclic:
    return "cyclic";
  case Layout::reversed:
    return "reversed";
  case Layout::first_empty:
    return "first_empty";
  }
  return "?";
}

MapPtr make_map(GO n, Layout layout, Comm const &comm)
{
  int const rank = comm->getRank(), size = comm->getSize();
  auto const invalid = Teuchos::OrdinalTraits<Tpetra::global_size_t>::invalid();
  std::vector<GO> mine;
  switch (layout)
  {
  case Layout::uniform:
    return Teuchos::rcp(new map_type(Tpetra::global_size_t(n), 0, comm));
  case Layout::uneven:
  {
    auto const part = uneven_rows(n);
    for (auto g = part.begin(rank); g < part.end(rank); ++g)
      mine.push_back(GO(g));
    break;
  }
  case Layout::cyclic:
    for (GO g = rank; g < n; g += size)
      mine.push_back(g);
    break;
  case Layout::reversed:
    for (GO g = n - 1; g >= 0; --g)
      if (size - 1 - int(g % size) == rank)
        mine.push_back(g);
    break;
  case Layout::first_empty:
    for (GO g = 0; g < n; ++g)
      if (size > 1 && rank > 0 && int(g % (size - 1)) == rank - 1)
        mine.push_back(g);
      else if (size == 1)
        mine.push_back(g);
    break;
  }
  return Teuchos::rcp(new map_type(
      invalid, Teuchos::ArrayView<GO const>(mine.data(), mine.size()), 0, comm));
}

// A (global triplets, the same on every rank) as a fill-complete
// CrsMatrix: rows on `row_map` (also the range map), domain `domain_map`.
Teuchos::RCP<crs_type> to_tpetra(Triplets const &A, MapPtr const &row_map,
                                 MapPtr const &domain_map)
{
  std::size_t longest = 0;
  for (auto const &row : A.rows)
    longest = std::max(longest, row.size());
  auto M = Teuchos::rcp(new crs_type(row_map, longest));
  for (GO g : row_map->getNodeElementList())
  {
    std::vector<GO> cols;
    std::vector<SC> vals;
    for (auto const &[c, v] : A.rows[std::size_t(g)])
    {
      cols.push_back(GO(c));
      vals.push_back(v);
    }
    M->insertGlobalValues(g, Teuchos::ArrayView<GO const>(cols.data(), cols.size()),
                          Teuchos::ArrayView<SC const>(vals.data(), vals.size()));
  }
  M->fillComplete(domain_map, row_map);
  return M;
}

// Writes A as a Matrix Market file (rank 0) and returns its path, in a
// directory every rank can read (the test's working directory's tmp).
std::string write_mtx(Triplets const &A, std::string const &name)
{
  std::string const path =
      "tstTpetra_" + name + "_" + std::to_string(long(getppid())) + ".mtx";
  if (world_rank() == 0)
  {
    std::ofstream out(path);
    std::size_t nnz = 0;
    for (auto const &row : A.rows)
      nnz += row.size();
    out << "%%MatrixMarket matrix coordinate real general\n";
    out << A.n_rows << ' ' << A.n_cols << ' ' << nnz << '\n';
    out.precision(17);
    for (std::size_t r = 0; r < A.rows.size(); ++r)
      for (auto const &[c, v] : A.rows[r])
        out << r + 1 << ' ' << c + 1 << ' ' << v << '\n';
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return path;
}

void remove_file(std::string const &path)
{
  MPI_Barrier(MPI_COMM_WORLD);
  if (world_rank() == 0)
    std::remove(path.c_str());
}

template <class T>
Kokkos::View<T *, mem_space> to_device(std::vector<T> const &v)
{
  Kokkos::View<T *, mem_space> out("ids", v.size());
  auto host = Kokkos::create_mirror_view(out);
  for (std::size_t i = 0; i < v.size(); ++i)
    host(i) = v[i];
  Kokkos::deep_copy(out, host);
  return out;
}

// The largest |a - b| over ranks, relative to the largest |b|.
double relative_difference(mv_type const &a, mv_type const &b)
{
  auto const x = a.getLocalViewHost(Tpetra::Access::ReadOnly);
  auto const y = b.getLocalViewHost(Tpetra::Access::ReadOnly);
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < x.extent(0); ++i)
    for (std::size_t j = 0; j < x.extent(1); ++j)
    {
      diff = std::max(diff, std::abs(x(i, j) - y(i, j)));
      scale = std::max(scale, std::abs(y(i, j)));
    }
  diff = max_over_ranks(diff);
  scale = max_over_ranks(scale);
  return scale > 0 ? diff / scale : diff;
}

// The ids in `global` that `map` owns, with their rows of dx.
struct Owned
{
  std::vector<GO> gids;
  std::vector<SC> dx; // row-major, width wide
};
Owned owned_part(std::vector<Ordinal> const &global, std::vector<SC> const &dx, int width,
                 map_type const &map)
{
  Owned o;
  for (std::size_t i = 0; i < global.size(); ++i)
    if (map.isNodeGlobalElement(GO(global[i])))
    {
      o.gids.push_back(GO(global[i]));
      o.dx.insert(o.dx.end(), dx.begin() + std::ptrdiff_t(i * width),
                  dx.begin() + std::ptrdiff_t((i + 1) * width));
    }
  return o;
}

// X += dx on the owned changed rows (host loop: the caller's own update).
void add_rows(mv_type &X, Owned const &o, int width)
{
  auto x = X.getLocalViewHost(Tpetra::Access::ReadWrite);
  auto const &map = *X.getMap();
  for (std::size_t i = 0; i < o.gids.size(); ++i)
    for (int b = 0; b < width; ++b)
      x(std::size_t(map.getLocalElement(o.gids[i])), std::size_t(b)) +=
          o.dx[i * std::size_t(width) + std::size_t(b)];
}

// Runs `steps` steps of the workload (over the global matrix `A`, the same on
// every rank) through the arm of `kind`: X_new = X_old + the step's change,
// dX = make_delta(X_old, X_new), arm: Y += A[:, S] dX, X_old = X_new on the
// changed rows. Y starts as A.apply(X_0) and must equal A.apply(X_new) after
// every step. Returns the largest relative difference seen.
double run_against_apply(crs_type const &M, Triplets const &A, Kind kind,
                         wl::WorkloadOptions w, int steps)
{
  int const width = w.width;
  delta_type const op(M);
  auto const global = to_matrix<Kokkos::Serial>(A);
  wl::Workload<Scalar, Ordinal> workload(global, w);
  auto const &domain = *M.getDomainMap();
  mv_type X_old(M.getDomainMap(), std::size_t(width));
  X_old.randomize();
  mv_type X_new(X_old, Teuchos::Copy);
  mv_type Y(M.getRangeMap(), std::size_t(width));
  mv_type Y_ref(M.getRangeMap(), std::size_t(width));
  M.apply(X_old, Y);
  double worst = 0;
  auto const first = owned_part(workload.columns(), workload.dx(), width, domain);
  with_arm(op, kind, to_device(first.gids), width, [&](auto &arm) {
    for (int step = 0; step < steps; ++step, workload.advance())
    {
      auto const o = owned_part(workload.columns(), workload.dx(), width, domain);
      add_rows(X_new, o, width);
      auto const gids = to_device(o.gids);
      Kokkos::View<SC **, Kokkos::LayoutLeft, mem_space> dX("dX", o.gids.size(),
                                                            std::size_t(width));
      hst::tpetra::make_delta(gids, X_old, X_new, dX);
      arm.apply_cols(gids, dX, Y);
      hst::tpetra::copy_rows(gids, X_new, X_old);
      M.apply(X_new, Y_ref);
      worst = std::max(worst, relative_difference(Y, Y_ref));
    }
  });
  // X_old followed X_new on the changed rows only.
  EXPECT_EQ(relative_difference(X_old, X_new), 0.0);
  return worst;
}

struct Case
{
  std::string name;
  Triplets A;
  std::function<Teuchos::RCP<crs_type>()> make;
};

std::vector<Case> generated_cases(Comm const &comm)
{
  std::vector<Case> cases;
  auto add = [&](std::string name, Triplets A, Layout rows, Layout cols) {
    auto const n_rows = A.n_rows, n_cols = A.n_cols;
    auto const shared = std::make_shared<Triplets>(A);
    cases.push_back({name + "/rows_" + to_string(rows) + "/cols_" + to_string(cols),
                     std::move(A), [=] {
                       return to_tpetra(*shared, make_map(n_rows, rows, comm),
                                        make_map(n_cols, cols, comm));
                     }});
  };
  auto const grid = wl::grid_2d<Scalar, Ordinal>(20, 20);
  add("grid2d", grid, Layout::uniform, Layout::uniform);
  add("grid2d", grid, Layout::cyclic, Layout::reversed);
  add("grid2d", grid, Layout::uneven, Layout::first_empty);
  add("band_300x420", wl::rectangular_band<Scalar, Ordinal>(300, 420, 6),
      Layout::reversed, Layout::cyclic);
  add("power_law", wl::power_law<Scalar, Ordinal>(400, 4, 3), Layout::first_empty,
      Layout::uneven);
  return cases;
}

struct TpetraAdapter : ::testing::Test
{
  Comm comm = world();
};

void expect_every_arm(Case const &c)
{
  auto const M = c.make();
  for (auto motion : {wl::Motion::drift, wl::Motion::jump, wl::Motion::frozen})
    for (Kind kind : all_kinds)
    {
      wl::WorkloadOptions w;
      w.motion = motion;
      w.churn = 0.05;
      w.width = 3;
      w.seed = 11;
      double const error = run_against_apply(*M, c.A, kind, w, 200);
      EXPECT_LE(error, 1e-13) << c.name << ' ' << wl::to_string(motion) << ' '
                              << to_string(kind);
    }
}

// Every arm and motion against Tpetra's apply, 200 steps, on generated
// matrices with contiguous, non-contiguous and uneven maps.
TEST_F(TpetraAdapter, every_arm_tracks_apply_on_generated_matrices)
{
  for (auto const &c : generated_cases(comm))
    expect_every_arm(c);
}

// Matrices from Tpetra's Matrix Market reader: its own maps, and a
// non-contiguous row map and domain map given to the reader.
TEST_F(TpetraAdapter, every_arm_tracks_apply_on_matrix_market_files)
{
  using reader = Tpetra::MatrixMarket::Reader<crs_type>;
  auto const band = wl::rectangular_band<Scalar, Ordinal>(250, 330, 5);
  auto const path = write_mtx(band, "band");
  Case own{"mtx_band/reader_maps", band,
           [&] { return reader::readSparseFile(path, comm); }};
  Case given{"mtx_band/cyclic_rows", band, [&] {
               auto const rows = make_map(band.n_rows, Layout::cyclic, comm);
               auto const domain = make_map(band.n_cols, Layout::reversed, comm);
               MapPtr col_map;
               return reader::readSparseFile(path, rows, col_map, domain, rows);
             }};
  expect_every_arm(own);
  expect_every_arm(given);
  remove_file(path);
}

// B = 1 and a wider B, on the plain grid.
TEST_F(TpetraAdapter, widths_one_and_eight)
{
  auto const A = wl::grid_2d<Scalar, Ordinal>(15, 11);
  auto const M = to_tpetra(A, make_map(A.n_rows, Layout::cyclic, comm),
                           make_map(A.n_cols, Layout::uneven, comm));
  for (int width : {1, 8})
    for (Kind kind : all_kinds)
    {
      wl::WorkloadOptions w;
      w.motion = wl::Motion::drift;
      w.churn = 0.1;
      w.width = width;
      w.seed = 5;
      EXPECT_LE(run_against_apply(*M, A, kind, w, 60), 1e-13)
          << "B=" << width << ' ' << to_string(kind);
    }
}

// Expects `f` to throw std::invalid_argument on every rank, with a message
// that holds each of `parts`.
template <class F>
void expect_invalid_everywhere(F &&f, std::vector<std::string> const &parts,
                               char const *what)
{
  std::string message;
  try
  {
    f();
  }
  catch (std::invalid_argument const &e)
  {
    message = e.what();
  }
  ASSERT_FALSE(message.empty()) << what << ": no std::invalid_argument";
  for (auto const &p : parts)
    EXPECT_NE(message.find(p), std::string::npos) << what << ": " << message;
  EXPECT_TRUE(same_on_every_rank(message)) << what << ": " << message;
}

// Bad input on one rank: every rank throws the same error, Y is untouched,
// and the arm goes on working.
TEST_F(TpetraAdapter, bad_input_on_one_rank_throws_everywhere_and_leaves_y)
{
  int const rank = comm->getRank(), size = comm->getSize();
  int const culprit = size - 1;
  auto const A = wl::grid_2d<Scalar, Ordinal>(9, 7);
  auto const M = to_tpetra(A, make_map(A.n_rows, Layout::cyclic, comm),
                           make_map(A.n_cols, Layout::reversed, comm));
  delta_type const op(*M);
  int const width = 2;
  auto const &domain = *M->getDomainMap();
  auto const owned = domain.getNodeElementList();
  std::vector<GO> const mine(owned.begin(), owned.end());
  mv_type Y(M->getRangeMap(), width);
  Y.putScalar(1.5);
  mv_type const Y_before(Y, Teuchos::Copy);
  auto dx_of = [&](std::size_t k) {
    Kokkos::View<SC **, Kokkos::LayoutLeft, mem_space> dX("dX", k, std::size_t(width));
    Kokkos::deep_copy(dX, 0.25);
    return dX;
  };
  for (Kind kind : all_kinds)
    with_arm(op, kind, to_device(mine), width, [&](auto &arm) {
      std::string const name = to_string(kind);
      // A global id this rank does not own: on 2+ ranks one another rank
      // owns, on one rank one past the end.
      {
        auto gids = mine;
        if (rank == culprit)
        {
          gids.erase(gids.begin()); // k stays within the owned count
          GO foreign = GO(A.n_cols);
          for (GO g = 0; g < A.n_cols; ++g)
            if (!domain.isNodeGlobalElement(g))
            {
              foreign = g;
              break;
            }
          gids.push_back(foreign);
        }
        expect_invalid_everywhere(
            [&] { arm.apply_cols(to_device(gids), dx_of(gids.size()), Y); },
            {"apply_cols", "on rank " + std::to_string(culprit), "'changed_gids'",
             "does not own"},
            (name + ": foreign gid").c_str());
      }
      // A duplicate.
      {
        auto gids = mine;
        if (rank == culprit && !gids.empty())
          gids.push_back(gids.front());
        if (rank == culprit && gids.empty())
          gids.push_back(GO(A.n_cols) + 5);
        expect_invalid_everywhere(
            [&] { arm.apply_cols(to_device(gids), dx_of(gids.size()), Y); },
            {"on rank " + std::to_string(culprit), "'changed_gids'"},
            (name + ": duplicate").c_str());
      }
      // dX with the wrong number of rows, then of columns.
      expect_invalid_everywhere(
          [&] {
            arm.apply_cols(to_device(mine), dx_of(mine.size() + (rank == culprit)), Y);
          },
          {"on rank " + std::to_string(culprit), "'dX'"}, (name + ": dX rows").c_str());
      expect_invalid_everywhere(
          [&] {
            Kokkos::View<SC **, Kokkos::LayoutLeft, mem_space> dX(
                "dX", mine.size(), std::size_t(rank == culprit ? width + 1 : width));
            arm.apply_cols(to_device(mine), dX, Y);
          },
          {"on rank " + std::to_string(culprit), "'dX'"}, (name + ": dX cols").c_str());
      // Y with the wrong number of vectors, on every rank.
      expect_invalid_everywhere(
          [&] {
            mv_type Y3(M->getRangeMap(), width + 1);
            arm.apply_cols(to_device(mine), dx_of(mine.size()), Y3);
          },
          {"'Y'", "vectors"}, (name + ": Y width").c_str());
      // Y on a map whose rows differ from the range map's.
      expect_invalid_everywhere(
          [&] {
            // Cyclic rows in descending order: locally a different map.
            mv_type Yu(make_map(A.n_rows, Layout::reversed, comm), width);
            arm.apply_cols(to_device(mine), dx_of(mine.size()), Yu);
          },
          {"'Y'", "range map"}, (name + ": Y map").c_str());
      EXPECT_EQ(relative_difference(Y, Y_before), 0.0) << name << ": Y was written";

      // The arm still works: one step of every owned column.
      mv_type X_new(M->getDomainMap(), width);
      X_new.putScalar(0.25);
      arm.apply_cols(to_device(mine), dx_of(mine.size()), Y);
      mv_type expected(Y_before, Teuchos::Copy);
      M->apply(X_new, expected, Teuchos::NO_TRANS, 1.0, 1.0);
      EXPECT_LE(relative_difference(Y, expected), 1e-14) << name << ": after errors";
      Tpetra::deep_copy(Y, Y_before);
    });
}

TEST_F(TpetraAdapter, construction_and_arms_refuse_bad_input)
{
  int const size = comm->getSize();
  auto const A = wl::grid_2d<Scalar, Ordinal>(8, 8);
  // Not fill complete.
  {
    auto const rows = make_map(A.n_rows, Layout::uniform, comm);
    crs_type M(rows, 1);
    for (GO g : rows->getNodeElementList())
      M.insertGlobalValues(g, Teuchos::tuple<GO>(g), Teuchos::tuple<SC>(1.0));
    expect_invalid_everywhere([&] { delta_type op(M); }, {"'A'", "fill complete"},
                              "not fill complete");
  }
  // A range map whose rows differ from the row map's (on 2+ ranks).
  if (size > 1)
  {
    auto const rows = make_map(A.n_rows, Layout::cyclic, comm);
    auto M = Teuchos::rcp(new crs_type(rows, 1));
    for (GO g : rows->getNodeElementList())
      M->insertGlobalValues(g, Teuchos::tuple<GO>(g), Teuchos::tuple<SC>(1.0));
    auto const uniform = make_map(A.n_rows, Layout::uniform, comm);
    M->fillComplete(uniform, uniform);
    expect_invalid_everywhere([&] { delta_type op(*M); }, {"'A'", "range map"},
                              "range map differs from the row map");
  }
  // Expected ids the rank does not own, on the last rank only.
  auto const M = to_tpetra(A, make_map(A.n_rows, Layout::cyclic, comm),
                           make_map(A.n_cols, Layout::uneven, comm));
  delta_type const op(*M);
  std::vector<GO> expected;
  if (comm->getRank() == size - 1)
    expected.push_back(GO(A.n_cols) + 3);
  expect_invalid_everywhere([&] { op.session(to_device(expected), 4); },
                            {"session", "'expected_gids'", "does not own"},
                            "session: foreign expected gid");
  expect_invalid_everywhere([&] { op.adaptive(to_device(expected), 4); },
                            {"adaptive", "'expected_gids'"},
                            "adaptive: foreign expected gid");
  expect_invalid_everywhere([&] { op.baseline(0); }, {"'B'"}, "baseline: B = 0");
}

// make_delta and copy_rows touch only the named rows and refuse foreign ids
// (not collective: each rank checks its own).
TEST_F(TpetraAdapter, make_delta_reads_and_copy_rows_writes_only_named_rows)
{
  auto const map = make_map(50, Layout::reversed, comm);
  int const width = 2;
  mv_type X_old(map, width), X_new(map, width);
  X_old.putScalar(1.0);
  X_new.putScalar(4.0);
  auto const owned = map->getNodeElementList();
  std::vector<GO> some;
  for (std::size_t i = 0; i < std::size_t(owned.size()); i += 3)
    some.push_back(owned[i]);
  Kokkos::View<SC **, Kokkos::LayoutRight, mem_space> dX("dX", some.size(), width);
  hst::tpetra::make_delta(to_device(some), X_old, X_new, dX);
  auto const dx_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, dX);
  for (std::size_t i = 0; i < some.size(); ++i)
    for (int b = 0; b < width; ++b)
      EXPECT_EQ(dx_host(i, std::size_t(b)), 3.0);
  hst::tpetra::copy_rows(to_device(some), X_new, X_old);
  auto const x = X_old.getLocalViewHost(Tpetra::Access::ReadOnly);
  for (std::size_t i = 0; i < std::size_t(owned.size()); ++i)
    EXPECT_EQ(x(i, 0), i % 3 == 0 ? 4.0 : 1.0) << "row " << owned[i];

  std::vector<GO> foreign = some;
  foreign.push_back(GO(50) + GO(comm->getRank()));
  try
  {
    hst::tpetra::make_delta(
        to_device(foreign), X_old, X_new,
        Kokkos::View<SC **, Kokkos::LayoutRight, mem_space>("dX", foreign.size(), width));
    ADD_FAILURE() << "make_delta accepted a foreign id";
  }
  catch (std::invalid_argument const &e)
  {
    EXPECT_NE(std::string(e.what()).find("'changed_gids'"), std::string::npos)
        << e.what();
  }
  mv_type X_wide(map, width + 1);
  EXPECT_THROW(hst::tpetra::copy_rows(to_device(some), X_new, X_wide),
               std::invalid_argument);
}

// Steady-state steps (adapter, make_delta, copy_rows) allocate nothing.
TEST_F(TpetraAdapter, steady_state_steps_allocate_nothing)
{
  auto const A = wl::grid_2d<Scalar, Ordinal>(30, 30);
  auto const M = to_tpetra(A, make_map(A.n_rows, Layout::cyclic, comm),
                           make_map(A.n_cols, Layout::reversed, comm));
  delta_type const op(*M);
  int const width = 4;
  auto const &domain = *M->getDomainMap();
  auto const owned = domain.getNodeElementList();
  std::vector<GO> const mine(owned.begin(), owned.begin() + owned.size() / 4);
  auto const gids = to_device(mine);
  Kokkos::View<SC **, Kokkos::LayoutLeft, mem_space> dX("dX", mine.size(), width);
  mv_type X_old(M->getDomainMap(), width), X_new(M->getDomainMap(), width);
  X_new.putScalar(1.0);
  mv_type Y(M->getRangeMap(), width);
  auto scheduled = op.session(gids, width);
  auto exact_set = op.baseline(width);
  auto direct = op.scatter(width);
  auto step = [&] {
    hst::tpetra::make_delta(gids, X_old, X_new, dX);
    scheduled.apply_cols(gids, dX, Y);
    exact_set.apply_cols(gids, dX, Y);
    direct.apply_cols(gids, dX, Y);
  };
  step(); // buffers reach their sizes
  // Kokkos allocations with Kokkos Tools attached; the heap with no tool
  // attached (AllocationWatch.hpp).
  long kokkos = 0, heap = 0;
  bool tools_loaded = false;
  {
    AllocationWatch watch;
    for (int s = 0; s < 5; ++s)
      step();
    hst::tpetra::copy_rows(gids, X_new, X_old);
    kokkos = AllocationWatch::kokkos_allocations();
  }
  {
    HeapWatch watch;
    for (int s = 0; s < 5; ++s)
      step();
    hst::tpetra::copy_rows(gids, X_new, X_old);
    heap = HeapWatch::heap_allocations();
    tools_loaded = watch.tools_loaded();
  }
  EXPECT_EQ(kokkos, 0) << "Kokkos allocations during steady-state steps";
  ASSERT_FALSE(tools_loaded) << "a Kokkos tool is loaded (KOKKOS_TOOLS_LIBS?): the heap "
                                "count would include its allocations";
  EXPECT_EQ(heap, 0) << "heap allocations during steady-state steps (no tool attached)";
}

} // namespace
