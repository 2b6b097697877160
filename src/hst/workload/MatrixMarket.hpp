#pragma once
// Matrix Market (.mtx, .mtx.gz) files as Triplets, read with Kokkos Kernels'
// own reader where it reads the file correctly.
//
// read_matrix_market(path) first scans the whole file with a strict parser of
// its own: banner, size line, entry count, 1-based indices in range, values
// that parse, symmetric files square. Nothing is read before the file has
// passed. It then reads the entries with Kokkos Kernels' read_mtx (3.4:
// KokkosKernels::Impl in KokkosKernels_IOUtils.hpp; 4.x: KokkosSparse::Impl
// in KokkosSparse_IOUtils.hpp), which mirrors symmetric and skew-symmetric
// files. Where read_mtx would refuse a valid file or read it wrongly, the
// scan's own parser stores the entries instead; those cases, all checked
// against read_mtx of 3.4.1:
//  - a banner not in lower case (read_mtx searches for "coordinate", "real",
//    ... case-sensitively and throws);
//  - blank lines before the size line (read_mtx takes the first line that
//    does not start with '%' as the size line: 0 rows) or blank or '%' lines
//    among the entries (read_mtx reads exactly one entry per line: an entry
//    repeated, the last one lost);
//  - array files whose rows * cols overflows Ordinal (read_mtx multiplies in
//    the ordinal type);
//  - values an istream does not read as strtod does (nan, inf, hexadecimal,
//    underflow to a denormal; read_mtx stores 0 for "nan").
// Beyond read_mtx:
//  - the column count comes from the size line (read_mtx returns only the row
//    count; Kokkos Kernels' matrix reader then takes max column + 1, wrong
//    for rectangular files with trailing empty columns);
//  - "integer" files are read through read_mtx as long long and converted
//    (read_mtx refuses them for a floating-point scalar);
//  - "pattern" files get entry_value(r, c) instead of read_mtx's 1, with
//    (r, c) taken in the lower triangle for symmetric files so the operator
//    stays symmetric;
//  - duplicate coordinates are an error (read_mtx keeps both copies in
//    general files and silently keeps one in symmetric files);
//  - "complex" files, "vector" objects and array files that are not general
//    are rejected; "hermitian" real files are read as symmetric.
// A .gz file is decompressed by the system `gzip -dc` into a private
// temporary file (mkostemp in the temporary directory), removed afterwards.
//
// Errors name the function, the path and the problem (with the line number
// for content errors): std::invalid_argument for a missing, unreadable or
// malformed file or one gzip cannot decompress; std::runtime_error when the
// system fails (no temporary file, gzip cannot be started).

#include <hst/workload/Generators.hpp>

#if __has_include(<KokkosSparse_IOUtils.hpp>)
#include <KokkosSparse_IOUtils.hpp>
#define HST_DETAIL_KK_SPARSE_IOUTILS 1
#else
#include <KokkosKernels_IOUtils.hpp>
#define HST_DETAIL_KK_SPARSE_IOUTILS 0
#endif

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

extern char **environ; // POSIX; for posix_spawnp

namespace hst::workload
{
namespace detail
{

enum class MtxField
{
  real,
  integer,
  pattern
};
enum class MtxSymmetry
{
  general,
  symmetric,
  skew_symmetric
};

// What the scan found.
struct MtxInfo
{
  bool coordinate = true;
  MtxField field = MtxField::real;
  MtxSymmetry symmetry = MtxSymmetry::general;
  std::int64_t rows = 0, cols = 0;
  std::int64_t entries = 0;  ///< entries in the file (array: rows * cols)
  std::int64_t diagonal = 0; ///< entries of the file on the diagonal
  bool kk_readable = true;   ///< Kokkos Kernels' read_mtx reads this file correctly

  /// Entries of the matrix, the mirrored halves of symmetric files counted.
  std::int64_t stored() const
  {
    return symmetry == MtxSymmetry::general ? entries : 2 * entries - diagonal;
  }
};

[[noreturn]] inline void mtx_fail(std::string const &path, std::string const &what)
{
  throw std::invalid_argument("hst::workload::read_matrix_market: '" + path +
                              "': " + what);
}

inline bool mtx_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

inline char const *mtx_skip(char const *p)
{
  while (*p && mtx_space(*p))
    ++p;
  return p;
}

// Parses one whitespace-delimited integer token at p; advances p.
inline bool mtx_integer(char const *&p, std::int64_t &value)
{
  p = mtx_skip(p);
  if (!*p)
    return false;
  char *end = nullptr;
  errno = 0;
  long long const v = std::strtoll(p, &end, 10);
  if (end == p || errno == ERANGE || (*end && !mtx_space(*end)))
    return false;
  value = v, p = end;
  return true;
}

// Parses one whitespace-delimited real token at p; advances p. Overflow
// (beyond double) fails; underflow to a denormal or zero is accepted. `plain`
// turns false for what strtod reads but an istream may not (nan, inf,
// hexadecimal, underflow).
inline bool mtx_real(char const *&p, double &value, bool &plain)
{
  p = mtx_skip(p);
  if (!*p)
    return false;
  char *end = nullptr;
  errno = 0;
  double const v = std::strtod(p, &end);
  if (end == p || (*end && !mtx_space(*end)) || (errno == ERANGE && std::isinf(v)))
    return false;
  if (errno == ERANGE || !std::isfinite(v) ||
      std::any_of(p, static_cast<char const *>(end), [](char c) {
        return !(std::isdigit((unsigned char)c) || c == '+' || c == '-' || c == '.' ||
                 c == 'e' || c == 'E');
      }))
    plain = false;
  value = v, p = end;
  return true;
}

inline bool mtx_blank(std::string const &line) { return !*mtx_skip(line.c_str()); }

// Scans `file` (named `path` in messages), validating everything, and calls
// visit(row, col, value) with 0-based ids for each entry as written in the
// file (symmetric halves not mirrored; pattern values 0; array files in
// column-major order).
template <class Visit>
MtxInfo mtx_scan(std::string const &file, std::string const &path, std::int64_t max_index,
                 Visit &&visit)
{
  std::ifstream in(file);
  if (!in)
    mtx_fail(path, "cannot be read");
  MtxInfo info;
  std::string line;
  std::int64_t number = 0;
  auto at = [&](std::string const &what) {
    return "line " + std::to_string(number) + ": " + what;
  };

  // Banner: %%MatrixMarket matrix <coordinate|array> <field> <symmetry>.
  if (!std::getline(in, line))
    mtx_fail(path, "is empty, expected a '%%MatrixMarket' banner");
  ++number;
  std::vector<std::string> tokens;
  for (char const *p = mtx_skip(line.c_str()); *p; p = mtx_skip(p))
  {
    char const *q = p;
    while (*q && !mtx_space(*q))
      ++q;
    tokens.emplace_back(p, q);
    p = q;
  }
  auto lower = [](std::string s) {
    for (auto &c : s)
      c = char(std::tolower((unsigned char)c));
    return s;
  };
  std::string const expected =
      "expected '%%MatrixMarket matrix <coordinate|array> "
      "<real|integer|pattern> <general|symmetric|skew-symmetric>', got '" +
      line + "'";
  if (tokens.size() != 5 || lower(tokens[0]) != "%%matrixmarket")
    mtx_fail(path, at("bad header: " + expected));
  for (std::size_t i = 1; i < tokens.size(); ++i)
    if (tokens[i] != lower(tokens[i]))
      info.kk_readable = false, tokens[i] = lower(tokens[i]);
  if (line.compare(0, 2, "%%") != 0)
    info.kk_readable = false;
  if (tokens[1] != "matrix")
    mtx_fail(path, at("object '" + tokens[1] + "' is not supported, only 'matrix'"));
  if (tokens[2] == "coordinate")
    info.coordinate = true;
  else if (tokens[2] == "array")
    info.coordinate = false;
  else
    mtx_fail(path, at("bad header: format '" + tokens[2] + "'; " + expected));
  if (tokens[3] == "real" || tokens[3] == "double")
    info.field = MtxField::real;
  else if (tokens[3] == "integer")
    info.field = MtxField::integer;
  else if (tokens[3] == "pattern")
    info.field = MtxField::pattern;
  else if (tokens[3] == "complex")
    mtx_fail(path, at("complex values are not supported (HST reads real operators)"));
  else
    mtx_fail(path, at("bad header: field '" + tokens[3] + "'; " + expected));
  if (tokens[4] == "general")
    info.symmetry = MtxSymmetry::general;
  else if (tokens[4] == "symmetric" ||
           (tokens[4] == "hermitian" && info.field != MtxField::pattern))
    info.symmetry = MtxSymmetry::symmetric; // real Hermitian = symmetric
  else if (tokens[4] == "skew-symmetric" && info.field != MtxField::pattern)
    info.symmetry = MtxSymmetry::skew_symmetric;
  else
    mtx_fail(path, at("bad header: symmetry '" + tokens[4] + "' with field '" +
                      tokens[3] + "'; " + expected));
  if (!info.coordinate &&
      (info.field == MtxField::pattern || info.symmetry != MtxSymmetry::general))
    mtx_fail(path, at("array files must be 'real general' or 'integer general' here"));

  // Comments, then the size line.
  bool have_size = false;
  while (std::getline(in, line))
  {
    ++number;
    if (!line.empty() && line[0] == '%')
      continue;
    if (mtx_blank(line))
    {
      info.kk_readable = false;
      continue;
    }
    char const *p = line.c_str();
    bool ok = mtx_integer(p, info.rows) && mtx_integer(p, info.cols);
    if (ok && info.coordinate)
      ok = mtx_integer(p, info.entries);
    if (!ok || *mtx_skip(p))
      mtx_fail(path, at(std::string("bad size line '") + line + "', expected " +
                        (info.coordinate ? "'rows cols entries'" : "'rows cols'")));
    have_size = true;
    break;
  }
  if (!have_size)
    mtx_fail(path, "has no size line after the header");
  if (info.rows < 0 || info.cols < 0 || info.entries < 0 || info.rows > max_index ||
      info.cols > max_index)
    mtx_fail(path,
             at("size " + std::to_string(info.rows) + " x " + std::to_string(info.cols) +
                " with " + std::to_string(info.entries) +
                " entries is negative or beyond the ordinal type (max " +
                std::to_string(max_index) + ")"));
  if (info.symmetry != MtxSymmetry::general && info.rows != info.cols)
    mtx_fail(path, at("a " + tokens[4] + " matrix must be square, got " +
                      std::to_string(info.rows) + " x " + std::to_string(info.cols)));
  if (!info.coordinate)
  {
    if (info.cols != 0 &&
        info.rows > std::numeric_limits<std::int64_t>::max() / info.cols)
      mtx_fail(path, at("array size overflows"));
    info.entries = info.rows * info.cols;
    if (info.entries > max_index)
      info.kk_readable = false;
  }

  // Entries.
  std::int64_t seen = 0;
  while (seen < info.entries && std::getline(in, line))
  {
    ++number;
    if (mtx_blank(line) || line[0] == '%')
    {
      info.kk_readable = false;
      continue;
    }
    char const *p = line.c_str();
    std::int64_t r = 0, c = 0;
    if (info.coordinate)
    {
      if (!mtx_integer(p, r) || !mtx_integer(p, c))
        mtx_fail(path, at("bad entry '" + line + "', expected 'row col" +
                          (info.field == MtxField::pattern ? "'" : " value'")));
      if (r < 1 || r > info.rows || c < 1 || c > info.cols)
        mtx_fail(path, at("entry (" + std::to_string(r) + ", " + std::to_string(c) +
                          ") outside the " + std::to_string(info.rows) + " x " +
                          std::to_string(info.cols) + " matrix (ids are 1-based)"));
    }
    else
      r = seen % info.rows + 1, c = seen / info.rows + 1;
    double value = 0;
    if (info.field == MtxField::real)
    {
      if (!mtx_real(p, value, info.kk_readable))
        mtx_fail(path, at("bad or missing real value in '" + line + "'"));
    }
    else if (info.field == MtxField::integer)
    {
      std::int64_t v = 0;
      if (!mtx_integer(p, v))
        mtx_fail(path, at("bad or missing integer value in '" + line + "'"));
      value = double(v);
    }
    if (*mtx_skip(p))
      mtx_fail(path, at("unexpected text after the entry in '" + line + "'"));
    if (r == c)
    {
      if (info.symmetry == MtxSymmetry::skew_symmetric)
        mtx_fail(path, at("diagonal entry (" + std::to_string(r) + ", " +
                          std::to_string(c) + ") in a skew-symmetric file"));
      ++info.diagonal;
    }
    visit(r - 1, c - 1, value);
    ++seen;
  }
  if (seen < info.entries)
    mtx_fail(path, "ends after " + std::to_string(seen) + " of the " +
                       std::to_string(info.entries) + " entries its size line declares");
  while (std::getline(in, line))
  {
    ++number;
    if (!mtx_blank(line) && line[0] != '%')
      mtx_fail(path, at("more entries than the " + std::to_string(info.entries) +
                        " the size line declares"));
  }
  if (in.bad())
    mtx_fail(path, "read error");
  return info;
}

// Value of a pattern entry: entry_value(r, c), from the lower triangle when
// the file is symmetric so the operator stays symmetric.
inline double mtx_pattern_value(MtxSymmetry symmetry, std::int64_t r, std::int64_t c)
{
  return symmetry == MtxSymmetry::general ? entry_value(r, c)
                                          : entry_value(std::max(r, c), std::min(r, c));
}

// Sorts the rows, gives pattern files their values and rejects duplicates.
template <class Scalar, class Ordinal>
void mtx_finish(Triplets<Scalar, Ordinal> &t, MtxInfo const &info,
                std::string const &path)
{
  for (Ordinal r = 0; r < t.n_rows; ++r)
  {
    auto &row = t.rows[r];
    std::sort(row.begin(), row.end(),
              [](auto const &a, auto const &b) { return a.first < b.first; });
    for (std::size_t i = 0; i < row.size(); ++i)
    {
      if (i > 0 && row[i].first == row[i - 1].first)
        mtx_fail(path, "duplicate entry (" + std::to_string(r + 1) + ", " +
                           std::to_string(row[i].first + 1) + ")" +
                           (info.symmetry == MtxSymmetry::general
                                ? std::string()
                                : std::string(" after mirroring the symmetric half")));
      if (info.field == MtxField::pattern)
        row[i].second = Scalar(mtx_pattern_value(info.symmetry, r, row[i].first));
    }
  }
}

// The scan's own reader: stores what mtx_scan visits.
template <class Scalar, class Ordinal>
Triplets<Scalar, Ordinal> mtx_read_own(std::string const &file, std::string const &path,
                                       MtxInfo const &info)
{
  Triplets<Scalar, Ordinal> t(Ordinal(info.rows), Ordinal(info.cols));
  auto const sign = info.symmetry == MtxSymmetry::skew_symmetric ? -1.0 : 1.0;
  mtx_scan(file, path, std::numeric_limits<Ordinal>::max(),
           [&](std::int64_t r, std::int64_t c, double v) {
             t.add(Ordinal(r), Ordinal(c), Scalar(v));
             if (info.symmetry != MtxSymmetry::general && r != c)
               t.add(Ordinal(c), Ordinal(r), Scalar(sign * v));
           });
  mtx_finish(t, info, path);
  return t;
}

template <class Ordinal, class Size, class Value>
void kk_read_mtx(char const *file, Ordinal *nv, Size *ne, Size **xadj, Ordinal **adj,
                 Value **ew)
{
  // symmetrize = false (symmetric files are mirrored anyway),
  // remove_diagonal = false, transpose = false.
#if HST_DETAIL_KK_SPARSE_IOUTILS
  KokkosSparse::Impl::read_mtx<Ordinal, Size, Value>(file, nv, ne, xadj, adj, ew, false,
                                                     false, false);
#else
  KokkosKernels::Impl::read_mtx<Ordinal, Size, Value>(file, nv, ne, xadj, adj, ew, false,
                                                      false, false);
#endif
}

// Kokkos Kernels' reader, for files the scan found it reads correctly; reads
// into Value (double, or long long for integer files).
template <class Value, class Scalar, class Ordinal>
Triplets<Scalar, Ordinal> mtx_read_kk(std::string const &file, std::string const &path,
                                      MtxInfo const &info)
{
  using Size = std::int64_t;
  Ordinal nv = 0;
  Size ne = 0;
  Size *xadj = nullptr;
  Ordinal *adj = nullptr;
  Value *ew = nullptr;
  try
  {
    kk_read_mtx<Ordinal, Size, Value>(file.c_str(), &nv, &ne, &xadj, &adj, &ew);
  }
  catch (std::exception const &e)
  {
    delete[] xadj, delete[] adj, delete[] ew;
    throw std::runtime_error("hst::workload::read_matrix_market: '" + path +
                             "': Kokkos Kernels' read_mtx failed: " + e.what());
  }
  std::unique_ptr<Size[]> own_xadj(xadj);
  std::unique_ptr<Ordinal[]> own_adj(adj);
  std::unique_ptr<Value[]> own_ew(ew);
  if (nv != info.rows)
    throw std::logic_error("hst::workload::read_matrix_market: '" + path +
                           "': Kokkos Kernels' read_mtx returned " + std::to_string(nv) +
                           " rows, the size line says " + std::to_string(info.rows));
  // read_mtx keeps one of two equal coordinates in symmetric files: a
  // shortfall against the count the scan expects means duplicates.
  if (ne != info.stored())
    mtx_fail(path, std::to_string(info.stored() - ne) +
                       " duplicate entries after mirroring the symmetric half");
  Triplets<Scalar, Ordinal> t(Ordinal(info.rows), Ordinal(info.cols));
  for (Ordinal r = 0; r < nv; ++r)
  {
    auto &row = t.rows[r];
    row.reserve(std::size_t(xadj[r + 1] - xadj[r]));
    for (Size p = xadj[r]; p < xadj[r + 1]; ++p)
      row.emplace_back(adj[p], Scalar(ew[p]));
  }
  mtx_finish(t, info, path);
  return t;
}

template <class Scalar, class Ordinal>
Triplets<Scalar, Ordinal> mtx_read_file(std::string const &file, std::string const &path)
{
  auto const info =
      mtx_scan(file, path, std::numeric_limits<Ordinal>::max(), [](auto, auto, auto) {});
  if (!info.kk_readable)
    return mtx_read_own<Scalar, Ordinal>(file, path, info);
  if (info.field == MtxField::integer)
    return mtx_read_kk<long long, Scalar, Ordinal>(file, path, info);
  return mtx_read_kk<double, Scalar, Ordinal>(file, path, info);
}

// A file created with mkostemp, closed and removed on destruction.
class MtxTemporaryFile
{
public:
  explicit MtxTemporaryFile(std::string const &stem)
  {
    std::error_code error;
    auto const dir = std::filesystem::temp_directory_path(error);
    std::string name = (error ? std::filesystem::path("/tmp") : dir) / (stem + "-XXXXXX");
    fd_ = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd_ < 0)
      throw std::runtime_error(
          "hst::workload::read_matrix_market: cannot create a temporary "
          "file '" +
          name + "': " + std::strerror(errno));
    path_ = name;
  }
  MtxTemporaryFile(MtxTemporaryFile const &) = delete;
  MtxTemporaryFile &operator=(MtxTemporaryFile const &) = delete;
  ~MtxTemporaryFile()
  {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  int fd() const { return fd_; }
  std::string const &path() const { return path_; }

private:
  int fd_ = -1;
  std::string path_;
};

// Runs `gzip -dc -- path` with its output into `out`.
inline void mtx_gunzip(std::string const &path, MtxTemporaryFile const &out)
{
  MtxTemporaryFile errors("hst-gzip-stderr");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out.fd(), 1);
  posix_spawn_file_actions_adddup2(&actions, errors.fd(), 2);
  std::string gzip = "gzip", dc = "-dc", dashes = "--", file = path;
  char *argv[] = {gzip.data(), dc.data(), dashes.data(), file.data(), nullptr};
  pid_t pid = 0;
  int const spawned = ::posix_spawnp(&pid, "gzip", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0)
    throw std::runtime_error("hst::workload::read_matrix_market: '" + path +
                             "': cannot run 'gzip -dc': " + std::strerror(spawned));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      throw std::runtime_error(
          "hst::workload::read_matrix_market: '" + path +
          "': waiting for 'gzip -dc' failed: " + std::strerror(errno));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return;
  std::string message;
  {
    std::ifstream in(errors.path());
    std::getline(in, message);
  }
  if (message.size() > 300)
    message.resize(300);
  mtx_fail(path,
           "'gzip -dc' failed (" +
               (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                  : std::string("killed")) +
               (message.empty() ? std::string(")") : "): " + message));
}

} // namespace detail

/// The Matrix Market file at `path` (.mtx; .gz decompressed with the system
/// gzip) as Triplets, rows sorted by column. Scalar must be a real
/// floating-point type. See the top of this file for what is supported and
/// which reader runs.
template <class Scalar, class Ordinal>
Triplets<Scalar, Ordinal> read_matrix_market(std::string const &path)
{
  static_assert(
      std::is_floating_point<Scalar>::value,
      "hst::workload::read_matrix_market: Scalar must be a real floating-point type");
  std::error_code error;
  auto const status = std::filesystem::status(path, error);
  if (!std::filesystem::exists(status))
    detail::mtx_fail(path, "no such file");
  if (std::filesystem::is_directory(status))
    detail::mtx_fail(path, "is a directory");
  if (!std::ifstream(path))
    detail::mtx_fail(path, "cannot be read");
  bool const gz = path.size() >= 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
  if (!gz)
    return detail::mtx_read_file<Scalar, Ordinal>(path, path);
  detail::MtxTemporaryFile decompressed("hst-mtx");
  detail::mtx_gunzip(path, decompressed);
  return detail::mtx_read_file<Scalar, Ordinal>(decompressed.path(), path);
}

} // namespace hst::workload
