#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>

namespace hst::workload
{

/// max |y - reference| / max |reference| over two rank-2 Views of equal
/// extents in any memory space (both are copied to the host).
template <class Y, class Reference>
double relative_difference(Y const &y, Reference const &reference)
{
  auto const a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y);
  auto const b = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, reference);
  double diff = 0, scale = 0;
  for (std::size_t r = 0; r < a.extent(0); ++r)
    for (std::size_t c = 0; c < a.extent(1); ++c)
    {
      diff = std::max(diff, double(std::abs(a(r, c) - b(r, c))));
      scale = std::max(scale, double(std::abs(b(r, c))));
    }
  return scale > 0 ? diff / scale : diff;
}

} // namespace hst::workload
