#pragma once
// Replaces the global allocation functions with ones that count heap
// allocations while hst_test::heap::counting is set. Include in exactly one
// translation unit of a test program. Every replaceable form (plain, array,
// nothrow, sized) is replaced, so that allocations and deallocations always
// pair up (AddressSanitizer checks this).

#include <atomic>
#include <cstdlib>
#include <new>

namespace hst_test::heap
{
inline std::atomic<bool> counting{false};
inline std::atomic<long> allocations{0};

inline void *allocate(std::size_t size) noexcept
{
  if (counting.load(std::memory_order_relaxed))
    ++allocations;
  return std::malloc(size > 0 ? size : 1);
}
} // namespace hst_test::heap

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
