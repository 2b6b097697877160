#pragma once

#include <hst/HST.hpp>

#include <KokkosSparse_CrsMatrix.hpp>
#include <KokkosSparse_spmv.hpp>
#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>

#include <workload/Generators.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace hst_test
{

// The execution spaces the tests run on: every one Kokkos was built with, or
// (HST_TEST_ALL_SPACES=OFF, e.g. CI's OpenMP and HIP jobs, whose Serial space
// the Serial jobs test) its default one.
#ifdef HST_TEST_DEFAULT_SPACE_ONLY
using DeviceTypes = ::testing::Types<Kokkos::DefaultExecutionSpace>;
#else
using DeviceTypes = ::testing::Types<
#ifdef KOKKOS_ENABLE_CUDA
    Kokkos::Cuda,
#endif
#ifdef KOKKOS_ENABLE_HIP
    Kokkos::Experimental::HIP,
#endif
#ifdef KOKKOS_ENABLE_OPENMP
    Kokkos::OpenMP,
#endif
#ifdef KOKKOS_ENABLE_THREADS
    Kokkos::Threads,
#endif
#ifdef KOKKOS_ENABLE_SERIAL
    Kokkos::Serial
#endif
    >;
#endif

using Scalar = double;
using Ordinal = int;

template <class ExecutionSpace>
using Matrix = KokkosSparse::CrsMatrix<
    Scalar, Ordinal,
    Kokkos::Device<ExecutionSpace, typename ExecutionSpace::memory_space>>;

using Triplets = hst::workload::Triplets<Scalar, Ordinal>;

template <class ExecutionSpace>
Matrix<ExecutionSpace> to_matrix(Triplets const &t)
{
  return hst::workload::to_crs<Matrix<ExecutionSpace>>(t);
}

// A host View filled from a std::vector, copied to `Space`'s memory.
template <class MemorySpace, class T>
Kokkos::View<T *, MemorySpace> to_view(std::vector<T> const &v,
                                       char const *label = "hst_test::view")
{
  Kokkos::View<T *, Kokkos::HostSpace> host(std::string(label), v.size());
  std::copy(v.begin(), v.end(), host.data());
  return Kokkos::create_mirror_view_and_copy(MemorySpace{}, host);
}

// Rank-2 View (rows x width) in `Layout`, filled from row-major `values`.
template <class Layout, class MemorySpace>
Kokkos::View<Scalar **, Layout, MemorySpace>
to_matrix_view(std::vector<Scalar> const &values, std::size_t rows, int width)
{
  Kokkos::View<Scalar **, Layout, MemorySpace> view("hst_test::dx", rows, width);
  auto host = Kokkos::create_mirror_view(view);
  for (std::size_t i = 0; i < rows; ++i)
    for (int b = 0; b < width; ++b)
      host(i, b) = values[i * width + b];
  Kokkos::deep_copy(view, host);
  return view;
}

template <class View>
std::vector<Scalar> to_host_rows(View const &y)
{
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y);
  std::vector<Scalar> out(y.extent(0) * y.extent(1));
  for (std::size_t r = 0; r < y.extent(0); ++r)
    for (std::size_t b = 0; b < y.extent(1); ++b)
      out[r * y.extent(1) + b] = host(r, b);
  return out;
}

// y += A[:, cols] * dx by a plain loop over the rows of A on the host.
inline void reference_apply(Triplets const &A, std::vector<Ordinal> const &cols,
                            std::vector<Scalar> const &dx, int width,
                            std::vector<Scalar> &y)
{
  std::vector<int> position(A.n_cols, -1);
  for (std::size_t i = 0; i < cols.size(); ++i)
    position[cols[i]] = int(i);
  for (Ordinal r = 0; r < A.n_rows; ++r)
    for (auto const &[c, v] : A.rows[r])
      if (position[c] >= 0)
        for (int b = 0; b < width; ++b)
          y[std::size_t(r) * width + b] += v * dx[std::size_t(position[c]) * width + b];
}

// A x by KokkosSparse::spmv (the full recompute), x and the result row-major
// on the host.
template <class Matrix>
std::vector<Scalar> full_recompute(Matrix const &A, std::vector<Scalar> const &x,
                                   int width)
{
  using memory_space = typename Matrix::memory_space;
  auto const x_view = to_matrix_view<Kokkos::LayoutLeft, memory_space>(
      x, std::size_t(A.numCols()), width);
  Kokkos::View<Scalar **, Kokkos::LayoutLeft, memory_space> y("hst_test::y_full",
                                                              A.numRows(), width);
  KokkosSparse::spmv("N", 1.0, A, x_view, 0.0, y);
  return to_host_rows(y);
}

// Expects `f` to throw std::invalid_argument whose what() holds every piece.
template <class F>
void expect_invalid(F &&f, std::vector<std::string> const &pieces)
{
  try
  {
    f();
    ADD_FAILURE() << "no exception thrown";
  }
  catch (std::invalid_argument const &e)
  {
    std::string const what = e.what();
    for (auto const &piece : pieces)
      EXPECT_NE(what.find(piece), std::string::npos)
          << "\"" << piece << "\" missing from: " << what;
  }
  catch (std::exception const &e)
  {
    ADD_FAILURE() << "not std::invalid_argument: " << e.what();
  }
}

// max |a - b| / max |b|
inline double relative_error(std::vector<Scalar> const &a, std::vector<Scalar> const &b)
{
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
  {
    diff = std::max(diff, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return scale > 0 ? diff / scale : diff;
}

// Operator options whose steps all run as parallel kernels (on host backends
// with more than one thread), and ones whose steps all run on the calling
// thread.
inline hst::OperatorOptions every_step_parallel()
{
  hst::OperatorOptions options;
  options.min_parallel_work = 0;
  return options;
}
inline hst::OperatorOptions every_step_on_one_thread()
{
  hst::OperatorOptions options;
  options.min_parallel_work = std::numeric_limits<std::int64_t>::max();
  return options;
}

} // namespace hst_test
