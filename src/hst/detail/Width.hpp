#pragma once
// Batch width B at compile time: the kernels keep a row of dx in registers and
// the B-wide update vectorises when B is known. Common widths get their own
// instantiation; any other B runs the generic (W = 0) kernel.

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <type_traits>

namespace hst::detail
{

template <class F>
void dispatch_width(int width, F &&launch)
{
  switch (width)
  {
  case 1:
    launch(std::integral_constant<int, 1>{});
    break;
  case 2:
    launch(std::integral_constant<int, 2>{});
    break;
  case 4:
    launch(std::integral_constant<int, 4>{});
    break;
  case 8:
    launch(std::integral_constant<int, 8>{});
    break;
  case 16:
    launch(std::integral_constant<int, 16>{});
    break;
  default:
    launch(std::integral_constant<int, 0>{});
    break;
  }
}

// Row i of dx: held in registers for W > 0, read through for W = 0.
template <int W, class Dx>
struct DxRow
{
  static constexpr int contiguous_width = W;
  typename Dx::non_const_value_type value[W];
  KOKKOS_FORCEINLINE_FUNCTION DxRow(Dx const &dx, int i, int)
  {
    for (int b = 0; b < W; ++b)
      value[b] = dx(i, b);
  }
  KOKKOS_FORCEINLINE_FUNCTION auto operator[](int b) const { return value[b]; }
  KOKKOS_FORCEINLINE_FUNCTION static constexpr int size() { return W; }
};

template <class Dx>
struct DxRow<0, Dx>
{
  static constexpr int contiguous_width = 0;
  Dx const &dx;
  int i;
  int width;
  KOKKOS_FORCEINLINE_FUNCTION DxRow(Dx const &dx_, int i_, int width_)
      : dx(dx_)
      , i(i_)
      , width(width_)
  {}
  KOKKOS_FORCEINLINE_FUNCTION auto operator[](int b) const { return dx(i, b); }
  KOKKOS_FORCEINLINE_FUNCTION int size() const { return width; }
};

// Where a kernel runs on the calling thread and reads dx rows out of order
// (the scheduled and exact-set arms walk them by row block, not by position),
// a prefetch sweep over dx first turns k dependent cache misses into one
// sequential stream. A no-op for device spaces and non-contiguous dx. Not
// for parallel launches: the sweep is serial and fills the calling core's
// caches only (on 1e6-row steps at k = 30000 it held the scheduled arm's two
// threads at 1.6-1.7x one thread's speed; without it, 2.2x).
template <class ExecutionSpace, class Dx>
void prefetch_on_host(Dx const &dx)
{
#if defined(__GNUC__)
  if constexpr (Kokkos::SpaceAccessibility<ExecutionSpace,
                                           Kokkos::HostSpace>::accessible &&
                Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                           typename Dx::memory_space>::accessible)
  {
    if (!dx.span_is_contiguous())
      return;
    auto const *const begin = reinterpret_cast<char const *>(dx.data());
    auto const *const end = begin + dx.span() * sizeof(typename Dx::value_type);
    for (auto const *p = begin; p < end; p += 64)
      __builtin_prefetch(p);
  }
#else
  (void)dx;
#endif
}

// y(r, :) += v * x. Where a row of y is contiguous (LayoutRight) and B is
// known, the update goes through a plain pointer so that it vectorises.
template <bool Atomic, class Y, class Ordinal, class Scalar, class X>
KOKKOS_FORCEINLINE_FUNCTION void add_scaled(Y const &y, Ordinal r, Scalar v, X const &x)
{
  if constexpr (!Atomic && X::contiguous_width > 0 &&
                std::is_same_v<typename Y::array_layout, Kokkos::LayoutRight>)
  {
    // All loads before all stores: GCC's SLP vectoriser takes this form, not
    // the interleaved `row[b] += ...` one.
    auto *const row = &y(r, 0);
    typename Y::non_const_value_type sum[X::contiguous_width];
    for (int b = 0; b < X::contiguous_width; ++b)
      sum[b] = row[b] + v * x.value[b];
    for (int b = 0; b < X::contiguous_width; ++b)
      row[b] = sum[b];
  }
  else
  {
    for (int b = 0; b < x.size(); ++b)
    {
      if constexpr (Atomic)
        Kokkos::atomic_add(&y(r, b), v * x[b]);
      else
        y(r, b) += v * x[b];
    }
  }
}

// Where a row of y is not contiguous (LayoutLeft), a row's B values lie a
// column apart. When that distance is a multiple of 64 KiB (a column length
// divisible by 8192 doubles), the B lines of a row fall in one set of the L2
// cache (and of the L1; on large y, beyond 512 KiB, likely of the TLB too),
// and a kernel that adds an entry's B terms at once evicts its own lines.
// Measured on this project's 2-core machine (48 KiB L1d, 1 MiB L2 per core),
// LayoutLeft, B = 8:
//  - grid3d_7pt_32x32x32 (32768 rows, columns 256 KiB apart; `hst-sweep
//    --microsecond --operators grid3d_7pt_32x32x32 --motions frozen,drift
//    --rho 0.01`, frozen, two runs each): scatter 24.7 and 25.0 us/step
//    row-wise (1.4-2.6 on LayoutRight), 4.5 and 6.4 column by column;
//    scheduled 24.3 and 24.1 against 5.0 and 6.9; drift alike.
//  - 2D grids, k = 3000, drift (bench_kernels), the scatter and scheduled
//    steps over the exact-set arm's (which writes each row once): row-wise
//    1.8-2.2x and 2.6-2.8x on 512^2, 1024^2 and 1536^2 rows (multiples of
//    2 MiB apart), 1.3x and 1.6x on 768^2 (512 KiB x 9), 0.7x on 896^2
//    (128 KiB x 49); column by column 0.5-0.9x and 0.6-0.8x, 0.8x and 0.8x,
//    and 0.9x on 896^2: there, with y far larger than the caches, the
//    column walk (which reads each entry B times) lost, the price of one
//    rule. It lost too on 1000^2, 992^2 and 960^2 (columns 8000 bytes and
//    8 and 32 KiB times an odd number apart), which stay row-wise.
// Putting a row's loads before its stores did not help. Where
// columns_collide(y) the host kernels add runs of entries one column of y at
// a time; each y(r, b) receives the same terms in the same order either way,
// so the sums are bitwise the same.
template <class Y>
bool columns_collide(Y const &y)
{
  if constexpr (std::is_same_v<typename Y::array_layout, Kokkos::LayoutRight>)
    return false;
  else
    return y.extent(1) > 1 &&
           (y.stride(1) * sizeof(typename Y::value_type)) % (std::size_t(64) << 10) == 0;
}

// Adds a run of entries into y one column at a time. `run(add)` calls
// add(position, begin, end) for each piece of the run, in order: the entries
// [begin, end) of `row` and `val`, scaled by row `position` of dx.
template <int W, class Rows, class Values, class Dx, class Y, class Run>
KOKKOS_FORCEINLINE_FUNCTION void add_run_by_column(Run const &run, Rows const &row,
                                                   Values const &val, Dx const &dx,
                                                   Y const &y, int width)
{
  int const n_b = W > 0 ? W : width;
  for (int b = 0; b < n_b; ++b)
    run([&](int position, std::size_t begin, std::size_t end) {
      auto const x = dx(position, b);
      for (auto p = begin; p < end; ++p)
        y(row(p), b) += val(p) * x;
    });
}

} // namespace hst::detail
