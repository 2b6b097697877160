#pragma once
// Reads a fuzzer's input as a stream of small choices; zeros once exhausted,
// so every input, however short, is a complete run.

#include <cstddef>
#include <cstdint>

namespace hst_fuzz
{

class FuzzBytes
{
public:
  FuzzBytes(std::uint8_t const *data, std::size_t size)
      : data_(data)
      , size_(size)
  {}

  bool empty() const { return at_ >= size_; }
  std::uint8_t u8() { return at_ < size_ ? data_[at_++] : 0; }
  std::uint16_t u16() { return std::uint16_t(u8() | (u8() << 8)); }
  std::uint32_t u32() { return std::uint32_t(u16()) | (std::uint32_t(u16()) << 16); }
  /// A value in [0, n) for n > 0.
  int below(int n) { return int(u8() % unsigned(n)); }

private:
  std::uint8_t const *data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

} // namespace hst_fuzz
