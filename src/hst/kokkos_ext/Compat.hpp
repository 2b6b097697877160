#pragma once
// Differences between Kokkos 3.4 (Debian 12) and Kokkos 4.x, and nothing else.

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>

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

// Waits for the work on `space`, without a heap allocation. From Kokkos 3.5
// on, fences have names (for Kokkos Tools): the unnamed `fence()` builds its
// default name, a std::string of 40-odd characters, on every call, and up to
// 4.6 at least, OpenMP::fence(name) copies the name (Tools::beginFence takes
// it by value; by reference on Kokkos' develop branch since May 2025), tools
// or not. So the name is a literal of at most 15 characters, which every
// common standard library keeps in the string itself (libstdc++ and MSVC 15,
// libc++ 22). Kokkos 3.4 has no named fences.
template <class ExecutionSpace, std::size_t N>
void fence(ExecutionSpace const &space, char const (&label)[N])
{
  static_assert(N <= 16, "hst::kokkos_ext::fence: the label must fit a std::string's "
                         "small-string buffer (at most 15 characters)");
#if KOKKOS_VERSION >= 30500
  space.fence(std::string(label));
#else
  (void)label;
  space.fence();
#endif
}

template <class AccessingSpace, class MemorySpace>
inline constexpr bool is_accessible_from =
    Kokkos::SpaceAccessibility<AccessingSpace, MemorySpace>::accessible;

template <class MemorySpace>
inline constexpr bool is_host_accessible =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible;

} // namespace hst::kokkos_ext
