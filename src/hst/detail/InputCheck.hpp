#pragma once
// The checks every arm makes before it writes anything: view types at compile
// time, dimensions and column ids at run time. A failed check throws
// std::invalid_argument naming the function, the argument and the value, and
// leaves the caller's data untouched.

#include <hst/detail/Parallel.hpp>
#include <hst/detail/Scratch.hpp>
#include <hst/kokkos_ext/Compat.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace hst::detail
{

template <class ExecutionSpace, class MemorySpace, class Scalar, class Ordinal,
          class Cols, class Dx, class Y>
constexpr void check_apply_types()
{
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "hst: apply_cols(space, cols, dx, y): 'space' must be a Kokkos "
                "execution space instance");
  static_assert(kokkos_ext::is_accessible_from<ExecutionSpace, MemorySpace>,
                "hst: apply_cols: the execution space cannot access the "
                "operator's memory space");
  static_assert(Kokkos::is_view<Cols>::value && Cols::rank == 1,
                "hst: apply_cols: 'cols' must be a rank-1 Kokkos::View");
  static_assert(std::is_same_v<typename Cols::non_const_value_type, Ordinal>,
                "hst: apply_cols: 'cols' must hold the operator's Ordinal type");
  static_assert(std::is_same_v<typename Cols::array_layout, Kokkos::LayoutLeft> ||
                    std::is_same_v<typename Cols::array_layout, Kokkos::LayoutRight>,
                "hst: apply_cols: 'cols' must be contiguous (LayoutLeft or "
                "LayoutRight)");
  static_assert(Kokkos::is_view<Dx>::value && Dx::rank == 2,
                "hst: apply_cols: 'dx' must be a rank-2 Kokkos::View (k x B)");
  static_assert(std::is_same_v<typename Dx::non_const_value_type, Scalar>,
                "hst: apply_cols: 'dx' must hold the operator's Scalar type");
  static_assert(Kokkos::is_view<Y>::value && Y::rank == 2,
                "hst: apply_cols: 'y' must be a rank-2 Kokkos::View (n_rows x B)");
  static_assert(std::is_same_v<typename Y::value_type, Scalar>,
                "hst: apply_cols: 'y' must hold the operator's (non-const) "
                "Scalar type");
  static_assert(
      kokkos_ext::is_accessible_from<ExecutionSpace, typename Cols::memory_space> &&
          kokkos_ext::is_accessible_from<ExecutionSpace, typename Dx::memory_space> &&
          kokkos_ext::is_accessible_from<ExecutionSpace, typename Y::memory_space>,
      "hst: apply_cols: 'cols', 'dx' and 'y' must be accessible from the "
      "execution space");
}

template <class... Parts>
[[noreturn]] void throw_invalid(Parts const &...parts)
{
  std::ostringstream message;
  (message << ... << parts);
  throw std::invalid_argument(message.str());
}

// The column ids of `cols` readable on the host: the caller's own memory
// where the host can reach it, else a copy in `staging` (reallocated to
// `capacity` entries, at least k, labelled `label`, when it is too small),
// with `space` fenced. Ids in device memory thus cost one copy of k ids and a
// fence per step: callers who want neither keep `cols` in host memory (or
// host-pinned memory) and dx, y on the device.
template <class Ordinal, class ExecutionSpace, class Cols>
Ordinal const *host_readable_ids(ExecutionSpace const &space, Cols const &cols,
                                 Kokkos::View<Ordinal *, Kokkos::HostSpace> &staging,
                                 std::size_t capacity, char const *label)
{
  if constexpr (kokkos_ext::is_host_accessible<typename Cols::memory_space>)
  {
    (void)staging, (void)capacity, (void)label;
    // Ids in memory both sides reach (CUDA UVM, HIP host-pinned) may still
    // be written by the caller's kernels on an asynchronous `space`.
    if constexpr (!is_synchronous_host_space<ExecutionSpace>)
      kokkos_ext::fence(space, "hst::host_cols");
    return cols.data();
  }
  else
  {
    std::size_t const k = cols.extent(0);
    if (staging.extent(0) < k)
      staging = Kokkos::View<Ordinal *, Kokkos::HostSpace>(
          Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)),
          std::max(k, capacity));
    Kokkos::deep_copy(space, Kokkos::subview(staging, std::make_pair(std::size_t(0), k)),
                      cols);
    kokkos_ext::fence(space, "hst::host_cols"); // the host reads the column ids next
    return staging.data();
  }
}

// Host-side checker of one arm's inputs. Finds duplicate ids in O(k) with
// the column stamps of the operator's shared scratch (a new generation per
// call, nothing cleared), so that it holds nothing of the operator's size.
template <class Ordinal>
class InputCheck
{
public:
  InputCheck(char const *where, Ordinal n_rows, Ordinal n_cols, int width,
             ScratchPool *scratch)
      : where_(where)
      , n_rows_(n_rows)
      , n_cols_(n_cols)
      , width_(width)
      , scratch_(scratch)
      , staging_("hst::InputCheck::host_cols", 0)
  {}

  // Checks dimensions and column ids; returns the column ids readable on the
  // host (the caller's own memory where the host can reach it).
  template <class ExecutionSpace, class Cols, class Dx, class Y>
  Ordinal const *operator()(ExecutionSpace const &space, Cols const &cols, Dx const &dx,
                            Y const &y)
  {
    std::size_t const k = cols.extent(0);
    if (dx.extent(0) != k)
      throw_invalid(where_, ": argument 'dx' has ", dx.extent(0),
                    " rows but 'cols' holds ", k, " columns");
    if (dx.extent(1) != std::size_t(width_))
      throw_invalid(where_, ": argument 'dx' has ", dx.extent(1),
                    " columns but the arm was made for B = ", width_);
    if (y.extent(0) != std::size_t(n_rows_))
      throw_invalid(where_, ": argument 'y' has ", y.extent(0),
                    " rows but the operator has ", n_rows_);
    if (y.extent(1) != std::size_t(width_))
      throw_invalid(where_, ": argument 'y' has ", y.extent(1),
                    " columns but the arm was made for B = ", width_);
    Ordinal const *ids = host_readable_ids(space, cols, staging_, 2 * staging_.extent(0),
                                           "hst::InputCheck::host_cols");
    check_columns(ids, k);
    return ids;
  }

private:
  void check_columns(Ordinal const *ids, std::size_t k)
  {
    auto const lease = scratch_->acquire();
    std::uint32_t const generation = lease->new_column_generation();
    std::uint32_t *const stamp = lease->column_stamp();
    for (std::size_t i = 0; i < k; ++i)
    {
      Ordinal const c = ids[i];
      if (c < 0 || c >= n_cols_)
        throw_invalid(where_, ": argument 'cols' holds column id ", c, " at position ", i,
                      ", outside [0, ", n_cols_, ")");
      if (stamp[c] == generation)
      {
        std::size_t first = 0;
        while (ids[first] != c)
          ++first;
        throw_invalid(where_, ": argument 'cols' holds column id ", c,
                      " twice, at positions ", first, " and ", i);
      }
      stamp[c] = generation;
    }
  }

  char const *where_;
  Ordinal n_rows_;
  Ordinal n_cols_;
  int width_;
  ScratchPool *scratch_; // the operator's, which outlives the arm's use of it
  Kokkos::View<Ordinal *, Kokkos::HostSpace> staging_;
};

// Remembers the previous step's column ids; tells whether they changed.
template <class Ordinal>
class ColumnSetHistory
{
public:
  bool same_as_previous(Ordinal const *ids, std::size_t k) const
  {
    return k == previous_.size() && std::equal(ids, ids + k, previous_.begin());
  }
  std::vector<Ordinal> const &previous() const { return previous_; }
  void remember(Ordinal const *ids, std::size_t k) { previous_.assign(ids, ids + k); }

private:
  std::vector<Ordinal> previous_;
};

} // namespace hst::detail
