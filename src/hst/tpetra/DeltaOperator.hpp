#pragma once
// hst::tpetra::DeltaOperator: delta applies Y += A[:, S] * dX on a
// fill-complete Tpetra::CrsMatrix and a Tpetra::MultiVector, over
// hst::DistributedOperator. The matrix's maps are translated once into the
// distributed layer's contiguous numbering (rank r's rows and domain-map
// entries are blocks in rank order, each in its map's local order), so maps
// that are not contiguous need no special case: a step translates the
// caller's global ids through the domain map's global-to-local lookup.

#include <hst/Options.hpp>
#include <hst/detail/Buffers.hpp>
#include <hst/detail/InputCheck.hpp>
#include <hst/distributed/BlockPartition.hpp>
#include <hst/distributed/DistributedOperator.hpp>
#include <hst/distributed/detail/Communicator.hpp>
#include <hst/kokkos_ext/Compat.hpp>

#include <KokkosSparse_CrsMatrix.hpp>
#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <Teuchos_DefaultMpiComm.hpp>
#include <Teuchos_OrdinalTraits.hpp>
#include <Tpetra_CrsMatrix.hpp>
#include <Tpetra_Map.hpp>
#include <Tpetra_MultiVector.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace hst::tpetra
{

namespace detail
{

// The MPI communicator under a Teuchos communicator; throws
// std::invalid_argument (on every rank alike: the type is the caller's) when
// it is not an MPI one.
inline MPI_Comm raw_comm(Teuchos::RCP<Teuchos::Comm<int> const> const &comm,
                         char const *where)
{
  auto const mpi = Teuchos::rcp_dynamic_cast<Teuchos::MpiComm<int> const>(comm);
  if (mpi.is_null() || mpi->getRawMpiComm().is_null() ||
      *mpi->getRawMpiComm() == MPI_COMM_NULL)
    throw std::invalid_argument(std::string(where) +
                                ": argument 'A' lives on a communicator that is not a "
                                "Teuchos::MpiComm (HST's Tpetra adapter needs MPI)");
  return *mpi->getRawMpiComm();
}

// What a DeltaOperator and its arms share: the maps and the translation of
// domain-map local ids into the distributed layer's column ids.
template <class Map>
struct DeltaMaps
{
  Teuchos::RCP<Map const> domain;
  Teuchos::RCP<Map const> range;
  std::int64_t col_begin = 0; // this rank's first column in HST's numbering
  std::size_t n_owned = 0;    // this rank's domain-map entries
};

} // namespace detail

/// One arm of a DeltaOperator: `Inner` (a DistributedArm or a
/// DistributedAdaptiveSession) fed with Tpetra's global ids and multivector.
template <class Inner, class Scalar, class LocalOrdinal, class GlobalOrdinal, class Node>
class DeltaArm
{
public:
  using map_type = Tpetra::Map<LocalOrdinal, GlobalOrdinal, Node>;
  using multivector_type = Tpetra::MultiVector<Scalar, LocalOrdinal, GlobalOrdinal, Node>;
  using memory_space = typename Inner::memory_space;
  using inner_type = Inner;

  /// Made by DeltaOperator's session(), baseline(), scatter() and adaptive().
  DeltaArm(std::shared_ptr<detail::DeltaMaps<map_type> const> maps, MPI_Comm comm,
           int width, char const *where, Inner inner)
      : maps_(std::move(maps))
      , comm_(comm)
      , width_(width)
      , where_(where)
      , inner_(std::move(inner))
      , ids_("hst::tpetra::DeltaArm::ids")
      , stamp_(maps_->n_owned, 0)
  {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    ids_.reserve(maps_->n_owned);
  }

  int width() const { return width_; }
  /// The distributed arm underneath (its stats(), or the adaptive session's
  /// report()).
  Inner const &inner() const { return inner_; }
  Inner &inner() { return inner_; }

  /// Collective: Y += A[:, S] * dX over every rank's changes, in place, on
  /// `space`. `changed_gids` (a rank-1 View of GlobalOrdinal) holds k_local
  /// distinct global ids that this rank's domain map owns (any order,
  /// possibly none); `dX` is k_local x B, row i the change of entry
  /// changed_gids(i); `Y` is on the operator's range map (locally the same
  /// map) with B vectors and constant stride. Bad input on any rank makes
  /// every rank throw std::invalid_argument naming that rank, the argument
  /// and the value, before any rank writes Y.
  template <class ExecutionSpace, class Gids, class Dx>
  void apply_cols(ExecutionSpace const &space, Gids const &changed_gids, Dx const &dX,
                  multivector_type &Y)
  {
    static_assert(Kokkos::is_view<Gids>::value && Gids::rank == 1 &&
                      std::is_same_v<typename Gids::non_const_value_type, GlobalOrdinal>,
                  "hst::tpetra::DeltaArm::apply_cols: 'changed_gids' must be a rank-1 "
                  "View of the matrix's GlobalOrdinal type");
    static_assert(Kokkos::is_view<Dx>::value && Dx::rank == 2,
                  "hst::tpetra::DeltaArm::apply_cols: 'dX' must be a rank-2 View "
                  "(k_local x B)");
    std::size_t const k = changed_gids.extent(0);
    hst::detail::agree_on_error(comm_, rank_, size_, where_,
                                check(space, changed_gids, dX, Y));
    ids_.upload(space, k);
    auto y = Y.getLocalViewDevice(Tpetra::Access::ReadWrite);
    inner_.apply_cols(
        space, Kokkos::subview(ids_.device(), std::make_pair(std::size_t(0), k)), dX, y);
  }

  /// Same, on a default instance of the operator's execution space.
  template <class Gids, class Dx>
  void apply_cols(Gids const &changed_gids, Dx const &dX, multivector_type &Y)
  {
    apply_cols(default_space_, changed_gids, dX, Y);
  }

private:
  using Ordinal = LocalOrdinal;

  // This rank's checks; writes the HST column ids of valid entries into
  // ids_'s host list.
  template <class ExecutionSpace, class Gids, class Dx>
  hst::detail::LocalError check(ExecutionSpace const &space, Gids const &gids,
                                Dx const &dX, multivector_type const &Y)
  {
    return hst::detail::LocalError::from([&] {
      auto const &maps = *maps_;
      std::size_t const k = gids.extent(0);
      if (!Y.isConstantStride())
        hst::detail::throw_invalid("argument 'Y' does not have constant stride (a view "
                                   "of scattered columns of a MultiVector)");
      if (Y.getMap().get() != maps.range.get() && !Y.getMap()->locallySameAs(*maps.range))
        hst::detail::throw_invalid(
            "argument 'Y' is not on the operator's range map (here it holds ",
            Y.getLocalLength(), " rows, the range map ", maps.range->getNodeNumElements(),
            ", or their global ids differ)");
      if (Y.getNumVectors() != std::size_t(width_))
        hst::detail::throw_invalid("argument 'Y' has ", Y.getNumVectors(),
                                   " vectors but the arm was made for B = ", width_);
      if (dX.extent(0) != k)
        hst::detail::throw_invalid("argument 'dX' has ", dX.extent(0),
                                   " rows but 'changed_gids' holds ", k, " ids");
      if (dX.extent(1) != std::size_t(width_))
        hst::detail::throw_invalid("argument 'dX' has ", dX.extent(1),
                                   " columns but the arm was made for B = ", width_);
      if (k > maps.n_owned)
        hst::detail::throw_invalid("argument 'changed_gids' holds ", k,
                                   " ids but this rank's domain map owns only ",
                                   maps.n_owned, " (ids must be distinct)");
      GlobalOrdinal const *g = hst::detail::host_readable_ids(
          space, gids, gid_staging_, maps.n_owned, "hst::tpetra::DeltaArm::gid_staging");
      if (++epoch_ == 0)
      {
        std::fill(stamp_.begin(), stamp_.end(), 0);
        epoch_ = 1;
      }
      auto const invalid = Teuchos::OrdinalTraits<LocalOrdinal>::invalid();
      Ordinal *const ids = ids_.host();
      for (std::size_t i = 0; i < k; ++i)
      {
        LocalOrdinal const lid = maps.domain->getLocalElement(g[i]);
        if (lid == invalid)
          hst::detail::throw_invalid("argument 'changed_gids' holds global id ", g[i],
                                     " at position ", i,
                                     ", which this rank's domain map does not own");
        if (stamp_[std::size_t(lid)] == epoch_)
          hst::detail::throw_invalid("argument 'changed_gids' holds global id ", g[i],
                                     " twice (the second at position ", i, ")");
        stamp_[std::size_t(lid)] = epoch_;
        ids[i] = Ordinal(maps.col_begin + lid);
      }
    });
  }

  std::shared_ptr<detail::DeltaMaps<map_type> const> maps_;
  MPI_Comm comm_; // the DistributedOperator's duplicate, kept alive by inner_
  int rank_ = 0;
  int size_ = 1;
  int width_;
  char const *where_;
  Inner inner_;
  hst::detail::PlannedBuffer<Ordinal, memory_space> ids_;
  Kokkos::View<GlobalOrdinal *, Kokkos::HostSpace> gid_staging_;
  // The default instance, made once: on Kokkos 4 making one allocates.
  typename memory_space::execution_space default_space_;
  std::vector<std::uint32_t> stamp_; // per owned domain entry: last step naming it
  std::uint32_t epoch_ = 0;
};

/// A fill-complete Tpetra::CrsMatrix prepared once for many delta applies
/// Y += A[:, S] * dX, where S is a set of domain-map global ids, each rank
/// naming the ones its domain map owns. Built on hst::DistributedOperator:
/// rank r's rows (row-map local order) and owned domain entries
/// (domain-map local order) become contiguous blocks of HST's numbering, and
/// the column map is translated into it once (one collective lookup through
/// the domain map's directory). The values are Tpetra's own; only the column
/// ids are renumbered, then the arms build what they need.
///
/// Refused (std::invalid_argument on every rank): a matrix that is not fill
/// complete; a range map that is not locally the same as the row map (an
/// Export after the multiply); global sizes beyond LocalOrdinal; column-map
/// entries the domain map does not hold; a communicator that is not MPI.
///
/// The distributed layer duplicates the matrix's communicator; destroy every
/// DeltaOperator and arm before MPI_Finalize. Members marked collective must
/// be called by every rank, in the same order.
template <class Scalar = Tpetra::CrsMatrix<>::scalar_type,
          class LocalOrdinal = Tpetra::CrsMatrix<>::local_ordinal_type,
          class GlobalOrdinal = Tpetra::CrsMatrix<>::global_ordinal_type,
          class Node = Tpetra::CrsMatrix<>::node_type>
class DeltaOperator
{
public:
  using matrix_type = Tpetra::CrsMatrix<Scalar, LocalOrdinal, GlobalOrdinal, Node>;
  using map_type = Tpetra::Map<LocalOrdinal, GlobalOrdinal, Node>;
  using multivector_type = Tpetra::MultiVector<Scalar, LocalOrdinal, GlobalOrdinal, Node>;
  using value_type = typename matrix_type::impl_scalar_type;
  using execution_space = typename Node::execution_space;
  using memory_space = typename Node::memory_space;
  using distributed_operator_type =
      DistributedOperator<value_type, LocalOrdinal, memory_space>;

  template <class Inner>
  using arm_type = DeltaArm<Inner, Scalar, LocalOrdinal, GlobalOrdinal, Node>;
  using session_type =
      arm_type<DistributedScheduledArm<value_type, LocalOrdinal, memory_space>>;
  using baseline_type =
      arm_type<DistributedExactSetArm<value_type, LocalOrdinal, memory_space>>;
  using scatter_type =
      arm_type<DistributedScatterArm<value_type, LocalOrdinal, memory_space>>;
  using adaptive_type =
      arm_type<DistributedAdaptiveSession<value_type, LocalOrdinal, memory_space>>;

  /// Collective over A's communicator.
  explicit DeltaOperator(matrix_type const &A, OperatorOptions const &options = {})
      : DeltaOperator(execution_space{}, A, options)
  {}

  /// Collective over A's communicator; builds on `space`.
  template <class ExecutionSpace>
  DeltaOperator(ExecutionSpace const &space, matrix_type const &A,
                OperatorOptions const &options = {})
      : maps_(std::make_shared<detail::DeltaMaps<map_type>>())
      , op_(build(space, A, options, *maps_))
  {
    static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                  "hst::tpetra::DeltaOperator: 'space' must be an execution space");
  }

  Teuchos::RCP<map_type const> const &domain_map() const { return maps_->domain; }
  Teuchos::RCP<map_type const> const &range_map() const { return maps_->range; }
  /// The distributed operator underneath (HST's contiguous numbering).
  distributed_operator_type const &distributed() const { return *op_; }

  /// Collective. Scheduled arm for B vectors (the same on every rank), its
  /// schedules compiled for `expected_gids` (distinct domain-map global ids
  /// this rank owns; a rank-1 View of GlobalOrdinal, may be empty). As
  /// DistributedOperator::session (options.strict is refused).
  template <class ExecutionSpace, class Gids>
  session_type session(ExecutionSpace const &space, Gids const &expected_gids, int B = 8,
                       SessionOptions const &options = {}) const
  {
    auto const ids = expected_ids("hst::tpetra::DeltaOperator::session", expected_gids);
    return make_arm<session_type>("hst::tpetra::DeltaArm<session>::apply_cols", B,
                                  op_->session(space, ids, B, options));
  }
  template <class Gids>
  session_type session(Gids const &expected_gids, int B = 8,
                       SessionOptions const &options = {}) const
  {
    return session(execution_space{}, expected_gids, B, options);
  }

  /// Collective. Exact-set arm for B vectors (the same on every rank).
  baseline_type baseline(int B = 8) const
  {
    return make_arm<baseline_type>("hst::tpetra::DeltaArm<baseline>::apply_cols", B,
                                   op_->baseline(B));
  }

  /// Collective. Direct-scatter arm for B vectors (the same on every rank).
  scatter_type scatter(int B = 8) const
  {
    return make_arm<scatter_type>("hst::tpetra::DeltaArm<scatter>::apply_cols", B,
                                  op_->scatter(B));
  }

  /// Collective. Adaptive session over the three arms for B vectors; the
  /// ranks probe in lockstep and agree on the arm (see
  /// DistributedAdaptiveSession.hpp).
  template <class ExecutionSpace, class Gids>
  adaptive_type adaptive(ExecutionSpace const &space, Gids const &expected_gids,
                         int B = 8, DistributedAdaptiveOptions const &options = {}) const
  {
    auto const ids = expected_ids("hst::tpetra::DeltaOperator::adaptive", expected_gids);
    return make_arm<adaptive_type>("hst::tpetra::DeltaArm<adaptive>::apply_cols", B,
                                   op_->adaptive(space, ids, B, options));
  }
  template <class Gids>
  adaptive_type adaptive(Gids const &expected_gids, int B = 8,
                         DistributedAdaptiveOptions const &options = {}) const
  {
    return adaptive(execution_space{}, expected_gids, B, options);
  }

private:
  using Ordinal = LocalOrdinal;
  using HostIds = Kokkos::View<Ordinal *, Kokkos::HostSpace>;

  template <class Arm, class Inner>
  Arm make_arm(char const *where, int B, Inner inner) const
  {
    return Arm(maps_, op_->comm(), B, where, std::move(inner));
  }

  // Collective: the HST column ids of this rank's expected global ids.
  template <class Gids>
  HostIds expected_ids(char const *where, Gids const &gids) const
  {
    static_assert(Kokkos::is_view<Gids>::value && Gids::rank == 1 &&
                      std::is_same_v<typename Gids::non_const_value_type, GlobalOrdinal>,
                  "hst::tpetra::DeltaOperator: 'expected_gids' must be a rank-1 View of "
                  "the matrix's GlobalOrdinal type");
    auto const host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, gids);
    HostIds ids(Kokkos::view_alloc(Kokkos::WithoutInitializing,
                                   "hst::tpetra::DeltaOperator::expected_ids"),
                host.extent(0));
    auto const &maps = *maps_;
    int const ranks = op_->row_partition().ranks();
    hst::detail::agree_on_error(
        op_->comm(), op_->rank(), ranks, where, hst::detail::LocalError::from([&] {
          std::vector<char> seen(maps.n_owned, 0);
          auto const invalid = Teuchos::OrdinalTraits<LocalOrdinal>::invalid();
          for (std::size_t i = 0; i < host.extent(0); ++i)
          {
            LocalOrdinal const lid = maps.domain->getLocalElement(host(i));
            if (lid == invalid)
              hst::detail::throw_invalid("argument 'expected_gids' holds global id ",
                                         host(i), " at position ", i,
                                         ", which this rank's domain map does not own");
            if (seen[std::size_t(lid)])
              hst::detail::throw_invalid("argument 'expected_gids' holds global id ",
                                         host(i), " twice (the second at position ", i,
                                         ")");
            seen[std::size_t(lid)] = 1;
            ids(i) = Ordinal(maps.col_begin + lid);
          }
        }));
    return ids;
  }

  // Collective: checks A, fills `maps`, translates A's local matrix into
  // HST's numbering and builds the distributed operator on it.
  template <class ExecutionSpace>
  static std::unique_ptr<distributed_operator_type const>
  build(ExecutionSpace const &space, matrix_type const &A, OperatorOptions const &options,
        detail::DeltaMaps<map_type> &maps)
  {
    char const *where = "hst::tpetra::DeltaOperator";
    MPI_Comm const comm = detail::raw_comm(A.getComm(), where);
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    auto agree = [&](auto &&f) {
      hst::detail::agree_on_error(comm, rank, size, where,
                                  hst::detail::LocalError::from(f));
    };
    constexpr auto max_ordinal = std::uint64_t(std::numeric_limits<Ordinal>::max());
    agree([&] {
      if (!A.isFillComplete())
        hst::detail::throw_invalid("argument 'A' must be fill complete (call "
                                   "A.fillComplete() first)");
      if (!A.getRangeMap()->locallySameAs(*A.getRowMap()))
        hst::detail::throw_invalid(
            "argument 'A' has a range map that differs from its row map here (",
            A.getRangeMap()->getNodeNumElements(), " range entries, ",
            A.getRowMap()->getNodeNumElements(),
            " rows): not supported, build A with its range map equal to its row map");
      if (std::uint64_t(A.getDomainMap()->getGlobalNumElements()) > max_ordinal)
        hst::detail::throw_invalid("argument 'A' has ",
                                   A.getDomainMap()->getGlobalNumElements(),
                                   " domain-map entries, more than its LocalOrdinal "
                                   "type holds");
      if (std::uint64_t(A.getRowMap()->getGlobalNumElements()) > max_ordinal)
        hst::detail::throw_invalid("argument 'A' has ",
                                   A.getRowMap()->getGlobalNumElements(),
                                   " rows, more than its LocalOrdinal type holds");
    });
    maps.domain = A.getDomainMap();
    maps.range = A.getRangeMap();
    maps.n_owned = maps.domain->getNodeNumElements();
    auto rows = BlockPartition::from_local_sizes(
        std::int64_t(A.getRowMap()->getNodeNumElements()), comm);
    auto cols = BlockPartition::from_local_sizes(std::int64_t(maps.n_owned), comm);
    maps.col_begin = cols.begin(rank);

    // Each column-map entry's owner and local id in the domain map
    // (collective: the domain map's directory answers for remote ids).
    auto const col_map = A.getColMap();
    auto const col_gids = col_map->getNodeElementList();
    std::vector<int> owners(std::size_t(col_gids.size()));
    std::vector<LocalOrdinal> lids(std::size_t(col_gids.size()));
    auto const status =
        maps.domain->getRemoteIndexList(col_gids, Teuchos::ArrayView<int>(owners),
                                        Teuchos::ArrayView<LocalOrdinal>(lids));
    using col_view = Kokkos::View<Ordinal *, memory_space>;
    col_view translated(Kokkos::view_alloc(Kokkos::WithoutInitializing,
                                           "hst::tpetra::DeltaOperator::column_ids"),
                        owners.size());
    auto host_translated = Kokkos::create_mirror_view(translated);
    agree([&] {
      if (status != Tpetra::AllIDsPresent)
        for (std::size_t c = 0; c < owners.size(); ++c)
          if (owners[c] < 0)
            hst::detail::throw_invalid("argument 'A' has column-map entry ", col_gids[c],
                                       " (local column ", c,
                                       ") that its domain map does not hold");
      for (std::size_t c = 0; c < owners.size(); ++c)
        host_translated(c) = Ordinal(cols.begin(owners[c]) + lids[c]);
    });
    Kokkos::deep_copy(space, translated, host_translated);

    // Tpetra's local matrix with its column ids renumbered: its values and
    // row offsets are shared, not copied.
    auto const local = A.getLocalMatrixDevice();
    using local_type = std::remove_const_t<decltype(local)>;
    using entries_type =
        typename local_type::staticcrsgraph_type::entries_type::non_const_type;
    auto const &entries = local.graph.entries;
    entries_type renumbered(Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                                               "hst::tpetra::DeltaOperator::entries"),
                            entries.extent(0));
    Kokkos::parallel_for(
        "hst::tpetra::DeltaOperator::renumber",
        Kokkos::RangePolicy<ExecutionSpace>(space, 0, entries.extent(0)),
        KOKKOS_LAMBDA(std::size_t const p) { renumbered(p) = translated(entries(p)); });
    local_type const A_hst("hst::tpetra::DeltaOperator::A_local", local.numRows(),
                           Ordinal(cols.size()), local.nnz(), local.values,
                           local.graph.row_map, renumbered);
    return std::make_unique<distributed_operator_type const>(
        space, comm, A_hst, std::move(rows), std::move(cols), options);
  }

  std::shared_ptr<detail::DeltaMaps<map_type>> maps_;
  std::shared_ptr<distributed_operator_type const> op_;
};

} // namespace hst::tpetra
