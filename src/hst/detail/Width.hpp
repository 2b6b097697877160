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

// y(r, :) += v * x
template <bool Atomic, class Y, class Ordinal, class Scalar, class X>
KOKKOS_FORCEINLINE_FUNCTION void add_scaled(Y const &y, Ordinal r, Scalar v, X const &x)
{
  for (int b = 0; b < x.size(); ++b)
  {
    if constexpr (Atomic)
      Kokkos::atomic_add(&y(r, b), v * x[b]);
    else
      y(r, b) += v * x[b];
  }
}

} // namespace hst::detail
