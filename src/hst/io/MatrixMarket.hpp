#pragma once
// Matrix Market files (https://math.nist.gov/MatrixMarket/formats.html) into a
// KokkosSparse::CrsMatrix, with a parser of HST's own: no process is spawned,
// no private Kokkos Kernels function is called, and the whole file is checked
// before anything is returned.
//
//   auto A = hst::io::read_matrix_market<Matrix>("A.mtx");       // a file
//   auto B = hst::io::read_matrix_market<Matrix>(stream, "name"); // any istream
//   auto d = hst::io::read_matrix_market_data<double, int>(stream, "name");
//                                      // host CSR, no Kokkos needed
//
// Supported: "%%MatrixMarket matrix coordinate <real|integer|pattern>
// <general|symmetric|skew-symmetric>" (real "hermitian" is read as
// symmetric), and "array <real|integer> general" (dense, column-major, every
// value stored, zeros included). Banner words are case-insensitive. Symmetric
// files are mirrored (skew-symmetric ones with the sign flipped; a diagonal
// entry there is an error); pattern entries get the value 1; integer values
// are converted to Scalar. Rows come back sorted by column. Blank lines and
// '%' comment lines are allowed anywhere after the banner.
//
// Errors are std::invalid_argument, and name the function, the file (or the
// name given for a stream) and, for its content, the line: a bad banner,
// "complex" values, "vector" objects, a missing or malformed size line, an
// index outside the declared size (ids are 1-based), a value that does not
// parse or is not finite (nan, inf, overflow), text after an entry, fewer or
// more entries than declared, a duplicate coordinate (after mirroring), a
// size beyond MatrixMarketOptions::max_dimension (default: what the ordinal
// type holds) or more stored entries than max_entries. Nothing is allocated
// from the declared sizes before the entries that need it have been read,
// except the row_map of n_rows + 1 offsets.

#include <KokkosSparse_CrsMatrix.hpp>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <istream>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace hst::io
{

enum class MatrixMarketField
{
  real,
  integer,
  pattern
};

enum class MatrixMarketSymmetry
{
  general,
  symmetric,
  skew_symmetric
};

/// Limits a caller puts on what a file may declare (negative: no limit
/// beyond the types').
struct MatrixMarketOptions
{
  /// Largest row or column count accepted.
  std::int64_t max_dimension = -1;
  /// Largest number of stored entries (after mirroring) accepted.
  std::int64_t max_entries = -1;
};

/// A Matrix Market file on the host in compressed rows, columns sorted within
/// each row.
template <class Scalar, class Ordinal>
struct MatrixMarketData
{
  Ordinal n_rows = 0;
  Ordinal n_cols = 0;
  MatrixMarketField field = MatrixMarketField::real;
  MatrixMarketSymmetry symmetry = MatrixMarketSymmetry::general;
  std::vector<std::int64_t> row_map; ///< n_rows + 1 offsets into entries
  std::vector<Ordinal> entries;      ///< column ids, 0-based
  std::vector<Scalar> values;
};

namespace detail
{

[[noreturn]] inline void mm_fail(std::string const &name, std::string const &what)
{
  throw std::invalid_argument("hst::io::read_matrix_market: '" + name + "': " + what);
}

inline bool mm_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// One line of the file, parsed from `p` up to `end` (embedded NULs are text,
// not terminators: strtoll and strtod stop there, and the token check fails).
struct MmCursor
{
  char const *p;
  char const *end;

  void skip()
  {
    while (p < end && mm_space(*p))
      ++p;
  }
  bool at_end()
  {
    skip();
    return p == end;
  }
  bool token_ends(char const *q) const { return q == end || mm_space(*q); }

  bool integer(std::int64_t &value)
  {
    skip();
    if (p == end)
      return false;
    char *q = nullptr;
    errno = 0;
    long long const v = std::strtoll(p, &q, 10);
    if (q == p || errno == ERANGE || !token_ends(q))
      return false;
    value = v, p = q;
    return true;
  }

  // A finite real (underflow to a denormal or zero is accepted).
  bool real(double &value)
  {
    skip();
    if (p == end)
      return false;
    char *q = nullptr;
    errno = 0;
    double const v = std::strtod(p, &q);
    if (q == p || !token_ends(q) || !std::isfinite(v))
      return false;
    value = v, p = q;
    return true;
  }

  std::string word()
  {
    skip();
    char const *q = p;
    while (q < end && !mm_space(*q))
      ++q;
    std::string w(p, q);
    p = q;
    for (auto &c : w)
      c = char(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return w;
  }
};

inline std::string mm_quote(std::string const &line)
{
  constexpr std::size_t shown = 80;
  std::string q;
  for (std::size_t i = 0; i < line.size() && i < shown; ++i)
  {
    auto const c = static_cast<unsigned char>(line[i]);
    q += (c >= 32 && c < 127) ? char(c) : '?';
  }
  return "'" + q + (line.size() > shown ? "...'" : "'");
}

struct MmEntry
{
  std::int64_t row, col;
  double value;
  std::int64_t line;
};

} // namespace detail

/// Reads a Matrix Market file from `in`; `name` stands for it in messages.
/// Throws std::invalid_argument (see the top of this file).
template <class Scalar, class Ordinal>
MatrixMarketData<Scalar, Ordinal>
read_matrix_market_data(std::istream &in, std::string const &name,
                        MatrixMarketOptions const &options = {})
{
  static_assert(
      std::is_floating_point<Scalar>::value,
      "hst::io::read_matrix_market_data: Scalar must be a real floating-point type");
  static_assert(
      std::is_integral<Ordinal>::value && std::is_signed<Ordinal>::value,
      "hst::io::read_matrix_market_data: Ordinal must be a signed integer type");
  using detail::mm_fail;
  using detail::mm_quote;
  MatrixMarketData<Scalar, Ordinal> out;
  std::string line;
  std::int64_t number = 0;
  auto at = [&](std::string const &what) {
    return "line " + std::to_string(number) + ": " + what;
  };
  auto next_line = [&]() -> bool {
    if (!std::getline(in, line))
      return false;
    ++number;
    return true;
  };
  auto cursor = [&]() {
    return detail::MmCursor{line.data(), line.data() + line.size()};
  };
  auto skippable = [&]() {
    auto c = cursor();
    return c.at_end() || line[0] == '%';
  };

  // The banner.
  if (!next_line())
    mm_fail(name, "is empty, expected a '%%MatrixMarket' banner");
  std::string const expected =
      "expected '%%MatrixMarket matrix <coordinate|array> "
      "<real|integer|pattern> <general|symmetric|skew-symmetric>'";
  auto banner = cursor();
  std::string words[5];
  for (auto &w : words)
    w = banner.word();
  if (words[0] != "%%matrixmarket" || words[4].empty() || !banner.at_end())
    mm_fail(name, at("bad banner " + mm_quote(line) + ", " + expected));
  if (words[1] != "matrix")
    mm_fail(name, at("object '" + words[1] + "' is not supported, only 'matrix'"));
  bool coordinate = true;
  if (words[2] == "array")
    coordinate = false;
  else if (words[2] != "coordinate")
    mm_fail(name, at("format '" + words[2] + "' is neither 'coordinate' nor 'array'"));
  if (words[3] == "real" || words[3] == "double")
    out.field = MatrixMarketField::real;
  else if (words[3] == "integer")
    out.field = MatrixMarketField::integer;
  else if (words[3] == "pattern")
    out.field = MatrixMarketField::pattern;
  else if (words[3] == "complex")
    mm_fail(name, at("complex values are not supported (HST reads real operators)"));
  else
    mm_fail(name, at("field '" + words[3] + "' is not real, integer or pattern"));
  bool const pattern = out.field == MatrixMarketField::pattern;
  if (words[4] == "general")
    out.symmetry = MatrixMarketSymmetry::general;
  else if (words[4] == "symmetric" || (words[4] == "hermitian" && !pattern))
    out.symmetry = MatrixMarketSymmetry::symmetric; // real Hermitian = symmetric
  else if (words[4] == "skew-symmetric" && !pattern)
    out.symmetry = MatrixMarketSymmetry::skew_symmetric;
  else
    mm_fail(name,
            at("symmetry '" + words[4] + "' with field '" + words[3] + "'; " + expected));
  if (!coordinate && (pattern || out.symmetry != MatrixMarketSymmetry::general))
    mm_fail(name, at("array files must be 'real general' or 'integer general'"));
  bool const general = out.symmetry == MatrixMarketSymmetry::general;

  // Comments, then the size line.
  bool have_size = false;
  std::int64_t rows = 0, cols = 0, declared = 0;
  while (!have_size && next_line())
  {
    if (skippable())
      continue;
    auto c = cursor();
    bool ok = c.integer(rows) && c.integer(cols);
    if (ok && coordinate)
      ok = c.integer(declared);
    if (!ok || !c.at_end())
      mm_fail(name, at("bad size line " + mm_quote(line) + ", expected " +
                       (coordinate ? "'rows cols entries'" : "'rows cols'")));
    have_size = true;
  }
  if (!have_size)
    mm_fail(name, "has no size line after the banner");
  std::int64_t const max_dimension =
      options.max_dimension >= 0
          ? std::min<std::int64_t>(options.max_dimension,
                                   std::numeric_limits<Ordinal>::max())
          : std::int64_t(std::numeric_limits<Ordinal>::max());
  if (rows < 0 || cols < 0 || declared < 0)
    mm_fail(name, at("negative size in " + mm_quote(line)));
  if (rows > max_dimension || cols > max_dimension)
    mm_fail(name, at("size " + std::to_string(rows) + " x " + std::to_string(cols) +
                     " is beyond the limit of " + std::to_string(max_dimension) +
                     " rows or columns"));
  if (!general && rows != cols)
    mm_fail(name, at("a " + words[4] + " matrix must be square, got " +
                     std::to_string(rows) + " x " + std::to_string(cols)));
  if (!coordinate)
  {
    if (cols != 0 && rows > std::numeric_limits<std::int64_t>::max() / cols)
      mm_fail(name, at("array size " + std::to_string(rows) + " x " +
                       std::to_string(cols) + " overflows"));
    declared = rows * cols;
  }
  // Stored entries, mirrored halves counted, are at most twice the declared.
  auto const too_many = [&](std::int64_t stored) {
    return options.max_entries >= 0 && stored > options.max_entries;
  };
  if (too_many(declared))
    mm_fail(name, at(std::to_string(declared) + " entries are beyond the limit of " +
                     std::to_string(options.max_entries)));

  // The entries, as written (symmetric halves mirrored below).
  std::vector<detail::MmEntry> read;
  std::int64_t seen = 0;
  while (seen < declared && next_line())
  {
    if (skippable())
      continue;
    auto c = cursor();
    std::int64_t r = 0, col = 0;
    if (coordinate)
    {
      if (!c.integer(r) || !c.integer(col))
        mm_fail(name, at("bad entry " + mm_quote(line) + ", expected 'row col" +
                         (pattern ? "'" : " value'")));
      if (r < 1 || r > rows || col < 1 || col > cols)
        mm_fail(name, at("entry (" + std::to_string(r) + ", " + std::to_string(col) +
                         ") outside the " + std::to_string(rows) + " x " +
                         std::to_string(cols) + " matrix (ids are 1-based)"));
    }
    else
      r = seen % rows + 1, col = seen / rows + 1;
    double value = 1;
    if (out.field == MatrixMarketField::real)
    {
      if (!c.real(value))
        mm_fail(name, at("bad, missing or non-finite real value in " + mm_quote(line)));
    }
    else if (out.field == MatrixMarketField::integer)
    {
      std::int64_t v = 0;
      if (!c.integer(v))
        mm_fail(name, at("bad or missing integer value in " + mm_quote(line)));
      value = double(v);
    }
    if (!c.at_end())
      mm_fail(name, at("unexpected text after the entry in " + mm_quote(line)));
    if (r == col && out.symmetry == MatrixMarketSymmetry::skew_symmetric)
      mm_fail(name, at("diagonal entry (" + std::to_string(r) + ", " +
                       std::to_string(col) + ") in a skew-symmetric file"));
    read.push_back({r - 1, col - 1, value, number});
    if (!general && r != col)
    {
      double const mirrored =
          out.symmetry == MatrixMarketSymmetry::skew_symmetric ? -value : value;
      read.push_back({col - 1, r - 1, mirrored, number});
    }
    if (too_many(std::int64_t(read.size())))
      mm_fail(name, at("more than " + std::to_string(options.max_entries) +
                       " stored entries after mirroring (the limit)"));
    ++seen;
  }
  if (in.bad())
    mm_fail(name, "read error after line " + std::to_string(number));
  if (seen < declared)
    mm_fail(name, "ends after " + std::to_string(seen) + " of the " +
                      std::to_string(declared) + " entries its size line declares");
  while (next_line())
    if (!skippable())
      mm_fail(name, at("more entries than the " + std::to_string(declared) +
                       " the size line declares"));
  if (in.bad())
    mm_fail(name, "read error after line " + std::to_string(number));

  // Compressed rows: count, place, sort each row, reject duplicates.
  out.n_rows = Ordinal(rows);
  out.n_cols = Ordinal(cols);
  out.row_map.assign(std::size_t(rows) + 1, 0);
  for (auto const &e : read)
    ++out.row_map[std::size_t(e.row) + 1];
  for (std::size_t r = 0; r < std::size_t(rows); ++r)
    out.row_map[r + 1] += out.row_map[r];
  std::vector<std::size_t> order(read.size());
  {
    std::vector<std::int64_t> next(out.row_map.begin(), out.row_map.end() - 1);
    for (std::size_t i = 0; i < read.size(); ++i)
      order[std::size_t(next[std::size_t(read[i].row)]++)] = i;
  }
  for (std::size_t r = 0; r < std::size_t(rows); ++r)
  {
    auto const first = order.begin() + out.row_map[r];
    auto const last = order.begin() + out.row_map[r + 1];
    std::sort(first, last, [&](std::size_t a, std::size_t b) {
      return read[a].col != read[b].col ? read[a].col < read[b].col
                                        : read[a].line < read[b].line;
    });
    for (auto i = first; i != last && i + 1 != last; ++i)
      if (read[*i].col == read[*(i + 1)].col)
        mm_fail(name, "duplicate entry (" + std::to_string(r + 1) + ", " +
                          std::to_string(read[*i].col + 1) + ") on lines " +
                          std::to_string(read[*i].line) + " and " +
                          std::to_string(read[*(i + 1)].line) +
                          (general ? std::string() : std::string(" (after mirroring)")));
  }
  out.entries.resize(read.size());
  out.values.resize(read.size());
  for (std::size_t p = 0; p < order.size(); ++p)
  {
    out.entries[p] = Ordinal(read[order[p]].col);
    out.values[p] = Scalar(read[order[p]].value);
  }
  return out;
}

/// Reads the Matrix Market file at `path` (plain text; decompress .gz files
/// first). Throws std::invalid_argument naming the path when it cannot be
/// opened or is malformed.
template <class Scalar, class Ordinal>
MatrixMarketData<Scalar, Ordinal>
read_matrix_market_data(std::string const &path, MatrixMarketOptions const &options = {})
{
  std::error_code error;
  if (std::filesystem::is_directory(path, error))
    detail::mm_fail(path, "is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    detail::mm_fail(path, "cannot be opened (missing or unreadable)");
  return read_matrix_market_data<Scalar, Ordinal>(in, path, options);
}

/// `data` as a KokkosSparse::CrsMatrix in Matrix's memory space. Throws
/// std::invalid_argument when the entry count does not fit Matrix's types.
template <class Matrix, class Scalar, class Ordinal>
Matrix to_crs_matrix(MatrixMarketData<Scalar, Ordinal> const &data,
                     std::string const &label = "hst::io::MatrixMarket::A")
{
  using ordinal_type = typename Matrix::non_const_ordinal_type;
  using size_type = typename Matrix::non_const_size_type;
  using value_type = typename Matrix::non_const_value_type;
  using memory_space = typename Matrix::memory_space;
  auto const nnz = std::uint64_t(data.entries.size());
  if (nnz > std::uint64_t(std::numeric_limits<ordinal_type>::max()) ||
      nnz > std::uint64_t(std::numeric_limits<size_type>::max()) ||
      std::int64_t(data.n_rows) >
          std::int64_t(std::numeric_limits<ordinal_type>::max()) ||
      std::int64_t(data.n_cols) > std::int64_t(std::numeric_limits<ordinal_type>::max()))
    throw std::invalid_argument(
        "hst::io::to_crs_matrix: data: " + std::to_string(data.n_rows) + " x " +
        std::to_string(data.n_cols) + " with " + std::to_string(nnz) +
        " entries does not fit the matrix's " + "ordinal and size types");
  Kokkos::View<size_type *, Kokkos::HostSpace> row_map(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "hst::io::MatrixMarket::row_map"),
      std::size_t(data.n_rows) + 1);
  Kokkos::View<ordinal_type *, Kokkos::HostSpace> entries(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "hst::io::MatrixMarket::entries"),
      nnz);
  Kokkos::View<value_type *, Kokkos::HostSpace> values(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "hst::io::MatrixMarket::values"),
      nnz);
  for (std::size_t r = 0; r < data.row_map.size(); ++r)
    row_map(r) = size_type(data.row_map[r]);
  for (std::size_t p = 0; p < nnz; ++p)
  {
    entries(p) = ordinal_type(data.entries[p]);
    values(p) = value_type(data.values[p]);
  }
  auto d_row_map = Kokkos::create_mirror_view_and_copy(memory_space{}, row_map);
  auto d_entries = Kokkos::create_mirror_view_and_copy(memory_space{}, entries);
  auto d_values = Kokkos::create_mirror_view_and_copy(memory_space{}, values);
  return Matrix(label, ordinal_type(data.n_rows), ordinal_type(data.n_cols),
                ordinal_type(nnz), d_values, d_row_map, d_entries);
}

/// Reads a Matrix Market file from `in` (`name` in messages) into a
/// KokkosSparse::CrsMatrix in Matrix's memory space.
template <class Matrix>
Matrix read_matrix_market(std::istream &in, std::string const &name,
                          MatrixMarketOptions const &options = {})
{
  using value_type = typename Matrix::non_const_value_type;
  using ordinal_type = typename Matrix::non_const_ordinal_type;
  return to_crs_matrix<Matrix>(
      read_matrix_market_data<value_type, ordinal_type>(in, name, options));
}

/// Reads the Matrix Market file at `path` into a KokkosSparse::CrsMatrix in
/// Matrix's memory space.
template <class Matrix>
Matrix read_matrix_market(std::string const &path,
                          MatrixMarketOptions const &options = {})
{
  using value_type = typename Matrix::non_const_value_type;
  using ordinal_type = typename Matrix::non_const_ordinal_type;
  return to_crs_matrix<Matrix>(
      read_matrix_market_data<value_type, ordinal_type>(path, options));
}

} // namespace hst::io
