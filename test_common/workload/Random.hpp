#pragma once

#include <cstdint>

namespace hst::workload
{

// splitmix64: a small generator whose sequence is the same on every platform
// (std:: distributions are not), so seeded workloads are reproducible.
class Random
{
public:
  explicit Random(std::uint64_t seed)
      : state_(seed)
  {}

  std::uint64_t next()
  {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1).
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }
  // Uniform in [0, n), n > 0 (multiply-shift; bias below 2^-32 for n < 2^32).
  std::int64_t below(std::int64_t n)
  {
    // GCC and Clang; __extension__ keeps -Wpedantic quiet.
    __extension__ using wide = unsigned __int128;
    return std::int64_t(wide(next()) * std::uint64_t(n) >> 64);
  }

private:
  std::uint64_t state_;
};

} // namespace hst::workload
