#pragma once
// Two watches, for two measurements that cannot share a run on Kokkos >= 3.5:
// - hst_test::AllocationWatch attaches Kokkos Tools callbacks while alive and
//   counts Kokkos allocations, kernel launches (and those not labelled
//   "hst::...") and, for information only, heap allocations. Once a tool is
//   attached, Kokkos >= 3.5 allocates on the heap itself around every kernel
//   launch (the global fence it makes for tools that do not opt out builds
//   std::string names), so a heap count taken with Tools attached is not the
//   library's;
// - hst_test::HeapWatch counts heap allocations with no Tools attached (the
//   common case, which the library's promise is about) and records whether a
//   tool was loaded anyway (KOKKOS_TOOLS_LIBS), which would void the count.
// For the heap count this header replaces the global allocation functions:
// include it in exactly one translation unit of a test program. Every
// replaceable form (plain, array, nothrow, sized) is replaced, so that
// allocations and deallocations always pair up (AddressSanitizer checks
// this).

#include <Kokkos_Core.hpp>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

namespace hst_test::heap
{
inline std::atomic<bool> counting{false};
inline std::atomic<long> allocations{0};
inline std::atomic<long> bytes{0}; // requested by those allocations

inline void *allocate(std::size_t size) noexcept
{
  if (counting.load(std::memory_order_relaxed))
  {
    ++allocations;
    bytes += long(size);
  }
  return std::malloc(size > 0 ? size : 1);
}
} // namespace hst_test::heap

// The replacements are host code: nvcc and hipcc would otherwise compile them
// for the device too (where `throw` does not exist), so their device passes
// do not see them.
#if !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
// GCC sees the malloc/free pair through the replaced operators and warns.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void *operator new(std::size_t size)
{
  if (void *p = hst_test::heap::allocate(size))
    return p;
  throw std::bad_alloc();
}
void *operator new[](std::size_t size) { return operator new(size); }
void *operator new(std::size_t size, std::nothrow_t const &) noexcept
{
  return hst_test::heap::allocate(size);
}
void *operator new[](std::size_t size, std::nothrow_t const &) noexcept
{
  return hst_test::heap::allocate(size);
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete[](void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }
void operator delete[](void *p, std::size_t) noexcept { std::free(p); }
void operator delete(void *p, std::nothrow_t const &) noexcept { std::free(p); }
void operator delete[](void *p, std::nothrow_t const &) noexcept { std::free(p); }
#pragma GCC diagnostic pop
#endif

namespace hst_test
{

// Kokkos allocations and kernel launches, through Kokkos Tools callbacks
// attached while the watch lives (and the heap, for information: see above).
class AllocationWatch
{
public:
  AllocationWatch()
  {
    kokkos_allocations_ = kokkos_bytes_ = kernels_ = foreign_kernels_ = 0;
    heap::allocations = 0;
    Kokkos::Tools::Experimental::set_allocate_data_callback(on_allocate);
    Kokkos::Tools::Experimental::set_begin_parallel_for_callback(on_kernel);
    heap::counting = true;
  }
  ~AllocationWatch()
  {
    heap::counting = false;
    Kokkos::Tools::Experimental::set_allocate_data_callback(nullptr);
    Kokkos::Tools::Experimental::set_begin_parallel_for_callback(nullptr);
  }
  AllocationWatch(AllocationWatch const &) = delete;
  AllocationWatch &operator=(AllocationWatch const &) = delete;

  static long kokkos_allocations() { return kokkos_allocations_; }
  /// Bytes of those allocations.
  static long kokkos_bytes() { return kokkos_bytes_; }
  /// Heap allocations with Tools attached: Kokkos' own included (see above).
  static long heap_allocations() { return heap::allocations; }
  static long kernels() { return kernels_; }
  /// Kernels whose label does not start with "hst::".
  static long foreign_kernels() { return foreign_kernels_; }

private:
  static void on_allocate(Kokkos::Profiling::SpaceHandle, char const *, void const *,
                          std::uint64_t size)
  {
    ++kokkos_allocations_;
    kokkos_bytes_ += long(size);
  }
  static void on_kernel(char const *label, std::uint32_t, std::uint64_t *)
  {
    ++kernels_;
    if (std::strncmp(label, "hst::", 5) != 0)
      ++foreign_kernels_;
  }
  static inline long kokkos_allocations_ = 0;
  static inline long kokkos_bytes_ = 0;
  static inline long kernels_ = 0;
  static inline long foreign_kernels_ = 0;
};

// Heap allocations (every replaceable operator new) while the watch lives,
// with no Kokkos Tools attached.
class HeapWatch
{
public:
  HeapWatch()
      : tools_loaded_(Kokkos::Tools::profileLibraryLoaded())
  {
    heap::allocations = 0;
    heap::bytes = 0;
    heap::counting = true;
  }
  ~HeapWatch() { heap::counting = false; }
  HeapWatch(HeapWatch const &) = delete;
  HeapWatch &operator=(HeapWatch const &) = delete;

  static long heap_allocations() { return heap::allocations; }
  static long heap_bytes() { return heap::bytes; }
  /// Whether a Kokkos tool was attached when the watch started (then the
  /// count includes Kokkos' allocations for the tool).
  bool tools_loaded() const { return tools_loaded_; }

private:
  bool tools_loaded_;
};

} // namespace hst_test
