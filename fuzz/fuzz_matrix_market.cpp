// libFuzzer target: hst::io::read_matrix_market on arbitrary bytes. The
// reader must either return a well-formed matrix (checked here entry by
// entry, and again after conversion to a KokkosSparse::CrsMatrix) or throw
// std::invalid_argument; anything else (another exception, a crash, a
// sanitizer report, a leak) is a finding. Sizes are capped through
// MatrixMarketOptions so that a declared size cannot exhaust memory.

#include <hst/io/MatrixMarket.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>

namespace
{

using Matrix = KokkosSparse::CrsMatrix<double, int, Kokkos::DefaultHostExecutionSpace>;

[[noreturn]] void finding(char const *what)
{
  std::fprintf(stderr, "fuzz_matrix_market: %s\n", what);
  std::abort();
}

void check(hst::io::MatrixMarketData<double, int> const &d)
{
  if (d.n_rows < 0 || d.n_cols < 0 || d.row_map.size() != std::size_t(d.n_rows) + 1 ||
      d.row_map.front() != 0 || std::size_t(d.row_map.back()) != d.entries.size() ||
      d.entries.size() != d.values.size())
    finding("inconsistent CSR sizes");
  for (int r = 0; r < d.n_rows; ++r)
  {
    if (d.row_map[r] > d.row_map[r + 1])
      finding("row_map decreases");
    for (auto p = d.row_map[r]; p < d.row_map[r + 1]; ++p)
    {
      if (d.entries[p] < 0 || d.entries[p] >= d.n_cols)
        finding("column id out of range");
      if (p > d.row_map[r] && d.entries[p - 1] >= d.entries[p])
        finding("row not strictly sorted (duplicate or unsorted)");
      if (!(d.values[p] == d.values[p]) || d.values[p] - d.values[p] != 0)
        finding("non-finite value accepted");
    }
  }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  Kokkos::initialize(*argc, *argv);
  std::atexit([] { Kokkos::finalize(); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const *data, std::size_t size)
{
  hst::io::MatrixMarketOptions limits;
  limits.max_dimension = 1 << 12;
  limits.max_entries = 1 << 14;
  std::string const text(reinterpret_cast<char const *>(data), size);
  std::istringstream in(text);
  hst::io::MatrixMarketData<double, int> d;
  try
  {
    d = hst::io::read_matrix_market_data<double, int>(in, "fuzz", limits);
  }
  catch (std::invalid_argument const &e)
  {
    if (std::string(e.what()).rfind("hst::io::read_matrix_market: 'fuzz': ", 0) != 0)
      finding("message does not name the function and the input");
    return 0;
  }
  check(d);
  // The same text through the CrsMatrix path must give the same matrix.
  std::istringstream again(text);
  auto const A = hst::io::read_matrix_market<Matrix>(again, "fuzz", limits);
  if (A.numRows() != d.n_rows || A.numCols() != d.n_cols ||
      std::size_t(A.nnz()) != d.entries.size())
    finding("CrsMatrix differs from the data");
  for (std::size_t p = 0; p < d.entries.size(); ++p)
    if (A.graph.entries(p) != d.entries[p] || A.values(p) != d.values[p])
      finding("CrsMatrix entry differs from the data");
  return 0;
}
