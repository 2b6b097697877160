#pragma once
// Batch width B at compile time: the kernels keep a row of dx in registers and
// the B-wide update vectorises when B is known. Common widths get their own
// instantiation; any other B runs the generic (W = 0) kernel.

#include <Kokkos_Core.hpp>

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

// Where a kernel runs on the host and reads dx rows out of order (the
// scheduled and exact-set arms walk them by row block, not by position), a
// prefetch sweep over dx first turns k dependent cache misses into one
// sequential stream. A no-op for device spaces and non-contiguous dx.
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

} // namespace hst::detail
