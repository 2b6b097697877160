#pragma once
// Test and benchmark fixture: a Matrix Market file (.mtx, or .mtx.gz through
// the system gzip) as Triplets, for the operator suite and hst-sweep. The
// parsing is the public reader's (hst/io/MatrixMarket.hpp); this adds
//  - .gz files, decompressed by `gzip -dc` into a private temporary file
//    (mkostemp in the temporary directory), removed afterwards;
//  - pattern entries valued entry_value(r, c) (Generators.hpp) instead of 1,
//    with (r, c) taken in the lower triangle for symmetric files so the
//    operator stays symmetric, so that every entry is distinct.
//
// Errors: std::invalid_argument for a missing, unreadable or malformed file
// or one gzip cannot decompress (naming the path); std::runtime_error when
// the system fails (no temporary file, gzip cannot be started).

#include <hst/io/MatrixMarket.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <workload/Generators.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <type_traits>

extern char **environ; // POSIX; for posix_spawnp

namespace hst::workload
{
namespace detail
{

[[noreturn]] inline void mtx_fail(std::string const &path, std::string const &what)
{
  throw std::invalid_argument("hst::workload::read_matrix_market: '" + path +
                              "': " + what);
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
/// gzip) as Triplets, rows sorted by column, pattern entries valued
/// entry_value(r, c).
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
  bool const gz = path.size() >= 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
  auto const read = [&](std::string const &file) {
    std::ifstream in(file, std::ios::binary);
    if (!in)
      detail::mtx_fail(path, "cannot be read");
    return hst::io::read_matrix_market_data<Scalar, Ordinal>(in, path);
  };
  hst::io::MatrixMarketData<Scalar, Ordinal> data;
  if (gz)
  {
    detail::MtxTemporaryFile decompressed("hst-mtx");
    detail::mtx_gunzip(path, decompressed);
    data = read(decompressed.path());
  }
  else
    data = read(path);
  Triplets<Scalar, Ordinal> t(data.n_rows, data.n_cols);
  bool const pattern = data.field == hst::io::MatrixMarketField::pattern;
  bool const general = data.symmetry == hst::io::MatrixMarketSymmetry::general;
  for (Ordinal r = 0; r < data.n_rows; ++r)
  {
    auto &row = t.rows[std::size_t(r)];
    row.reserve(std::size_t(data.row_map[r + 1] - data.row_map[r]));
    for (auto p = data.row_map[r]; p < data.row_map[r + 1]; ++p)
    {
      std::int64_t const c = data.entries[std::size_t(p)];
      Scalar const v = !pattern  ? data.values[std::size_t(p)]
                       : general ? Scalar(entry_value(r, c))
                                 : Scalar(entry_value(std::max<std::int64_t>(r, c),
                                                      std::min<std::int64_t>(r, c)));
      row.emplace_back(Ordinal(c), v);
    }
  }
  return t;
}

} // namespace hst::workload
