#pragma once
// Tpetra-native helpers for the common loop: the rows of a change between two
// states of X, and bringing an old state up to date, on the changed rows only.

#include <hst/detail/InputCheck.hpp>
#include <hst/kokkos_ext/Compat.hpp>

#include <Kokkos_Core.hpp>

#include <Teuchos_OrdinalTraits.hpp>
#include <Tpetra_Map.hpp>
#include <Tpetra_MultiVector.hpp>

#include <cstddef>
#include <string>
#include <type_traits>

namespace hst::tpetra
{

namespace detail
{

// Throws std::invalid_argument unless `a` and `b` have the same local rows
// (locally the same map), the same number of vectors and constant stride.
template <class MV>
void check_same_layout(char const *where, char const *a_name, MV const &a,
                       char const *b_name, MV const &b)
{
  auto const fail = [&](auto const &...what) {
    hst::detail::throw_invalid(where, ": ", what...);
  };
  if (!a.isConstantStride())
    fail("argument '", a_name, "' does not have constant stride");
  if (!b.isConstantStride())
    fail("argument '", b_name, "' does not have constant stride");
  if (a.getMap().get() != b.getMap().get() && !a.getMap()->locallySameAs(*b.getMap()))
    fail("arguments '", a_name, "' and '", b_name, "' are not on locally the same map (",
         a.getLocalLength(), " and ", b.getLocalLength(),
         " rows here, or different global ids)");
  if (a.getNumVectors() != b.getNumVectors())
    fail("argument '", a_name, "' has ", a.getNumVectors(), " vectors but '", b_name,
         "' has ", b.getNumVectors());
}

// Throws std::invalid_argument naming the first entry of `gids` that `map`
// does not own. On the host where it can read the ids (a loop over the k
// ids); else one reduction on `space`, then a fence.
template <class ExecutionSpace, class Map, class Gids>
void check_owned(char const *where, ExecutionSpace const &space, Map const &map,
                 Gids const &gids)
{
  using LO = typename Map::local_ordinal_type;
  auto const invalid = Teuchos::OrdinalTraits<LO>::invalid();
  std::size_t const k = gids.extent(0);
  std::size_t first = k;
  if constexpr (kokkos_ext::is_host_accessible<typename Gids::memory_space>)
  {
    (void)space;
    for (std::size_t i = 0; i < k && first == k; ++i)
      if (map.getLocalElement(gids(i)) == invalid)
        first = i;
  }
  else
  {
    auto const local_map = map.getLocalMap();
    Kokkos::parallel_reduce(
        "hst::tpetra::check_owned", Kokkos::RangePolicy<ExecutionSpace>(space, 0, k),
        KOKKOS_LAMBDA(std::size_t const i, std::size_t &found) {
          if (local_map.getLocalElement(gids(i)) == invalid && i < found)
            found = i;
        },
        Kokkos::Min<std::size_t>(first)); // fences: the host reads `first`
  }
  if (first < k)
  {
    auto const bad = Kokkos::create_mirror_view_and_copy(
        Kokkos::HostSpace{}, Kokkos::subview(gids, std::make_pair(first, first + 1)));
    hst::detail::throw_invalid(where, ": argument 'changed_gids' holds global id ",
                               bad(0), " at position ", first,
                               ", which this rank's map does not own");
  }
}

} // namespace detail

/// dX(i, b) = X_new(g, b) - X_old(g, b) for g = changed_gids(i): the rows of
/// a change, for DeltaArm::apply_cols. Reads only the k named rows of X_old
/// and X_new (locally the same map, e.g. the operator's domain map, same
/// number of vectors B, constant stride); `changed_gids` (a rank-1 View of
/// GlobalOrdinal) are global ids this rank owns; `dX` is k x B. Not
/// collective: bad input throws std::invalid_argument on the rank that saw
/// it, before dX is written. Runs on `space`; allocates nothing.
template <class ExecutionSpace, class Gids, class Dx, class Scalar, class LO, class GO,
          class Node>
void make_delta(ExecutionSpace const &space, Gids const &changed_gids,
                Tpetra::MultiVector<Scalar, LO, GO, Node> const &X_old,
                Tpetra::MultiVector<Scalar, LO, GO, Node> const &X_new, Dx const &dX)
{
  static_assert(Kokkos::is_view<Gids>::value && Gids::rank == 1 &&
                    std::is_same_v<typename Gids::non_const_value_type, GO>,
                "hst::tpetra::make_delta: 'changed_gids' must be a rank-1 View of "
                "the MultiVector's GlobalOrdinal type");
  static_assert(Kokkos::is_view<Dx>::value && Dx::rank == 2,
                "hst::tpetra::make_delta: 'dX' must be a rank-2 View (k x B)");
  char const *where = "hst::tpetra::make_delta";
  detail::check_same_layout(where, "X_old", X_old, "X_new", X_new);
  std::size_t const k = changed_gids.extent(0);
  if (dX.extent(0) != k || dX.extent(1) != X_new.getNumVectors())
    hst::detail::throw_invalid(where, ": argument 'dX' is ", dX.extent(0), " x ",
                               dX.extent(1), " but 'changed_gids' holds ", k,
                               " ids and 'X_new' has ", X_new.getNumVectors(),
                               " vectors");
  detail::check_owned(where, space, *X_new.getMap(), changed_gids);
  auto const local_map = X_new.getMap()->getLocalMap();
  auto const x_old = X_old.getLocalViewDevice(Tpetra::Access::ReadOnly);
  auto const x_new = X_new.getLocalViewDevice(Tpetra::Access::ReadOnly);
  int const B = int(dX.extent(1));
  // A static label: a longer-than-SSO string literal would allocate per call.
  static std::string const label = "hst::tpetra::make_delta";
  Kokkos::parallel_for(
      label, Kokkos::RangePolicy<ExecutionSpace>(space, 0, k),
      KOKKOS_LAMBDA(std::size_t const i) {
        auto const row = local_map.getLocalElement(changed_gids(i));
        for (int b = 0; b < B; ++b)
          dX(i, b) = x_new(row, b) - x_old(row, b);
      });
}

template <class Gids, class Dx, class Scalar, class LO, class GO, class Node>
void make_delta(Gids const &changed_gids,
                Tpetra::MultiVector<Scalar, LO, GO, Node> const &X_old,
                Tpetra::MultiVector<Scalar, LO, GO, Node> const &X_new, Dx const &dX)
{
  make_delta(typename Node::execution_space{}, changed_gids, X_old, X_new, dX);
}

/// to(g, b) = from(g, b) for g = changed_gids(i): brings `to` (X_old) up to
/// `from` (X_new) on the changed rows only, after make_delta. Same
/// requirements and errors as make_delta; not collective; allocates nothing.
template <class ExecutionSpace, class Gids, class Scalar, class LO, class GO, class Node>
void copy_rows(ExecutionSpace const &space, Gids const &changed_gids,
               Tpetra::MultiVector<Scalar, LO, GO, Node> const &from,
               Tpetra::MultiVector<Scalar, LO, GO, Node> &to)
{
  static_assert(Kokkos::is_view<Gids>::value && Gids::rank == 1 &&
                    std::is_same_v<typename Gids::non_const_value_type, GO>,
                "hst::tpetra::copy_rows: 'changed_gids' must be a rank-1 View of "
                "the MultiVector's GlobalOrdinal type");
  char const *where = "hst::tpetra::copy_rows";
  detail::check_same_layout(where, "from", from, "to", to);
  detail::check_owned(where, space, *to.getMap(), changed_gids);
  std::size_t const k = changed_gids.extent(0);
  auto const local_map = to.getMap()->getLocalMap();
  auto const source = from.getLocalViewDevice(Tpetra::Access::ReadOnly);
  auto const target = to.getLocalViewDevice(Tpetra::Access::ReadWrite);
  int const B = int(to.getNumVectors());
  static std::string const label = "hst::tpetra::copy_rows";
  Kokkos::parallel_for(
      label, Kokkos::RangePolicy<ExecutionSpace>(space, 0, k),
      KOKKOS_LAMBDA(std::size_t const i) {
        auto const row = local_map.getLocalElement(changed_gids(i));
        for (int b = 0; b < B; ++b)
          target(row, b) = source(row, b);
      });
}

template <class Gids, class Scalar, class LO, class GO, class Node>
void copy_rows(Gids const &changed_gids,
               Tpetra::MultiVector<Scalar, LO, GO, Node> const &from,
               Tpetra::MultiVector<Scalar, LO, GO, Node> &to)
{
  copy_rows(typename Node::execution_space{}, changed_gids, from, to);
}

} // namespace hst::tpetra
