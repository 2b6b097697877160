#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace hst::detail
{

// Map from non-negative integer keys to int32 values, absent keys reading -1:
// open addressing with linear probing and backward-shift deletion. Sized by
// what it holds (at most half full), not by the range of its keys, so that
// state kept per column tile, segment or row block costs what the set
// touches, not what the operator holds. Grows (allocates) only when an insert
// would fill it past half; erasing never allocates.
class IndexMap
{
public:
  std::int32_t find(std::int64_t key) const
  {
    if (slots_.empty())
      return -1;
    for (std::size_t i = home(key);; i = (i + 1) & mask_)
    {
      Slot const &s = slots_[i];
      if (s.key == key)
        return s.value;
      if (s.key < 0)
        return -1;
    }
  }

  // Sets the value of `key`, inserting it if absent.
  void set(std::int64_t key, std::int32_t value)
  {
    std::size_t i = slot_of(key);
    if (slots_.empty() || slots_[i].key < 0)
    {
      // A new key: grow first if it would fill the table past half.
      if (2 * (size_ + 1) > slots_.size())
      {
        rehash(std::max<std::size_t>(16, 2 * slots_.size()));
        i = slot_of(key);
      }
      slots_[i].key = key;
      ++size_;
    }
    slots_[i].value = value;
  }

  // Removes `key` if present.
  void erase(std::int64_t key)
  {
    if (slots_.empty())
      return;
    std::size_t i = home(key);
    while (slots_[i].key != key)
    {
      if (slots_[i].key < 0)
        return;
      i = (i + 1) & mask_;
    }
    // Backward shift: move later members of the probe run into the hole
    // unless their home lies cyclically in (hole, their slot].
    for (std::size_t j = (i + 1) & mask_; slots_[j].key >= 0; j = (j + 1) & mask_)
    {
      std::size_t const h = home(slots_[j].key);
      bool const stays = i < j ? (h > i && h <= j) : (h > i || h <= j);
      if (!stays)
      {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = Slot{};
    --size_;
  }

  // Room for `n` keys without growing.
  void reserve(std::size_t n)
  {
    std::size_t capacity = 16;
    while (capacity < 2 * n)
      capacity *= 2;
    if (capacity > slots_.size())
      rehash(capacity);
  }

  std::size_t size() const { return size_; }
  std::size_t capacity() const { return slots_.size() / 2; }
  // Bytes held (by capacity).
  std::size_t bytes() const { return slots_.capacity() * sizeof(Slot); }

private:
  struct Slot
  {
    std::int64_t key = -1;
    std::int32_t value = -1;
  };

  std::size_t home(std::int64_t key) const
  {
    return std::size_t((std::uint64_t(key) * 0x9E3779B97F4A7C15ull) >> shift_);
  }

  // The slot holding `key`, or the empty slot that ends its probe run.
  std::size_t slot_of(std::int64_t key) const
  {
    if (slots_.empty())
      return 0;
    std::size_t i = home(key);
    while (slots_[i].key >= 0 && slots_[i].key != key)
      i = (i + 1) & mask_;
    return i;
  }

  void rehash(std::size_t capacity) // a power of two, at least 16
  {
    std::vector<Slot> old(capacity);
    std::swap(old, slots_);
    mask_ = capacity - 1;
    shift_ = 64;
    for (std::size_t c = capacity; c > 1; c /= 2)
      --shift_;
    size_ = 0;
    for (Slot const &s : old)
      if (s.key >= 0)
        set(s.key, s.value);
  }

  std::vector<Slot> slots_;
  std::size_t size_ = 0;
  std::size_t mask_ = 0;
  int shift_ = 64;
};

} // namespace hst::detail
