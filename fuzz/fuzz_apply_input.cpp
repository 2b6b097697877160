// libFuzzer target: the input checks of the public arms' apply_cols
// (src/hst/detail/InputCheck.hpp), reached with fuzzer-chosen operators,
// arms, batch widths, column ids (in range, out of range, repeated, extreme)
// and View extents and layouts, over several steps of one arm (so the
// scheduled arm's re-planning runs between checks). Each step must either
// apply correctly (y = y_before + A[:, cols] dx, against a dense host
// reference) or throw std::invalid_argument / std::out_of_range with y
// bit-for-bit untouched; which of the two is decided here, independently of
// the library. Arm construction (B, expected columns) is checked the same way.

#include <hst/HST.hpp>

#include <Kokkos_Core.hpp>

#include "FuzzBytes.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace
{

using Scalar = double;
using Ordinal = int;
using ExecutionSpace = Kokkos::DefaultHostExecutionSpace;
using memory_space = ExecutionSpace::memory_space;
using Matrix = KokkosSparse::CrsMatrix<Scalar, Ordinal, ExecutionSpace>;
using Op = hst::Operator<Scalar, Ordinal, memory_space>;

[[noreturn]] void finding(std::string const &what)
{
  std::fprintf(stderr, "fuzz_apply_input: %s\n", what.c_str());
  std::abort();
}

// A small operator, dense on the host for the reference.
struct Case
{
  Ordinal n_rows, n_cols;
  std::vector<Scalar> dense; // row-major
  std::unique_ptr<Op> op;
};

Case make_case(Ordinal n_rows, Ordinal n_cols, bool (*present)(Ordinal, Ordinal),
               hst::OperatorOptions const &options)
{
  Case c{
      n_rows, n_cols, std::vector<Scalar>(std::size_t(n_rows) * std::size_t(n_cols)), {}};
  Kokkos::View<std::size_t *, memory_space> row_map("hst_fuzz::row_map",
                                                    std::size_t(n_rows) + 1);
  std::vector<Ordinal> entries;
  std::vector<Scalar> values;
  for (Ordinal r = 0; r < n_rows; ++r)
  {
    for (Ordinal col = 0; col < n_cols; ++col)
      if (present(r, col))
      {
        Scalar const v =
            1.0 + 0.25 * Scalar((r * 7 + col * 3) % 11) - (r == col ? 0 : 2.0);
        entries.push_back(col);
        values.push_back(v);
        c.dense[std::size_t(r) * std::size_t(n_cols) + std::size_t(col)] = v;
      }
    row_map(std::size_t(r) + 1) = entries.size();
  }
  Kokkos::View<Ordinal *, memory_space> e("hst_fuzz::entries", entries.size());
  Kokkos::View<Scalar *, memory_space> v("hst_fuzz::values", values.size());
  std::copy(entries.begin(), entries.end(), e.data());
  std::copy(values.begin(), values.end(), v.data());
  Matrix A("hst_fuzz::A", n_rows, n_cols, Ordinal(entries.size()), v, row_map, e);
  c.op = std::make_unique<Op>(A, options);
  return c;
}

std::vector<Case> &cases()
{
  static std::vector<Case> all;
  return all;
}

template <class Arm, class DxLayout, class YLayout>
void step(Case const &c, Arm &arm, int width, hst_fuzz::FuzzBytes &in, std::uint8_t flags)
{
  // Column ids: mostly in range or just outside, sometimes any 32-bit value.
  std::size_t const k = std::size_t(in.below(12));
  Kokkos::View<Ordinal *, memory_space> cols("hst_fuzz::cols", k);
  for (std::size_t i = 0; i < k; ++i)
  {
    auto const mode = in.u8();
    cols(i) = mode < 224 ? Ordinal(int(mode) % (c.n_cols + 2) - 1) : Ordinal(in.u32());
  }
  auto extent = [&](std::size_t n, std::uint8_t bit) {
    return (flags & bit) ? std::size_t(std::max<long>(0, long(n) + long(in.below(3)) - 1))
                         : n;
  };
  std::size_t const dx_rows = extent(k, 1), dx_cols = extent(std::size_t(width), 2);
  std::size_t const y_rows = extent(std::size_t(c.n_rows), 4),
                    y_cols = extent(std::size_t(width), 8);
  Kokkos::View<Scalar **, DxLayout, memory_space> dx("hst_fuzz::dx", dx_rows, dx_cols);
  Kokkos::View<Scalar **, YLayout, memory_space> y("hst_fuzz::y", y_rows, y_cols);
  for (std::size_t i = 0; i < dx_rows; ++i)
    for (std::size_t b = 0; b < dx_cols; ++b)
      dx(i, b) = (Scalar(in.u8()) - 128) / 16;
  for (std::size_t r = 0; r < y_rows; ++r)
    for (std::size_t b = 0; b < y_cols; ++b)
      y(r, b) = 0.5 * Scalar(r) - Scalar(b);
  std::vector<Scalar> before(y_rows * y_cols);
  for (std::size_t r = 0; r < y_rows; ++r)
    for (std::size_t b = 0; b < y_cols; ++b)
      before[r * y_cols + b] = y(r, b);

  // The oracle: is this call valid?
  bool valid = dx_rows == k && dx_cols == std::size_t(width) &&
               y_rows == std::size_t(c.n_rows) && y_cols == std::size_t(width);
  std::vector<char> seen(std::size_t(c.n_cols), 0);
  for (std::size_t i = 0; i < k && valid; ++i)
  {
    auto const id = cols(i);
    valid = id >= 0 && id < c.n_cols && !seen[std::size_t(id)];
    if (valid)
      seen[std::size_t(id)] = 1;
  }

  bool threw = false;
  try
  {
    arm.apply_cols(ExecutionSpace{}, cols, dx, y);
    ExecutionSpace{}.fence();
  }
  catch (std::invalid_argument const &)
  {
    threw = true;
  }
  catch (std::out_of_range const &)
  {
    threw = true;
  }
  if (threw && valid)
    finding("valid input rejected");
  if (!threw && !valid)
    finding("invalid input accepted");
  if (threw)
  {
    for (std::size_t r = 0; r < y_rows; ++r)
      for (std::size_t b = 0; b < y_cols; ++b)
        if (!(y(r, b) == before[r * y_cols + b])) // bitwise for these finite values
          finding("y changed by a rejected call");
    return;
  }
  for (std::size_t r = 0; r < y_rows; ++r)
    for (std::size_t b = 0; b < y_cols; ++b)
    {
      Scalar expected = before[r * y_cols + b], scale = std::abs(expected);
      for (std::size_t i = 0; i < k; ++i)
      {
        Scalar const term =
            c.dense[r * std::size_t(c.n_cols) + std::size_t(cols(i))] * dx(i, b);
        expected += term;
        scale += std::abs(term);
      }
      if (std::abs(y(r, b) - expected) > 1e-12 * std::max<Scalar>(1, scale))
        finding("wrong answer at row " + std::to_string(r) + ", column " +
                std::to_string(b));
    }
}

template <class Arm>
void run_steps(Case const &c, Arm &arm, int width, hst_fuzz::FuzzBytes &in)
{
  for (int s = 0; s < 6 && !in.empty(); ++s)
  {
    auto const flags = in.u8();
    switch ((flags >> 4) & 3)
    {
    case 0:
      step<Arm, Kokkos::LayoutLeft, Kokkos::LayoutLeft>(c, arm, width, in, flags);
      break;
    case 1:
      step<Arm, Kokkos::LayoutRight, Kokkos::LayoutLeft>(c, arm, width, in, flags);
      break;
    case 2:
      step<Arm, Kokkos::LayoutLeft, Kokkos::LayoutRight>(c, arm, width, in, flags);
      break;
    default:
      step<Arm, Kokkos::LayoutRight, Kokkos::LayoutRight>(c, arm, width, in, flags);
    }
  }
}

// Builds an arm with `make`, expecting std::invalid_argument exactly when
// `valid` is false; runs the steps on it.
template <class Make>
void with_arm(Case const &c, bool valid, int width, hst_fuzz::FuzzBytes &in, Make &&make)
{
  try
  {
    auto arm = make();
    if (!valid)
      finding("invalid arm arguments accepted");
    run_steps(c, arm, width, in);
  }
  catch (std::invalid_argument const &e)
  {
    // Only the construction may throw here: step() catches its own.
    if (valid)
      finding(std::string("valid arm arguments rejected: ") + e.what());
  }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  Kokkos::initialize(*argc, *argv);
  // The operators go before Kokkos::finalize, and before the static vector
  // itself, made first so that its destructor runs after this handler.
  cases();
  std::atexit([] {
    cases().clear();
    Kokkos::finalize();
  });
  hst::OperatorOptions small;
  small.tile = 2;
  small.row_block = 4;
  // Square 5-point stencil, rectangular with empty rows and columns, no entries.
  cases().push_back(make_case(
      24, 24,
      [](Ordinal r, Ordinal c) {
        return r == c || r == c + 1 || c == r + 1 || r == c + 6 || c == r + 6;
      },
      small));
  cases().push_back(make_case(
      9, 13,
      [](Ordinal r, Ordinal c) { return r != 4 && c % 5 != 2 && (r * 3 + c) % 4 == 0; },
      {}));
  cases().push_back(make_case(
      4, 3, [](Ordinal, Ordinal) { return false; }, small));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const *data, std::size_t size)
{
  hst_fuzz::FuzzBytes in(data, size);
  Case const &c = cases()[std::size_t(in.below(int(cases().size())))];
  auto const arm = in.below(4);
  int const width = int(in.u8() % 20) - 2; // -2 .. 17
  // Expected columns (scheduled arm and adaptive session): repeats allowed,
  // out-of-range ids not.
  std::size_t const n_expected = std::size_t(in.below(8));
  Kokkos::View<Ordinal *, memory_space> expected("hst_fuzz::expected", n_expected);
  bool expected_ok = true;
  for (std::size_t i = 0; i < n_expected; ++i)
  {
    expected(i) = Ordinal(int(in.u8()) % (c.n_cols + 2) - 1);
    expected_ok = expected_ok && expected(i) >= 0 && expected(i) < c.n_cols;
  }
  bool const width_ok = width >= 1;
  auto const &op = *c.op;
  switch (arm)
  {
  case 0:
    with_arm(c, width_ok && expected_ok, width, in,
             [&] { return op.session(expected, width); });
    break;
  case 1:
    with_arm(c, width_ok, width, in, [&] { return op.baseline(width); });
    break;
  case 2:
    with_arm(c, width_ok, width, in, [&] { return op.scatter(width); });
    break;
  default:
    with_arm(c, width_ok && expected_ok, width, in,
             [&] { return op.adaptive(expected, width); });
  }
  return 0;
}
