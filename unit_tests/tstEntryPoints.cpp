// Every public entry point of the single-process library, instantiated for
// the default execution space and every memory space an Operator may live in
// on this build (the default one, and the host-accessible device spaces of
// CUDA and HIP builds): each arm and the adaptive session, made with and
// without an execution-space instance, applied with dx and y in both layouts,
// at B = 1, 8 and 5 (a width without its own kernel); hst::resync and
// hst::io::read_matrix_market into each memory space. Each step is checked
// against a plain host loop, so the program is a test where it can run; the
// HIP and CUDA jobs of scripts/test.sh compile and link it only (no GPU).
// Plain main, no GoogleTest: those jobs build this target alone.

#include <hst/HST.hpp>

#include <KokkosSparse_CrsMatrix.hpp>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace
{

using Scalar = double;
using Ordinal = int;
using ExecutionSpace = Kokkos::DefaultExecutionSpace;

int failures = 0;

// A 2D 5-point Laplacian on an n x n grid, rows on the host.
struct HostCrs
{
  Ordinal n = 0;
  std::vector<std::size_t> row_map;
  std::vector<Ordinal> col;
  std::vector<Scalar> val;
};

HostCrs grid(Ordinal side)
{
  HostCrs a;
  a.n = side * side;
  a.row_map.push_back(0);
  for (Ordinal r = 0; r < a.n; ++r)
  {
    Ordinal const i = r / side, j = r % side;
    auto add = [&](Ordinal c, Scalar v) {
      a.col.push_back(c);
      a.val.push_back(v);
    };
    if (i > 0)
      add(r - side, -1.0);
    if (j > 0)
      add(r - 1, -1.0);
    add(r, 4.0 + 0.001 * r);
    if (j + 1 < side)
      add(r + 1, -1.0);
    if (i + 1 < side)
      add(r + side, -1.0);
    a.row_map.push_back(a.col.size());
  }
  return a;
}

template <class MemorySpace>
auto to_device(HostCrs const &a)
{
  using Device = Kokkos::Device<ExecutionSpace, MemorySpace>;
  using Matrix = KokkosSparse::CrsMatrix<Scalar, Ordinal, Device, void, std::size_t>;
  Kokkos::View<std::size_t *, MemorySpace> row_map("row_map", a.row_map.size());
  Kokkos::View<Ordinal *, MemorySpace> col("col", a.col.size());
  Kokkos::View<Scalar *, MemorySpace> val("val", a.val.size());
  auto row_map_h = Kokkos::create_mirror_view(row_map);
  auto col_h = Kokkos::create_mirror_view(col);
  auto val_h = Kokkos::create_mirror_view(val);
  for (std::size_t i = 0; i < a.row_map.size(); ++i)
    row_map_h(i) = a.row_map[i];
  for (std::size_t i = 0; i < a.col.size(); ++i)
  {
    col_h(i) = a.col[i];
    val_h(i) = a.val[i];
  }
  Kokkos::deep_copy(row_map, row_map_h);
  Kokkos::deep_copy(col, col_h);
  Kokkos::deep_copy(val, val_h);
  return Matrix("A", a.n, a.n, Ordinal(a.val.size()), val, row_map, col);
}

// One step of `arm` on `cols`, dx and y in the given layouts, against the
// host loop.
template <class MemorySpace, class DxLayout, class YLayout, class Arm>
void check_step(std::string const &what, HostCrs const &a, Arm &arm,
                std::vector<Ordinal> const &cols, int width)
{
  std::size_t const k = cols.size();
  Kokkos::View<Ordinal *, MemorySpace> cols_d("cols", k);
  Kokkos::View<Scalar **, DxLayout, MemorySpace> dx("dx", k, width);
  Kokkos::View<Scalar **, YLayout, MemorySpace> y("y", a.n, width);
  auto cols_h = Kokkos::create_mirror_view(cols_d);
  auto dx_h = Kokkos::create_mirror_view(dx);
  auto y_h = Kokkos::create_mirror_view(y);
  std::vector<Scalar> expected(std::size_t(a.n) * width);
  for (Ordinal r = 0; r < a.n; ++r)
    for (int b = 0; b < width; ++b)
      expected[std::size_t(r) * width + b] = y_h(r, b) = 0.5 * b - 0.25 * (r % 3);
  for (std::size_t i = 0; i < k; ++i)
  {
    cols_h(i) = cols[i];
    for (int b = 0; b < width; ++b)
      dx_h(i, b) = 1.0 + 0.125 * double(i) - 0.5 * b;
  }
  for (Ordinal r = 0; r < a.n; ++r)
    for (auto p = a.row_map[r]; p < a.row_map[r + 1]; ++p)
      for (std::size_t i = 0; i < k; ++i)
        if (cols[i] == a.col[p])
          for (int b = 0; b < width; ++b)
            expected[std::size_t(r) * width + b] += a.val[p] * dx_h(i, b);
  Kokkos::deep_copy(cols_d, cols_h);
  Kokkos::deep_copy(dx, dx_h);
  Kokkos::deep_copy(y, y_h);
  ExecutionSpace space;
  arm.apply_cols(space, cols_d, dx, y);
  // The overload without an instance runs on MemorySpace::execution_space:
  // for host-pinned memory a host space, not `space`. Steps of one arm on
  // two instances are the caller's to order; unordered, the host step races
  // the device kernel on y (a lost update, seen on CUDA in 5 of 22 runs).
  space.fence();
  arm.apply_cols(Kokkos::View<Ordinal const *, MemorySpace>(cols_d),
                 Kokkos::View<Scalar const **, DxLayout, MemorySpace>(dx), y);
  Kokkos::deep_copy(y_h, y);
  double worst = 0;
  for (Ordinal r = 0; r < a.n; ++r)
    for (int b = 0; b < width; ++b)
    {
      // Two identical steps: y0 + 2 * (expected - y0).
      auto const y0 = 0.5 * b - 0.25 * (r % 3);
      auto const want = y0 + 2 * (expected[std::size_t(r) * width + b] - y0);
      worst = std::max(worst, std::abs(y_h(r, b) - want) / (1 + std::abs(want)));
    }
  if (!(worst <= 1e-13))
  {
    ++failures;
    std::printf("FAILED %s: worst relative error %.3g\n", what.c_str(), worst);
  }
}

// hst::resync (y = A x, with and without an instance) and
// hst::io::read_matrix_market into this memory space, against the host loop.
template <class MemorySpace, class Layout>
void resync_and_reader(std::string const &where, HostCrs const &a, int width)
{
  auto const A = to_device<MemorySpace>(a);
  Kokkos::View<Scalar **, Layout, MemorySpace> x("x", a.n, width), y("y", a.n, width),
      y_default("y", a.n, width);
  auto x_h = Kokkos::create_mirror_view(x);
  for (Ordinal c = 0; c < a.n; ++c)
    for (int b = 0; b < width; ++b)
      x_h(c, b) = 0.25 * (c % 7) - 0.5 * b;
  Kokkos::deep_copy(x, x_h);
  ExecutionSpace space;
  hst::resync(space, A, x, y);
  hst::resync(A, x, y_default);
  space.fence();
  auto y_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y);
  auto y_default_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y_default);
  double worst = 0;
  for (Ordinal r = 0; r < a.n; ++r)
    for (int b = 0; b < width; ++b)
    {
      Scalar want = 0;
      for (auto p = a.row_map[r]; p < a.row_map[r + 1]; ++p)
        want += a.val[p] * x_h(a.col[p], b);
      worst = std::max({worst, std::abs(y_h(r, b) - want) / (1 + std::abs(want)),
                        std::abs(y_default_h(r, b) - want) / (1 + std::abs(want))});
    }
  if (!(worst <= 1e-13))
  {
    ++failures;
    std::printf("FAILED %s resync B=%d: worst relative error %.3g\n", where.c_str(),
                width, worst);
  }

  using Matrix = decltype(A);
  std::istringstream in("%%MatrixMarket matrix coordinate real general\n3 4 3\n"
                        "1 4 2.5\n3 1 -1\n1 2 0.5\n");
  auto const B = hst::io::read_matrix_market<Matrix>(in, "entry point");
  auto const row_map =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, B.graph.row_map);
  auto const col =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, B.graph.entries);
  auto const val = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, B.values);
  bool const ok = B.numRows() == 3 && B.numCols() == 4 && B.nnz() == 3 &&
                  row_map(1) == 2 && row_map(2) == 2 && row_map(3) == 3 && col(0) == 1 &&
                  val(0) == 0.5 && col(1) == 3 && val(1) == 2.5 && col(2) == 0 &&
                  val(2) == -1;
  if (!ok)
  {
    ++failures;
    std::printf("FAILED %s read_matrix_market\n", where.c_str());
  }
}

template <class MemorySpace, class DxLayout, class YLayout>
void every_arm(std::string const &where, HostCrs const &a, int width)
{
  auto const A = to_device<MemorySpace>(a);
  ExecutionSpace space;
  hst::Operator op(space, A);
  hst::Operator const op_default(A);
  std::vector<Ordinal> cols = {3, 0, a.n - 1, 17, 40};
  Kokkos::View<Ordinal *, MemorySpace> expected("expected", cols.size());
  auto expected_h = Kokkos::create_mirror_view(expected);
  for (std::size_t i = 0; i < cols.size(); ++i)
    expected_h(i) = cols[i];
  Kokkos::deep_copy(expected, expected_h);
  std::string const tag = where + " B=" + std::to_string(width);

  auto scheduled = op.session(space, expected, width);
  check_step<MemorySpace, DxLayout, YLayout>(tag + " session", a, scheduled, cols, width);
  auto scheduled_default = op_default.session(expected, width, hst::SessionOptions{});
  check_step<MemorySpace, DxLayout, YLayout>(tag + " session()", a, scheduled_default,
                                             cols, width);
  auto exact_set = op.baseline(width);
  check_step<MemorySpace, DxLayout, YLayout>(tag + " baseline", a, exact_set, cols,
                                             width);
  auto scatter = op.scatter(width);
  check_step<MemorySpace, DxLayout, YLayout>(tag + " scatter", a, scatter, cols, width);
  auto adaptive = op.adaptive(space, expected, width);
  check_step<MemorySpace, DxLayout, YLayout>(tag + " adaptive", a, adaptive, cols, width);
  auto adaptive_default = op_default.adaptive(expected, width, hst::AdaptiveOptions{});
  check_step<MemorySpace, DxLayout, YLayout>(tag + " adaptive()", a, adaptive_default,
                                             cols, width);
  // Steps that run as parallel kernels on host backends, and an empty step.
  hst::OperatorOptions parallel;
  parallel.min_parallel_work = 0;
  hst::Operator op_parallel(space, A, parallel);
  auto scatter_parallel = op_parallel.scatter(width);
  check_step<MemorySpace, DxLayout, YLayout>(tag + " scatter parallel", a,
                                             scatter_parallel, cols, width);
  auto baseline_parallel = op_parallel.baseline(width);
  check_step<MemorySpace, DxLayout, YLayout>(tag + " baseline empty", a,
                                             baseline_parallel, {}, width);
}

template <class MemorySpace>
void every_layout_and_width(char const *where, HostCrs const &a)
{
  for (int width : {1, 8, 5})
  {
    every_arm<MemorySpace, Kokkos::LayoutLeft, Kokkos::LayoutLeft>(
        std::string(where) + " left/left", a, width);
    every_arm<MemorySpace, Kokkos::LayoutRight, Kokkos::LayoutRight>(
        std::string(where) + " right/right", a, width);
    resync_and_reader<MemorySpace, Kokkos::LayoutLeft>(std::string(where) + " left", a,
                                                       width);
    resync_and_reader<MemorySpace, Kokkos::LayoutRight>(std::string(where) + " right", a,
                                                        width);
  }
}

} // namespace

int main(int argc, char **argv)
{
  Kokkos::ScopeGuard kokkos(argc, argv);
  auto const a = grid(12);
  every_layout_and_width<ExecutionSpace::memory_space>("default memory space", a);
#if defined(KOKKOS_ENABLE_CUDA)
  every_layout_and_width<Kokkos::CudaUVMSpace>("CudaUVMSpace", a);
  every_layout_and_width<Kokkos::CudaHostPinnedSpace>("CudaHostPinnedSpace", a);
#endif
#if defined(KOKKOS_ENABLE_HIP)
  every_layout_and_width<Kokkos::Experimental::HIPHostPinnedSpace>("HIPHostPinnedSpace",
                                                                   a);
#endif
  std::printf("%s: %d failure(s)\n", argv[0], failures);
  return failures == 0 ? 0 : 1;
}
