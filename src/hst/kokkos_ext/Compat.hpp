#pragma once
// Differences between Kokkos 3.4 (Debian 12) and Kokkos 4.x, and nothing else.

#include <Kokkos_Core.hpp>

namespace hst::kokkos_ext
{

// Kokkos 3.4 declares `concurrency()` static on some backends (Serial) and a
// member on others; Kokkos 4 makes it a member everywhere. Calling it through
// the instance compiles on both.
template <class ExecutionSpace>
int concurrency(ExecutionSpace const &space)
{
  return space.concurrency();
}

template <class AccessingSpace, class MemorySpace>
inline constexpr bool is_accessible_from =
    Kokkos::SpaceAccessibility<AccessingSpace, MemorySpace>::accessible;

template <class MemorySpace>
inline constexpr bool is_host_accessible =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible;

} // namespace hst::kokkos_ext
