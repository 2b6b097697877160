#pragma once
// How a step's kernel is run on each kind of execution space, chosen at
// compile time:
// - host spaces that run kernels to completion before parallel_for returns
//   (Serial, OpenMP, Threads): a flat RangePolicy, or, for a step whose work
//   is below OperatorOptions::min_parallel_work on a space with more than one
//   thread, the same functor on the calling thread (a fork-join costs more
//   than such a step);
// - every other space (CUDA, HIP, SYCL, HPX): hierarchical TeamPolicy
//   kernels, vector lanes over the batch width B.

#include <hst/kokkos_ext/Compat.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

namespace hst::detail
{

// Host execution spaces whose kernels finish before parallel_for returns, so
// that the host may run a functor itself, or rewrite memory a kernel read,
// without a fence.
template <class ExecutionSpace>
constexpr bool runs_synchronously_on_host()
{
#if defined(KOKKOS_ENABLE_SERIAL)
  if constexpr (std::is_same_v<ExecutionSpace, Kokkos::Serial>)
    return true;
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
  if constexpr (std::is_same_v<ExecutionSpace, Kokkos::OpenMP>)
    return true;
#endif
#if defined(KOKKOS_ENABLE_THREADS)
  if constexpr (std::is_same_v<ExecutionSpace, Kokkos::Threads>)
    return true;
#endif
  return false;
}

template <class ExecutionSpace>
inline constexpr bool
    is_synchronous_host_space = runs_synchronously_on_host<ExecutionSpace>();

// Whether a step of `work` (entries of A[:, S] times B) runs on the calling
// thread instead of a parallel launch on `space`.
template <class ExecutionSpace>
bool run_inline(ExecutionSpace const &space, std::int64_t work,
                std::int64_t min_parallel_work)
{
  if constexpr (is_synchronous_host_space<ExecutionSpace>)
    return work < min_parallel_work || kokkos_ext::concurrency(space) == 1;
  else
    return (void)space, (void)work, (void)min_parallel_work, false;
}

// Runs functor(i) for i in [0, n) on the calling thread, announced to Kokkos
// Tools as a kernel named `label` on `space`, as its launch would be (a
// kernel timer or a launch counter sees every step, parallel or not).
template <class ExecutionSpace, class Functor>
void run_on_calling_thread(ExecutionSpace const &space, std::string const &label, int n,
                           Functor const &functor)
{
  bool const tools = Kokkos::Tools::profileLibraryLoaded();
  std::uint64_t kernel_id = 0;
  if (tools)
    Kokkos::Tools::beginParallelFor(label, Kokkos::Tools::Experimental::device_id(space),
                                    &kernel_id);
  for (int i = 0; i < n; ++i)
    functor(i);
  if (tools)
    Kokkos::Tools::endParallelFor(kernel_id);
}

// Runs part(t) for t in [0, n_parts) on a host space's threads, one part per
// thread (static chunks of one), or on the calling thread if n_parts is 1.
// Returns when every part is done.
template <class HostSpace, class Body>
void for_each_part(HostSpace const &host, std::string const &label, int n_parts,
                   Body const &part)
{
  if (n_parts == 1)
    return part(0);
  Kokkos::parallel_for(
      label,
      Kokkos::RangePolicy<HostSpace, Kokkos::Schedule<Kokkos::Static>,
                          Kokkos::IndexType<int>>(host, 0, n_parts, Kokkos::ChunkSize(1)),
      part);
  if constexpr (!is_synchronous_host_space<HostSpace>)
    kokkos_ext::fence(host, "hst::parts");
}

// Before the host rewrites planned data that kernels on `space` read: waits
// for them where they read the host's own memory asynchronously (a
// host-accessible device space such as CUDA UVM or HIP host-pinned memory).
// Kernels on synchronous host spaces are done already; device-only memory is
// reached through a separate host mirror, whose copies to the device are
// ordered on `space` and staged from pageable memory before the copy call
// returns.
template <class ExecutionSpace, bool SharedWithKernels>
void wait_for_kernel_readers(ExecutionSpace const &space)
{
  if constexpr (SharedWithKernels && !is_synchronous_host_space<ExecutionSpace>)
    kokkos_ext::fence(space, "hst::replan");
  else
    (void)space;
}

// Vector lanes for a batch of `width` columns on a device: the next power of
// two, at most 32 (a CUDA warp; HIP wavefronts hold 64).
inline int vector_lanes(int width)
{
  int lanes = 1;
  while (lanes < width && lanes < 32)
    lanes *= 2;
  return lanes;
}

} // namespace hst::detail
