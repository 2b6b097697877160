// The operator suite (Suite.hpp), the generator families behind it
// (Generators.hpp) and the fixtures' Matrix Market reader (MatrixMarket.hpp:
// .gz files, pattern values; the public reader hst/io/MatrixMarket.hpp
// underneath is tested alone in tstMatrixMarket).
// Generators are tested at small sizes; no 1e6-row operator is built here.

#include "HSTTestHelpers.hpp"
#include <unistd.h>
#include <workload/MatrixMarket.hpp>
#include <workload/Suite.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>

namespace
{

using namespace hst_test;
namespace hw = hst::workload;
using Op = hw::SuiteOperator<Scalar, Ordinal>;
using Entry = std::tuple<Ordinal, Ordinal, Scalar>;

std::vector<Entry> entries(Triplets const &t)
{
  std::vector<Entry> out;
  for (Ordinal r = 0; r < t.n_rows; ++r)
    for (auto const &[c, v] : t.rows[r])
      out.emplace_back(r, c, v);
  std::sort(out.begin(), out.end());
  return out;
}

std::size_t nnz(Triplets const &t)
{
  std::size_t n = 0;
  for (auto const &row : t.rows)
    n += row.size();
  return n;
}

// Rows as many as n_rows, columns in range, each row strictly ascending.
void expect_well_formed(Triplets const &t)
{
  ASSERT_EQ(t.rows.size(), std::size_t(t.n_rows));
  for (Ordinal r = 0; r < t.n_rows; ++r)
    for (std::size_t i = 0; i < t.rows[r].size(); ++i)
    {
      auto const c = t.rows[r][i].first;
      ASSERT_TRUE(c >= 0 && c < t.n_cols) << "row " << r << " column " << c;
      if (i > 0)
      {
        ASSERT_LT(t.rows[r][i - 1].first, c) << "row " << r << " not strictly ascending";
      }
    }
}

bool has_entry(Triplets const &t, Ordinal r, Ordinal c)
{
  auto const &row = t.rows[r];
  return std::binary_search(
      row.begin(), row.end(), std::make_pair(c, Scalar(0)),
      [](auto const &a, auto const &b) { return a.first < b.first; });
}

void expect_diagonal(Triplets const &t)
{
  for (Ordinal r = 0; r < std::min(t.n_rows, t.n_cols); ++r)
    ASSERT_TRUE(has_entry(t, r, r)) << "no diagonal in row " << r;
}

// Fraction of off-diagonal entries (r, c) whose transpose (c, r) exists.
double transpose_fraction(Triplets const &t)
{
  std::size_t off = 0, mirrored = 0;
  for (Ordinal r = 0; r < t.n_rows; ++r)
    for (auto const &entry : t.rows[r])
      if (entry.first != r)
        ++off, mirrored += has_entry(t, entry.first, r);
  return off ? double(mirrored) / double(off) : 1.0;
}

std::vector<std::size_t> row_degrees(Triplets const &t)
{
  std::vector<std::size_t> d;
  for (auto const &row : t.rows)
    d.push_back(row.size());
  return d;
}

std::vector<std::size_t> column_degrees(Triplets const &t)
{
  std::vector<std::size_t> d(t.n_cols, 0);
  for (auto const &row : t.rows)
    for (auto const &entry : row)
      ++d[entry.first];
  return d;
}

template <class T>
std::vector<T> sorted(std::vector<T> v)
{
  std::sort(v.begin(), v.end());
  return v;
}

// Mean |r - c| over the off-diagonal entries.
double mean_distance_from_diagonal(Triplets const &t)
{
  double sum = 0;
  std::size_t off = 0;
  for (Ordinal r = 0; r < t.n_rows; ++r)
    for (auto const &entry : t.rows[r])
      if (entry.first != r)
        sum += std::abs(double(entry.first) - double(r)), ++off;
  return off ? sum / double(off) : 0.0;
}

std::set<std::string> families(std::vector<Op> const &ops)
{
  std::set<std::string> out;
  for (auto const &op : ops)
    out.insert(op.family);
  return out;
}

Op const *find(std::vector<Op> const &ops, std::string const &name)
{
  for (auto const &op : ops)
    if (op.name == name)
      return &op;
  return nullptr;
}

// ---------------------------------------------------------------- catalogue

TEST(Suite, full_catalogue_spans_ten_families_and_1e4_to_1e6_rows)
{
  auto const full = hw::operator_suite(hw::SuiteScale::full);
  EXPECT_GE(full.size(), 24u);
  EXPECT_EQ(families(full),
            (std::set<std::string>{"grid2d_5pt", "grid2d_9pt", "grid3d_7pt",
                                   "grid3d_27pt", "mesh_geometric", "circuit", "road",
                                   "rmat", "banded", "multiphysics"}));
  std::set<std::string> names;
  int million = 0, shuffled = 0;
  std::int64_t smallest = full.front().rows, largest = 0;
  for (auto const &op : full)
  {
    SCOPED_TRACE(op.name);
    EXPECT_TRUE(names.insert(op.name).second) << "duplicate name";
    EXPECT_TRUE(std::all_of(op.name.begin(), op.name.end(), [](char c) {
      return std::islower(c) || std::isdigit(c) || c == '_';
    })) << "name not filesystem/CSV safe";
    EXPECT_EQ(op.name.rfind(op.family, 0), 0u) << "name does not start with the family";
    EXPECT_TRUE(op.build) << "no build function";
    smallest = std::min(smallest, op.rows), largest = std::max(largest, op.rows);
    million += op.rows >= 990000;
    if (op.shuffled)
    {
      ++shuffled;
      EXPECT_NE(op.name.find("_shuffled"), std::string::npos);
      auto const *natural = find(full, op.name.substr(0, op.name.size() - 9));
      ASSERT_NE(natural, nullptr) << "shuffled variant without its natural operator";
      EXPECT_FALSE(natural->shuffled);
      EXPECT_EQ(natural->rows, op.rows);
      EXPECT_EQ(natural->family, op.family);
    }
  }
  EXPECT_GE(smallest, 9000);
  EXPECT_LE(smallest, 11000);
  EXPECT_GE(largest, 1000000);
  EXPECT_GE(million, 2);
  EXPECT_GE(shuffled, 4);
}

TEST(Suite, quick_catalogue_is_small_varied_and_part_of_full)
{
  auto const quick = hw::operator_suite(hw::SuiteScale::quick);
  auto const full = hw::operator_suite(hw::SuiteScale::full);
  EXPECT_GE(quick.size(), 8u);
  EXPECT_LE(quick.size(), 10u);
  EXPECT_GE(families(quick).size(), 7u);
  int shuffled = 0;
  std::set<std::string> names;
  for (auto const &op : quick)
  {
    SCOPED_TRACE(op.name);
    EXPECT_TRUE(names.insert(op.name).second) << "duplicate name";
    EXPECT_LE(op.rows, 130000);
    shuffled += op.shuffled;
    auto const *same = find(full, op.name);
    ASSERT_NE(same, nullptr) << "quick operator missing from full";
    EXPECT_EQ(same->family, op.family);
    EXPECT_EQ(same->rows, op.rows);
    EXPECT_EQ(same->shuffled, op.shuffled);
  }
  EXPECT_GE(shuffled, 1);
}

TEST(Suite, growth_series_is_one_family_from_1e4_to_1e6)
{
  auto const growth = hw::growth_series();
  ASSERT_EQ(growth.size(), 5u);
  double const targets[] = {1e4, 3e4, 1e5, 3e5, 1e6};
  for (std::size_t i = 0; i < growth.size(); ++i)
  {
    SCOPED_TRACE(growth[i].name);
    EXPECT_EQ(growth[i].family, "grid2d_5pt");
    EXPECT_FALSE(growth[i].shuffled);
    EXPECT_NEAR(double(growth[i].rows), targets[i], 0.05 * targets[i]);
  }
  // Names shared with the full suite name the same operator.
  auto const full = hw::operator_suite(hw::SuiteScale::full);
  for (auto const &op : growth)
    if (auto const *same = find(full, op.name))
    {
      EXPECT_EQ(same->rows, op.rows) << op.name;
    }
}

TEST(Suite, suite_operator_finds_every_name_and_rejects_unknown_ones)
{
  auto all = hw::operator_suite(hw::SuiteScale::full);
  for (auto const &op : hw::growth_series())
    all.push_back(op);
  for (auto const &op : all)
  {
    auto const found = hw::suite_operator(op.name);
    EXPECT_EQ(found.name, op.name);
    EXPECT_EQ(found.family, op.family);
    EXPECT_EQ(found.rows, op.rows);
    EXPECT_EQ(found.shuffled, op.shuffled);
  }
  try
  {
    hw::suite_operator("grid2d_5pt_317x317");
    ADD_FAILURE() << "no exception";
  }
  catch (std::invalid_argument const &e)
  {
    std::string const what = e.what();
    EXPECT_NE(what.find("'grid2d_5pt_317x317'"), std::string::npos) << what;
    EXPECT_NE(what.find("grid2d_5pt_316x316"), std::string::npos) << what;
    EXPECT_NE(what.find("rmat_s15"), std::string::npos) << what;
  }
}

TEST(Suite, quick_operators_build_as_declared_and_deterministically)
{
  for (auto const &op : hw::operator_suite(hw::SuiteScale::quick))
  {
    SCOPED_TRACE(op.name);
    auto const t = op.build();
    EXPECT_EQ(std::int64_t(t.n_rows), op.rows);
    EXPECT_EQ(t.n_cols, t.n_rows);
    expect_well_formed(t);
    expect_diagonal(t);
    EXPECT_EQ(entries(op.build()), entries(t)) << "second build differs";
    // Copies of the catalogue build the same operator.
    EXPECT_EQ(entries(hw::suite_operator(op.name).build()), entries(t));
  }
}

TEST(Suite, shuffled_variants_permute_their_natural_operator)
{
  auto const full = hw::operator_suite(hw::SuiteScale::full);
  for (auto const &op : full)
  {
    if (!op.shuffled)
      continue;
    SCOPED_TRACE(op.name);
    ASSERT_LE(op.rows, 130000) << "too large for a unit test";
    auto const mixed = op.build();
    auto const natural = find(full, op.name.substr(0, op.name.size() - 9))->build();
    expect_well_formed(mixed);
    expect_diagonal(mixed); // a symmetric relabelling keeps the diagonal on it
    ASSERT_EQ(mixed.n_rows, natural.n_rows);
    ASSERT_EQ(mixed.n_cols, natural.n_cols);
    EXPECT_EQ(nnz(mixed), nnz(natural));
    EXPECT_EQ(sorted(row_degrees(mixed)), sorted(row_degrees(natural)));
    EXPECT_EQ(sorted(column_degrees(mixed)), sorted(column_degrees(natural)));
    std::vector<Scalar> a, b;
    for (auto const &e : entries(mixed))
      a.push_back(std::get<2>(e));
    for (auto const &e : entries(natural))
      b.push_back(std::get<2>(e));
    EXPECT_EQ(sorted(a), sorted(b)) << "values are not carried by the permutation";
    // Locality destroyed: a random relabelling puts off-diagonal entries n/3
    // from the diagonal on average; the natural numbering keeps them within a
    // few hundred.
    double const near = mean_distance_from_diagonal(natural);
    double const far = mean_distance_from_diagonal(mixed);
    EXPECT_LT(near, 0.02 * double(op.rows)) << near;
    EXPECT_GT(far, 0.3 * double(op.rows)) << far;
  }
}

// ---------------------------------------------------------------- families

TEST(Generators, new_families_are_deterministic_and_seeded)
{
  auto same = [](Triplets const &a, Triplets const &b) {
    return entries(a) == entries(b);
  };
  using S = Scalar;
  using O = Ordinal;
  EXPECT_TRUE(
      same(hw::geometric_mesh<S, O>(3000, 7, 5), hw::geometric_mesh<S, O>(3000, 7, 5)));
  EXPECT_FALSE(
      same(hw::geometric_mesh<S, O>(3000, 7, 5), hw::geometric_mesh<S, O>(3000, 7, 6)));
  EXPECT_TRUE(same(hw::circuit<S, O>(3000, 5), hw::circuit<S, O>(3000, 5)));
  EXPECT_FALSE(same(hw::circuit<S, O>(3000, 5), hw::circuit<S, O>(3000, 6)));
  EXPECT_TRUE(same(hw::road<S, O>(50, 60, 5), hw::road<S, O>(50, 60, 5)));
  EXPECT_FALSE(same(hw::road<S, O>(50, 60, 5), hw::road<S, O>(50, 60, 6)));
  EXPECT_TRUE(same(hw::rmat<S, O>(11, 8, 5), hw::rmat<S, O>(11, 8, 5)));
  EXPECT_FALSE(same(hw::rmat<S, O>(11, 8, 5), hw::rmat<S, O>(11, 8, 6)));
}

TEST(Generators, geometric_mesh_is_a_symmetric_local_graph_of_mean_degree_7)
{
  Ordinal const n = 20000;
  auto const t = hw::geometric_mesh<Scalar, Ordinal>(n, 7.0, 3);
  ASSERT_EQ(t.n_rows, n);
  ASSERT_EQ(t.n_cols, n);
  expect_well_formed(t);
  expect_diagonal(t);
  EXPECT_EQ(transpose_fraction(t), 1.0);
  // Expected mean degree with the square's boundary: n pi r^2 (1 - 8 r / (3 pi)
  // + r^2 / (2 pi)) with n pi r^2 = 7, r = 0.01056: 6.937 (the mean area of a
  // disc of radius r clipped to the square). Over seeds the mean degree varies
  // by about 0.03 (edge count roughly Poisson, 2 / n per edge); allow ~5 sd.
  double const pi = std::acos(-1.0), r = std::sqrt(7.0 / (pi * n));
  double const expected = 7.0 * (1 - 8 * r / (3 * pi) + r * r / (2 * pi));
  double const mean = double(nnz(t) - std::size_t(n)) / n;
  EXPECT_NEAR(mean, expected, 0.16);
  // Cell numbering: couplings stay within ~2 sqrt(7 n / pi) = 422 ids.
  std::int64_t band = 0;
  for (Ordinal row = 0; row < n; ++row)
    for (auto const &entry : t.rows[row])
      band = std::max<std::int64_t>(band, std::abs(entry.first - row));
  EXPECT_LT(band, 3 * std::sqrt(7.0 * n / pi)) << band;
  EXPECT_LT(mean_distance_from_diagonal(t), 0.02 * n);
}

TEST(Generators, circuit_has_dominant_diagonal_hubs_and_local_couplings)
{
  Ordinal const n = 20000;
  auto const t = hw::circuit<Scalar, Ordinal>(n, 9);
  ASSERT_EQ(t.n_rows, n);
  expect_well_formed(t);
  expect_diagonal(t);
  std::size_t local = 0, off = 0;
  for (Ordinal r = 0; r < n; ++r)
  {
    double diagonal = 0, sum = 0;
    for (auto const &[c, v] : t.rows[r])
    {
      if (c == r)
        diagonal = v;
      else
        sum += std::abs(v), ++off, local += std::abs(c - r) <= 50;
    }
    ASSERT_GT(diagonal, sum) << "row " << r << " not diagonally dominant";
  }
  EXPECT_GT(double(local) / double(off), 0.8);
  // Mostly, not exactly, structurally symmetric.
  double const mirrored = transpose_fraction(t);
  EXPECT_GT(mirrored, 0.8);
  EXPECT_LT(mirrored, 1.0);
  // Power-law degrees: the densest row and column hold far more than the mean.
  double const mean = double(nnz(t)) / n;
  auto const rows = row_degrees(t), cols = column_degrees(t);
  EXPECT_GT(double(*std::max_element(rows.begin(), rows.end())), 50 * mean);
  EXPECT_GT(double(*std::max_element(cols.begin(), cols.end())), 50 * mean);
  // ... and a tail of rows above 4x the mean, not one outlier: Zipf weights
  // give hub rank i about 0.3 n / (H_n i) = 570 / i couplings besides ~4 local
  // ones, so some 30-40 rows above 4 x 5.
  EXPECT_GT(std::count_if(rows.begin(), rows.end(), [&](auto d) { return d > 4 * mean; }),
            10);
}

TEST(Generators, road_is_planar_with_degrees_2_to_4)
{
  Ordinal const nx = 120, ny = 90;
  auto const t = hw::road<Scalar, Ordinal>(nx, ny, 4);
  ASSERT_EQ(t.n_rows, nx * ny);
  expect_well_formed(t);
  expect_diagonal(t);
  EXPECT_EQ(transpose_fraction(t), 1.0);
  std::size_t degree_sum = 0, diagonals = 0;
  for (Ordinal v = 0; v < nx * ny; ++v)
  {
    auto const degree = t.rows[v].size() - 1;
    ASSERT_TRUE(degree >= 2 && degree <= 4) << "node " << v << " degree " << degree;
    degree_sum += degree;
    for (auto const &entry : t.rows[v])
    {
      Ordinal const dx = entry.first % nx - v % nx, dy = entry.first / nx - v / nx;
      ASSERT_TRUE(std::abs(dx) <= 1 && std::abs(dy) <= 1) << "long edge at " << v;
      diagonals += dx != 0 && dy != 0;
    }
  }
  // Planar: no cell holds both diagonals.
  for (Ordinal y = 0; y + 1 < ny; ++y)
    for (Ordinal x = 0; x + 1 < nx; ++x)
    {
      Ordinal const v = y * nx + x;
      ASSERT_FALSE(has_entry(t, v, v + nx + 1) && has_entry(t, v + 1, v + nx))
          << "crossing diagonals in cell " << v;
    }
  double const mean = double(degree_sum) / (nx * ny);
  EXPECT_GT(mean, 2.4);
  EXPECT_LT(mean, 3.2);
  EXPECT_GT(diagonals, 0u); // some shortcuts
}

TEST(Generators, rmat_is_a_deduplicated_unsymmetric_power_law_graph)
{
  int const scale = 12;
  Ordinal const n = 1 << scale;
  auto const t = hw::rmat<Scalar, Ordinal>(scale, 8, 2);
  ASSERT_EQ(t.n_rows, n);
  ASSERT_EQ(t.n_cols, n);
  expect_well_formed(t); // strictly ascending: no duplicates
  expect_diagonal(t);
  EXPECT_LE(nnz(t), std::size_t(9 * n));
  EXPECT_GT(nnz(t), std::size_t(6 * n));
  EXPECT_LT(transpose_fraction(t), 0.9);
  // Row 0 is the most likely row: expected (a + b)^12 8 n = 0.0373 * 32768
  // = 1223 samples before duplicates are removed.
  double const mean = double(nnz(t)) / n;
  EXPECT_GT(double(t.rows[0].size()), 50 * mean);
  auto const rows = row_degrees(t);
  EXPECT_EQ(*std::max_element(rows.begin(), rows.end()), rows[0]);
  // The top-left quadrant holds the largest share (a = 0.57 of the samples).
  std::size_t quadrant[2][2] = {};
  for (Ordinal r = 0; r < n; ++r)
    for (auto const &entry : t.rows[r])
      if (entry.first != r)
        ++quadrant[r >= n / 2][entry.first >= n / 2];
  EXPECT_GT(quadrant[0][0], quadrant[0][1]);
  EXPECT_GT(quadrant[0][1], quadrant[1][1]);
  EXPECT_GT(quadrant[1][0], quadrant[1][1]);
}

TEST(Generators, banded_holds_exactly_the_band)
{
  auto const t = hw::banded<Scalar, Ordinal>(100, 3);
  expect_well_formed(t);
  EXPECT_EQ(nnz(t), std::size_t(100 * 7 - 2 * (1 + 2 + 3)));
  for (Ordinal r = 0; r < 100; ++r)
    for (Ordinal c = 0; c < 100; ++c)
      ASSERT_EQ(has_entry(t, r, c), std::abs(r - c) <= 3) << r << ", " << c;
}

TEST(Generators, blocked_expands_each_coupling_into_a_dense_block)
{
  int const dofs = 3;
  auto const nodes = hw::grid_2d<Scalar, Ordinal>(5, 4, 9);
  auto const t = hw::blocked(nodes, dofs);
  ASSERT_EQ(t.n_rows, nodes.n_rows * dofs);
  ASSERT_EQ(t.n_cols, nodes.n_cols * dofs);
  expect_well_formed(t);
  expect_diagonal(t);
  EXPECT_EQ(nnz(t), nnz(nodes) * dofs * dofs);
  for (Ordinal r = 0; r < t.n_rows; ++r)
    for (Ordinal c = 0; c < t.n_cols; ++c)
      ASSERT_EQ(has_entry(t, r, c), has_entry(nodes, r / dofs, c / dofs))
          << r << ", " << c;
  for (auto const &[r, c, v] : entries(t))
    ASSERT_EQ(v, Scalar(hw::entry_value(r, c)));
}

TEST(Generators, bad_arguments_throw)
{
  EXPECT_THROW((hw::road<Scalar, Ordinal>(1, 10, 1)), std::invalid_argument);
  EXPECT_THROW((hw::rmat<Scalar, Ordinal>(-1, 8, 1)), std::invalid_argument);
  EXPECT_THROW((hw::rmat<Scalar, Ordinal>(10, 8, 1, 0.6, 0.3, 0.3)),
               std::invalid_argument);
  EXPECT_THROW((hw::banded<Scalar, Ordinal>(10, -1)), std::invalid_argument);
  EXPECT_THROW((hw::geometric_mesh<Scalar, Ordinal>(10, 0, 1)), std::invalid_argument);
  EXPECT_THROW((hw::blocked(hw::grid_2d<Scalar, Ordinal>(3, 3), 0)),
               std::invalid_argument);
}

// ---------------------------------------------------------------- Matrix Market

// A private directory, removed with its files at the end of the test.
class MatrixMarket : public ::testing::Test
{
protected:
  void SetUp() override
  {
    dir_ = std::filesystem::temp_directory_path() /
           ("hst-tstSuite-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(std::string const &name, std::string const &text)
  {
    auto const path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::string gzip(std::string const &path)
  {
    std::string const command = "gzip -c '" + path + "' > '" + path + ".gz'";
    EXPECT_EQ(std::system(command.c_str()), 0) << command;
    return path + ".gz";
  }
  static Triplets read(std::string const &path)
  {
    return hw::read_matrix_market<Scalar, Ordinal>(path);
  }
  // The exception read() throws, which must name the path.
  template <class Exception>
  std::string error_of(std::string const &path)
  {
    try
    {
      read(path);
    }
    catch (Exception const &e)
    {
      std::string const what = e.what();
      EXPECT_NE(what.find(path), std::string::npos)
          << "message does not name the path: " << what;
      return what;
    }
    catch (std::exception const &e)
    {
      ADD_FAILURE() << "wrong exception type: " << e.what();
      return {};
    }
    ADD_FAILURE() << "no exception reading " << path;
    return {};
  }

  std::filesystem::path dir_;
};

std::vector<Entry> from(std::initializer_list<Entry> list)
{
  std::vector<Entry> v(list);
  std::sort(v.begin(), v.end());
  return v;
}

TEST_F(MatrixMarket, general_real)
{
  auto const path = write("general.mtx", "%%MatrixMarket matrix coordinate real general\n"
                                         "% a comment\n"
                                         "%\n"
                                         "4 4 5\n"
                                         "1 1 2.5\n"
                                         "4 2 -1e-3\n"
                                         "2 3 7\n"
                                         "  3   3\t0.125  \n"
                                         "1 4 -3.0E+2\n");
  auto const t = read(path);
  EXPECT_EQ(t.n_rows, 4);
  EXPECT_EQ(t.n_cols, 4);
  expect_well_formed(t);
  EXPECT_EQ(entries(t),
            from({{0, 0, 2.5}, {3, 1, -1e-3}, {1, 2, 7}, {2, 2, 0.125}, {0, 3, -300}}));
}

TEST_F(MatrixMarket, symmetric_is_mirrored)
{
  auto const path =
      write("symmetric.mtx", "%%MatrixMarket matrix coordinate real symmetric\n"
                             "3 3 4\n"
                             "1 1 1\n"
                             "2 1 2\n"
                             "3 1 3\n"
                             "3 3 4\n");
  EXPECT_EQ(entries(read(path)),
            from({{0, 0, 1}, {1, 0, 2}, {0, 1, 2}, {2, 0, 3}, {0, 2, 3}, {2, 2, 4}}));
}

TEST_F(MatrixMarket, skew_symmetric_is_mirrored_with_negation)
{
  auto const path =
      write("skew.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n"
                        "3 3 2\n"
                        "2 1 2\n"
                        "3 2 -5\n");
  EXPECT_EQ(entries(read(path)), from({{1, 0, 2}, {0, 1, -2}, {2, 1, -5}, {1, 2, 5}}));
}

TEST_F(MatrixMarket, pattern_gets_deterministic_values)
{
  auto const general =
      write("pattern.mtx", "%%MatrixMarket matrix coordinate pattern general\n"
                           "3 5 4\n"
                           "1 1\n"
                           "1 5\n"
                           "3 2\n"
                           "2 4\n");
  auto const t = read(general);
  EXPECT_EQ(t.n_rows, 3);
  EXPECT_EQ(t.n_cols, 5);
  auto v = [](std::int64_t r, std::int64_t c) { return Scalar(hw::entry_value(r, c)); };
  EXPECT_EQ(entries(t),
            from({{0, 0, v(0, 0)}, {0, 4, v(0, 4)}, {2, 1, v(2, 1)}, {1, 3, v(1, 3)}}));

  // Symmetric pattern: values from the lower triangle, so A stays symmetric.
  auto const symmetric =
      write("pattern_sym.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n"
                               "4 4 3\n"
                               "2 1\n"
                               "4 2\n"
                               "3 3\n");
  EXPECT_EQ(entries(read(symmetric)), from({{1, 0, v(1, 0)},
                                            {0, 1, v(1, 0)},
                                            {3, 1, v(3, 1)},
                                            {1, 3, v(3, 1)},
                                            {2, 2, v(2, 2)}}));
}

TEST_F(MatrixMarket, rectangular_keeps_trailing_empty_rows_and_columns)
{
  auto const path = write("rect.mtx", "%%MatrixMarket matrix coordinate real general\n"
                                      "5 7 3\n"
                                      "1 2 1.5\n"
                                      "3 1 -2\n"
                                      "2 5 4\n");
  auto const t = read(path);
  EXPECT_EQ(t.n_rows, 5);
  EXPECT_EQ(t.n_cols, 7);
  expect_well_formed(t);
  EXPECT_EQ(entries(t), from({{0, 1, 1.5}, {2, 0, -2}, {1, 4, 4}}));
}

TEST_F(MatrixMarket, integer_and_array_files)
{
  auto const integer =
      write("integer.mtx", "%%MatrixMarket matrix coordinate integer general\n"
                           "2 3 3\n"
                           "1 3 -7\n"
                           "2 1 12\n"
                           "2 2 +4\n");
  EXPECT_EQ(entries(read(integer)), from({{0, 2, -7}, {1, 0, 12}, {1, 1, 4}}));
  // Array: column-major, every entry stored (zeros included).
  auto const array = write("array.mtx", "%%MatrixMarket matrix array real general\n"
                                        "2 3\n"
                                        "1\n2\n3\n0\n5\n6\n");
  EXPECT_EQ(entries(read(array)),
            from({{0, 0, 1}, {1, 0, 2}, {0, 1, 3}, {1, 1, 0}, {0, 2, 5}, {1, 2, 6}}));
}

TEST_F(MatrixMarket, banner_case_blank_lines_and_comments_do_not_change_the_matrix)
{
  std::string const body = "1 1 2.5\n4 2 -1e-3\n2 3 7\n3 3 0.125\n1 4 -3.0E+2\n";
  auto const plain =
      write("plain.mtx", "%%MatrixMarket matrix coordinate real general\n4 4 5\n" + body);
  auto const upper =
      write("upper.mtx", "%%MatrixMarket MATRIX Coordinate Real General\n4 4 5\n" + body);
  auto const blank = write("blank.mtx", "%%MatrixMarket matrix coordinate real general\n"
                                        "% comment\n\n4 4 5\n1 1 2.5\n4 2 -1e-3\n"
                                        "% comment among the entries\n"
                                        "2 3 7\n\n3 3 0.125\n1 4 -3.0E+2\n\n");
  auto const expected = entries(read(plain));
  EXPECT_EQ(entries(read(upper)), expected);
  EXPECT_EQ(entries(read(blank)), expected);
  // A blank line among a symmetric file's entries changes nothing.
  auto const sym_kk =
      write("sym_kk.mtx", "%%MatrixMarket matrix coordinate real symmetric\n"
                          "3 3 3\n2 1 2\n3 3 4\n3 2 -1\n");
  auto const sym_own =
      write("sym_own.mtx", "%%MatrixMarket matrix coordinate real symmetric\n"
                           "3 3 3\n2 1 2\n\n3 3 4\n3 2 -1\n");
  EXPECT_EQ(entries(read(sym_own)), entries(read(sym_kk)));
}

TEST_F(MatrixMarket, generated_operator_round_trips_through_mtx_and_gz)
{
  auto const t = hw::circuit<Scalar, Ordinal>(700, 3);
  std::string text = "%%MatrixMarket matrix coordinate real general\n";
  text += std::to_string(t.n_rows) + " " + std::to_string(t.n_cols) + " " +
          std::to_string(nnz(t)) + "\n";
  char buffer[96];
  for (auto const &[r, c, v] : entries(t))
  {
    std::snprintf(buffer, sizeof buffer, "%d %d %.17g\n", r + 1, c + 1, v);
    text += buffer;
  }
  auto const path = write("circuit.mtx", text);
  EXPECT_EQ(entries(read(path)), entries(t));

  // .gz through the system gzip; the temporary file is removed afterwards.
  auto const gz = gzip(path);
  auto const scratch = dir_ / "tmp";
  std::filesystem::create_directories(scratch);
  char const *saved = std::getenv("TMPDIR");
  std::string const saved_value = saved ? saved : "";
  ::setenv("TMPDIR", scratch.c_str(), 1);
  auto const back = read(gz);
  bool const empty = std::filesystem::is_empty(scratch);
  saved ? ::setenv("TMPDIR", saved_value.c_str(), 1) : ::unsetenv("TMPDIR");
  EXPECT_EQ(entries(back), entries(t));
  EXPECT_EQ(back.n_rows, t.n_rows);
  EXPECT_EQ(back.n_cols, t.n_cols);
  EXPECT_TRUE(empty) << "temporary files left in " << scratch;
}

TEST_F(MatrixMarket, bad_files_throw_naming_path_and_problem)
{
  std::string const header = "%%MatrixMarket matrix coordinate real general\n";
  auto contains = [](std::string const &what, std::string const &part) {
    return what.find(part) != std::string::npos;
  };
  EXPECT_TRUE(contains(error_of<std::invalid_argument>((dir_ / "missing.mtx").string()),
                       "no such file"));
  EXPECT_TRUE(
      contains(error_of<std::invalid_argument>((dir_ / "missing.mtx.gz").string()),
               "no such file"));
  EXPECT_TRUE(contains(error_of<std::invalid_argument>(dir_.string()), "directory"));
  EXPECT_TRUE(contains(error_of<std::invalid_argument>(write("empty.mtx", "")), "empty"));
  EXPECT_TRUE(
      contains(error_of<std::invalid_argument>(write("nobanner.mtx", "2 2 1\n1 1 1\n")),
               "bad banner"));
  EXPECT_TRUE(
      contains(error_of<std::invalid_argument>(write(
                   "short.mtx", "%%MatrixMarket matrix coordinate real\n2 2 1\n1 1 1\n")),
               "bad banner"));
  EXPECT_TRUE(
      contains(error_of<std::invalid_argument>(write(
                   "complex.mtx",
                   "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 2\n")),
               "complex"));
  EXPECT_TRUE(
      contains(error_of<std::invalid_argument>(write(
                   "vector.mtx", "%%MatrixMarket vector coordinate real general\n")),
               "vector"));
  EXPECT_TRUE(
      contains(error_of<std::invalid_argument>(write("nosize.mtx", header + "% c\n")),
               "size line"));
  EXPECT_TRUE(
      contains(error_of<std::invalid_argument>(write("badsize.mtx", header + "2 x 1\n")),
               "size line"));
  EXPECT_TRUE(contains(
      error_of<std::invalid_argument>(write("row0.mtx", header + "2 2 1\n0 1 1.0\n")),
      "outside"));
  EXPECT_TRUE(contains(
      error_of<std::invalid_argument>(write("row3.mtx", header + "2 2 1\n3 1 1.0\n")),
      "line 3"));
  EXPECT_TRUE(contains(
      error_of<std::invalid_argument>(write("col3.mtx", header + "2 2 1\n1 3 1.0\n")),
      "outside"));
  EXPECT_TRUE(contains(error_of<std::invalid_argument>(
                           write("truncated.mtx", header + "2 2 3\n1 1 1.0\n2 2 1.0\n")),
                       "ends after 2 of the 3"));
  EXPECT_TRUE(contains(error_of<std::invalid_argument>(
                           write("extra.mtx", header + "2 2 1\n1 1 1.0\n2 2 1.0\n")),
                       "more entries"));
  EXPECT_TRUE(contains(
      error_of<std::invalid_argument>(write("novalue.mtx", header + "2 2 1\n1 1\n")),
      "value"));
  EXPECT_TRUE(contains(
      error_of<std::invalid_argument>(write("badvalue.mtx", header + "2 2 1\n1 1 abc\n")),
      "value"));
  EXPECT_TRUE(contains(error_of<std::invalid_argument>(
                           write("fraction.mtx", header + "2 2 1\n1.5 1 1.0\n")),
                       "bad entry"));
  EXPECT_TRUE(
      contains(error_of<std::invalid_argument>(write(
                   "nonsquare.mtx",
                   "%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n1 1 1\n")),
               "square"));
  EXPECT_TRUE(contains(
      error_of<std::invalid_argument>(
          write("skewdiag.mtx",
                "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 1\n")),
      "diagonal"));
  EXPECT_TRUE(contains(error_of<std::invalid_argument>(
                           write("dup.mtx", header + "2 2 2\n1 2 1.0\n1 2 3.0\n")),
                       "duplicate entry (1, 2)"));
  // Both halves of a symmetric pair.
  EXPECT_TRUE(contains(
      error_of<std::invalid_argument>(write(
          "dupsym.mtx",
          "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n2 1 1\n1 2 1\n")),
      "duplicate"));
  // Same with a blank line between them: the message names both lines.
  EXPECT_TRUE(contains(
      error_of<std::invalid_argument>(write(
          "dupsym_own.mtx",
          "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n2 1 1\n\n1 2 1\n")),
      "on lines 3 and 5"));
  EXPECT_TRUE(contains(
      error_of<std::invalid_argument>(write("notgz.mtx.gz", header + "1 1 1\n1 1 1\n")),
      "gzip"));
  auto const truncated_gz = gzip(write("cut.mtx", header + "1 1 1\n1 1 1\n"));
  std::filesystem::resize_file(truncated_gz,
                               std::filesystem::file_size(truncated_gz) - 6);
  EXPECT_TRUE(contains(error_of<std::invalid_argument>(truncated_gz), "gzip"));
}

} // namespace
