// The public Matrix Market reader (hst/io/MatrixMarket.hpp): streams and
// files into host CSR and into a KokkosSparse::CrsMatrix on every device,
// and its messages for malformed input (name and line).

#include <hst/io/MatrixMarket.hpp>

#include "HSTTestHelpers.hpp"
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace
{

using namespace hst_test;
using Entry = std::tuple<Ordinal, Ordinal, Scalar>;
using Data = hst::io::MatrixMarketData<Scalar, Ordinal>;

Data parse(std::string const &text, hst::io::MatrixMarketOptions const &options = {})
{
  std::istringstream in(text);
  return hst::io::read_matrix_market_data<Scalar, Ordinal>(in, "text.mtx", options);
}

// The entries in CSR order, checked to be a well-formed CSR on the way.
std::vector<Entry> entries(Data const &d)
{
  std::vector<Entry> out;
  EXPECT_EQ(d.row_map.size(), std::size_t(d.n_rows) + 1);
  EXPECT_EQ(d.row_map.front(), 0);
  EXPECT_EQ(std::size_t(d.row_map.back()), d.entries.size());
  EXPECT_EQ(d.entries.size(), d.values.size());
  for (Ordinal r = 0; r < d.n_rows; ++r)
    for (auto p = d.row_map[r]; p < d.row_map[r + 1]; ++p)
    {
      if (p > d.row_map[r])
      {
        EXPECT_LT(d.entries[p - 1], d.entries[p]) << "row " << r << " not sorted";
      }
      out.emplace_back(r, d.entries[p], d.values[p]);
    }
  return out;
}

// The message of the std::invalid_argument `text` throws; it must name the
// stream.
std::string error_of(std::string const &text,
                     hst::io::MatrixMarketOptions const &options = {})
{
  try
  {
    parse(text, options);
  }
  catch (std::invalid_argument const &e)
  {
    std::string const what = e.what();
    EXPECT_NE(what.find("hst::io::read_matrix_market: 'text.mtx'"), std::string::npos)
        << what;
    return what;
  }
  catch (std::exception const &e)
  {
    ADD_FAILURE() << "wrong exception type: " << e.what();
    return {};
  }
  ADD_FAILURE() << "no exception for:\n" << text;
  return {};
}

bool contains(std::string const &what, std::string const &part)
{
  return what.find(part) != std::string::npos;
}

std::string const general = "%%MatrixMarket matrix coordinate real general\n";

TEST(MatrixMarketData, general_real_sorted_rows_comments_and_blank_lines)
{
  auto const d = parse(general + "% a comment\n\n4 5 5\n"
                                 "1 4 -3.0E+2\n"
                                 "4 2 -1e-3\n"
                                 "% a comment among the entries\n"
                                 "  2   3\t7  \r\n"
                                 "\n"
                                 "1 1 2.5\n"
                                 "3 3 0x1p-3\n\n");
  EXPECT_EQ(d.n_rows, 4);
  EXPECT_EQ(d.n_cols, 5);
  EXPECT_EQ(d.field, hst::io::MatrixMarketField::real);
  EXPECT_EQ(d.symmetry, hst::io::MatrixMarketSymmetry::general);
  EXPECT_EQ(entries(d),
            (std::vector<Entry>{
                {0, 0, 2.5}, {0, 3, -300}, {1, 2, 7}, {2, 2, 0.125}, {3, 1, -1e-3}}));
}

TEST(MatrixMarketData, symmetric_skew_pattern_integer_and_array)
{
  EXPECT_EQ(
      entries(parse("%%MatrixMarket matrix coordinate real symmetric\n"
                    "3 3 3\n2 1 2\n3 3 4\n1 3 -1\n")),
      (std::vector<Entry>{{0, 1, 2}, {0, 2, -1}, {1, 0, 2}, {2, 0, -1}, {2, 2, 4}}));
  EXPECT_EQ(entries(parse("%%MATRIXMARKET Matrix Coordinate Real Skew-Symmetric\n"
                          "3 3 2\n2 1 2\n3 2 -5\n")),
            (std::vector<Entry>{{0, 1, -2}, {1, 0, 2}, {1, 2, 5}, {2, 1, -5}}));
  auto const pattern = parse("%%MatrixMarket matrix coordinate pattern symmetric\n"
                             "3 3 2\n2 1\n3 3\n");
  EXPECT_EQ(pattern.field, hst::io::MatrixMarketField::pattern);
  EXPECT_EQ(pattern.symmetry, hst::io::MatrixMarketSymmetry::symmetric);
  EXPECT_EQ(entries(pattern), (std::vector<Entry>{{0, 1, 1}, {1, 0, 1}, {2, 2, 1}}));
  EXPECT_EQ(entries(parse("%%MatrixMarket matrix coordinate integer general\n"
                          "2 3 2\n1 3 -7\n2 1 +12\n")),
            (std::vector<Entry>{{0, 2, -7}, {1, 0, 12}}));
  EXPECT_EQ(
      entries(parse("%%MatrixMarket matrix array real general\n2 3\n1\n2\n3\n0\n5\n6\n")),
      (std::vector<Entry>{
          {0, 0, 1}, {0, 1, 3}, {0, 2, 5}, {1, 0, 2}, {1, 1, 0}, {1, 2, 6}}));
  // Empty matrices and rows.
  auto const empty = parse(general + "0 0 0\n");
  EXPECT_EQ(empty.n_rows, 0);
  EXPECT_TRUE(entries(empty).empty());
  EXPECT_EQ(entries(parse(general + "3 2 1\n3 2 1\n")), (std::vector<Entry>{{2, 1, 1}}));
}

TEST(MatrixMarketData, malformed_input_names_the_line_and_the_problem)
{
  EXPECT_TRUE(contains(error_of(""), "empty"));
  EXPECT_TRUE(contains(error_of("2 2 1\n1 1 1\n"), "line 1: bad banner"));
  EXPECT_TRUE(
      contains(error_of("%%MatrixMarket matrix coordinate real\n2 2 1\n"), "line 1"));
  EXPECT_TRUE(
      contains(error_of("%%MatrixMarket matrix coordinate real general x\n1 1 0\n"),
               "bad banner"));
  EXPECT_TRUE(contains(error_of("%%MatrixMarket matrix coordinate complex general\n"),
                       "complex"));
  EXPECT_TRUE(
      contains(error_of("%%MatrixMarket vector coordinate real general\n"), "vector"));
  EXPECT_TRUE(
      contains(error_of("%%MatrixMarket matrix sparse real general\n"), "sparse"));
  EXPECT_TRUE(contains(
      error_of("%%MatrixMarket matrix coordinate pattern skew-symmetric\n"), "symmetry"));
  EXPECT_TRUE(
      contains(error_of("%%MatrixMarket matrix array real symmetric\n"), "array"));
  EXPECT_TRUE(contains(error_of(general + "% only a comment\n"), "no size line"));
  EXPECT_TRUE(contains(error_of(general + "%\n2 x 1\n"), "line 3: bad size line"));
  EXPECT_TRUE(contains(error_of(general + "2 2 1 4\n"), "line 2: bad size line"));
  EXPECT_TRUE(contains(error_of(general + "-2 2 1\n"), "negative"));
  EXPECT_TRUE(contains(error_of(general + "99999999999 2 0\n"), "beyond the limit"));
  EXPECT_TRUE(
      contains(error_of(general + "2 2 1\n0 1 1.0\n"), "line 3: entry (0, 1) outside"));
  EXPECT_TRUE(
      contains(error_of(general + "2 2 2\n1 1 1\n\n1 3 1.0\n"), "line 5: entry (1, 3)"));
  EXPECT_TRUE(contains(error_of(general + "2 2 1\n1.5 1 1.0\n"), "line 3: bad entry"));
  EXPECT_TRUE(contains(error_of(general + "2 2 1\n1 1\n"), "line 3: bad, missing"));
  EXPECT_TRUE(contains(error_of(general + "2 2 1\n1 1 abc\n"), "line 3: bad, missing"));
  EXPECT_TRUE(contains(error_of(general + "2 2 1\n1 1 nan\n"), "non-finite"));
  EXPECT_TRUE(contains(error_of(general + "2 2 1\n1 1 1e999\n"), "non-finite"));
  EXPECT_TRUE(contains(error_of(general + "2 2 1\n1 1 1.0 2.0\n"), "unexpected text"));
  EXPECT_TRUE(contains(error_of(general + std::string("2 2 1\n1 1 1.0\0 9\n", 17)),
                       "line 3: bad, missing"));
  EXPECT_TRUE(contains(error_of("%%MatrixMarket matrix coordinate integer general\n"
                                "2 2 1\n1 1 1.5\n"),
                       "integer value"));
  EXPECT_TRUE(
      contains(error_of(general + "2 2 3\n1 1 1\n2 2 1\n"), "ends after 2 of the 3"));
  EXPECT_TRUE(
      contains(error_of(general + "2 2 1\n1 1 1\n% c\n2 2 1\n"), "line 5: more entries"));
  EXPECT_TRUE(
      contains(error_of("%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n"),
               "must be square"));
  EXPECT_TRUE(contains(
      error_of("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 2 1\n"),
      "line 3: diagonal entry (2, 2)"));
  EXPECT_TRUE(contains(error_of(general + "2 2 3\n1 2 1.0\n2 2 1\n1 2 3.0\n"),
                       "duplicate entry (1, 2) on lines 3 and 5"));
  EXPECT_TRUE(contains(error_of("%%MatrixMarket matrix coordinate real symmetric\n"
                                "2 2 2\n2 1 1\n1 2 1\n"),
                       "duplicate entry (1, 2) on lines 3 and 4 (after mirroring)"));
}

TEST(MatrixMarketData, limits_refuse_large_declarations_before_reading)
{
  hst::io::MatrixMarketOptions limits;
  limits.max_dimension = 10;
  limits.max_entries = 4;
  EXPECT_EQ(entries(parse(general + "10 10 1\n10 10 1\n", limits)),
            (std::vector<Entry>{{9, 9, 1}}));
  EXPECT_TRUE(
      contains(error_of(general + "11 10 0\n", limits), "beyond the limit of 10"));
  EXPECT_TRUE(contains(error_of(general + "10 10 5\n", limits), "beyond the limit of 4"));
  EXPECT_TRUE(
      contains(error_of("%%MatrixMarket matrix array real general\n3 2\n", limits),
               "beyond the limit of 4"));
  // Three symmetric entries off the diagonal store six.
  EXPECT_TRUE(contains(error_of("%%MatrixMarket matrix coordinate real symmetric\n"
                                "4 4 3\n2 1 1\n3 1 1\n4 1 1\n",
                                limits),
                       "line 5: more than 4 stored entries"));
}

TEST(MatrixMarketData, files_by_path)
{
  auto const dir = std::filesystem::temp_directory_path() /
                   ("hst-tstMatrixMarket-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto const path = (dir / "a.mtx").string();
  std::ofstream(path) << general << "2 2 1\n2 1 3.5\n";
  EXPECT_EQ(entries(hst::io::read_matrix_market_data<Scalar, Ordinal>(path)),
            (std::vector<Entry>{{1, 0, 3.5}}));
  auto const message = [](std::string const &p) {
    try
    {
      hst::io::read_matrix_market_data<Scalar, Ordinal>(p);
    }
    catch (std::invalid_argument const &e)
    {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  auto const missing = (dir / "missing.mtx").string();
  EXPECT_TRUE(contains(message(missing), "'" + missing + "': cannot be opened"))
      << message(missing);
  EXPECT_TRUE(contains(message(dir.string()), "is a directory")) << message(dir.string());
  std::filesystem::remove_all(dir);
}

template <class ExecutionSpace>
class MatrixMarketCrs : public ::testing::Test
{};
TYPED_TEST_SUITE(MatrixMarketCrs, DeviceTypes, );

TYPED_TEST(MatrixMarketCrs, stream_into_a_crs_matrix_that_multiplies_like_the_file)
{
  using M = Matrix<TypeParam>;
  std::istringstream in("%%MatrixMarket matrix coordinate real skew-symmetric\n"
                        "4 4 3\n2 1 2\n4 1 -1\n3 2 0.5\n");
  auto const A = hst::io::read_matrix_market<M>(in, "stream");
  ASSERT_EQ(A.numRows(), 4);
  ASSERT_EQ(A.numCols(), 4);
  ASSERT_EQ(A.nnz(), 6);
  // y = A x for x = (1, 2, 3, 4), against the dense matrix written out.
  double const dense[4][4] = {
      {0, -2, 0, 1}, {2, 0, -0.5, 0}, {0, 0.5, 0, 0}, {-1, 0, 0, 0}};
  Kokkos::View<Scalar *, typename TypeParam::memory_space> x("hst_test::x", 4),
      y("hst_test::y", 4);
  auto x_host = Kokkos::create_mirror_view(x);
  for (int i = 0; i < 4; ++i)
    x_host(i) = i + 1;
  Kokkos::deep_copy(x, x_host);
  KokkosSparse::spmv("N", 1.0, A, x, 0.0, y);
  auto y_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y);
  for (int r = 0; r < 4; ++r)
  {
    double expected = 0;
    for (int c = 0; c < 4; ++c)
      expected += dense[r][c] * (c + 1);
    EXPECT_EQ(y_host(r), expected) << "row " << r;
  }
  // Trailing empty rows and columns are kept.
  std::istringstream rect(general + "5 7 1\n1 2 1.5\n");
  auto const B = hst::io::read_matrix_market<M>(rect, "rect");
  EXPECT_EQ(B.numRows(), 5);
  EXPECT_EQ(B.numCols(), 7);
  EXPECT_EQ(B.nnz(), 1);
}

} // namespace
