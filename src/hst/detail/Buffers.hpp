#pragma once

#include <hst/kokkos_ext/Compat.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>

namespace hst::detail
{

// A copy of `host` in MemorySpace: `host` itself where MemorySpace is the
// host's, otherwise a new allocation (also for host-accessible device memory
// such as CUDA UVM, which kernels read faster than pageable host memory)
// filled on `space`. The caller fences
// `space` before `host` goes away.
template <class MemorySpace, class ExecutionSpace, class T>
Kokkos::View<T *, MemorySpace>
to_memory_space(ExecutionSpace const &space,
                Kokkos::View<T *, Kokkos::HostSpace> const &host)
{
  if constexpr (std::is_same_v<MemorySpace, Kokkos::HostSpace>)
    return host;
  else
  {
    Kokkos::View<T *, MemorySpace> copy(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, host.label()),
        host.extent(0));
    Kokkos::deep_copy(space, copy, host);
    return copy;
  }
}

// Data planned on the host and read by kernels: a View in MemorySpace and its
// host mirror (the same allocation where the host can reach MemorySpace, so
// `upload` costs nothing there). The host mirror is the source of truth.
// Capacity only grows, geometrically, keeping the contents.
template <class T, class MemorySpace>
class PlannedBuffer
{
public:
  using device_view = Kokkos::View<T *, MemorySpace>;
  using host_view = typename device_view::HostMirror;

  explicit PlannedBuffer(std::string label)
      : label_(std::move(label))
  {}

  std::size_t capacity() const { return device_.extent(0); }

  // Makes room for `n` entries; new entries are set to `fill`.
  void reserve(std::size_t n, T const &fill = T{})
  {
    std::size_t const old = capacity();
    if (n <= old)
      return;
    std::size_t const grown = std::max(n, 2 * old);
    device_view device(Kokkos::view_alloc(Kokkos::WithoutInitializing, label_), grown);
    host_view host = Kokkos::create_mirror_view(device);
    std::copy(host_.data(), host_.data() + old, host.data());
    std::fill(host.data() + old, host.data() + grown, fill);
    device_ = device;
    host_ = host;
  }

  T *host() const { return host_.data(); }
  device_view const &device() const { return device_; }

  // Whether the host mirror is the kernels' own View (uploads cost nothing).
  static constexpr bool shared = std::is_same_v<typename host_view::memory_space,
                                                typename device_view::memory_space>;

  // Makes the first `n` host entries visible to kernels on `space`.
  template <class ExecutionSpace>
  void upload(ExecutionSpace const &space, std::size_t n)
  {
    upload(space, 0, n);
  }

  // Makes host entries [begin, end) visible to kernels on `space`.
  template <class ExecutionSpace>
  void upload(ExecutionSpace const &space, std::size_t begin, std::size_t end)
  {
    if constexpr (!shared)
    {
      if (begin < end)
        Kokkos::deep_copy(space, Kokkos::subview(device_, std::make_pair(begin, end)),
                          Kokkos::subview(host_, std::make_pair(begin, end)));
    }
    else
      (void)space, (void)begin, (void)end;
  }

private:
  std::string label_;
  device_view device_;
  host_view host_;
};

} // namespace hst::detail
