#pragma once

#include <hst/detail/Buffers.hpp>
#include <hst/detail/InputCheck.hpp>
#include <hst/distributed/detail/DistributedData.hpp>
#include <hst/kokkos_ext/Compat.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace hst
{

template <class Scalar, class Ordinal, class MemorySpace>
class DistributedAdaptiveSession;

/// What a distributed arm has sent and received so far (this rank).
struct ExchangeStats
{
  std::int64_t steps = 0;            ///< apply_cols calls that passed the checks
  std::int64_t messages_sent = 0;    ///< one per send neighbour per step
  std::int64_t bytes_sent = 0;       ///< payload: (slot, row of dx) per change sent
  std::int64_t changes_sent = 0;     ///< (column, neighbour) pairs sent
  std::int64_t changes_received = 0; ///< ghost columns applied
};

/// One arm of a DistributedOperator: `LocalArm` (ScheduledArm, ExactSetArm or
/// ScatterArm) run on this rank's row block. A step sends each changed owned
/// column's slot and row of dx to the ranks whose rows touch that column
/// (one message per send neighbour, into buffers sized when the arm is
/// made), applies the owned changes while the messages travel, then the
/// received ones. Two local arms do that, one for the owned columns and one
/// for the ghost columns, so each sees a set that drifts the way the caller's
/// does, and a frozen caller's set stays frozen for both.
template <class LocalArm>
class DistributedArm
{
public:
  using value_type = typename LocalArm::value_type;
  using ordinal_type = typename LocalArm::ordinal_type;
  using memory_space = typename LocalArm::memory_space;
  using data_type = detail::DistributedData<value_type, ordinal_type, memory_space>;

  /// Made by DistributedOperator's session(), baseline() and scatter().
  DistributedArm(std::shared_ptr<data_type const> data, int width, LocalArm owned,
                 LocalArm ghost)
      : data_(std::move(data))
      , width_(width)
      , where_("hst::Distributed" + std::string(LocalArm::name + 5))
      , record_(sizeof(std::int32_t) + std::size_t(width) * sizeof(value_type))
      , record_type_(make_record_type(record_))
      , owned_arm_(std::move(owned))
      , ghost_arm_(std::move(ghost))
      , owned_ids_("hst::DistributedArm::owned_ids")
      , ghost_ids_("hst::DistributedArm::ghost_ids")
      , ghost_dx_(Kokkos::view_alloc(Kokkos::WithoutInitializing,
                                     "hst::DistributedArm::ghost_dx"),
                  std::size_t(data_->plan.recv_slots()), std::size_t(width))
      , ghost_dx_host_(Kokkos::create_mirror_view(ghost_dx_))
      , send_count_(data_->plan.send_ranks.size(), 0)
      , send_bytes_(std::size_t(data_->plan.send_slots()) * record_)
      , recv_bytes_(std::size_t(data_->plan.recv_slots()) * record_)
      , requests_(data_->plan.send_ranks.size() + data_->plan.recv_ranks.size())
      , statuses_(requests_.size())
  {
    ghost_ids_.reserve(std::size_t(data_->plan.recv_slots()));
  }

  int width() const { return width_; }
  ordinal_type num_local_rows() const { return data_->n_local_rows; }
  /// The local arm that applies this rank's owned changes, and the one that
  /// applies the changes received from other ranks (local column ids).
  LocalArm const &owned_arm() const { return owned_arm_; }
  LocalArm const &ghost_arm() const { return ghost_arm_; }
  ExchangeStats const &stats() const { return stats_; }

  /// Collective: y_local += A[rows of this rank, cols] * dx over all ranks'
  /// changes, in place, on `space`. `cols` holds k_local distinct global
  /// column ids in this rank's column range (any order, possibly none), `dx`
  /// is k_local x B, `y_local` is num_local_rows() x B. Bad input on any
  /// rank makes every rank throw std::invalid_argument naming that rank, the
  /// argument and the value, before any rank writes y. The step fences
  /// `space` first (it rewrites buffers the previous step's kernels read): a
  /// caller that changes instances between steps fences the old one itself.
  template <class ExecutionSpace, class Cols, class Dx, class Y>
  void apply_cols(ExecutionSpace const &space, Cols const &cols, Dx const &dx, Y const &y)
  {
    detail::check_apply_types<ExecutionSpace, memory_space, value_type, ordinal_type,
                              Cols, Dx, Y>();
    // The previous step's kernels may still read the id lists and the
    // received rows that this step rewrites (MPI writes the latter).
    kokkos_ext::fence(space, "hst::dist_step");
    std::size_t const k = cols.extent(0);
    detail::agree_on_error(data_->comm, where_.c_str(), check(space, cols, dx, y));
    auto const x = host_rows(space, dx);
    post_exchange(x, k);
    try
    {
      // Checked above on every rank (the ghost ids are distinct and in
      // range by construction): the local arms skip their own checks.
      owned_ids_.upload(space, k);
      owned_arm_.apply_prechecked(
          space, owned_ids_.host(),
          Kokkos::subview(owned_ids_.device(), std::make_pair(std::size_t(0), k)), dx, y);
      std::size_t const received = finish_receives(space);
      received_ = received;
      ghost_arm_.apply_prechecked(
          space, ghost_ids_.host(),
          Kokkos::subview(ghost_ids_.device(), std::make_pair(std::size_t(0), received)),
          Kokkos::subview(ghost_dx_, std::make_pair(std::size_t(0), received),
                          Kokkos::ALL),
          y);
    }
    catch (...)
    {
      // A local arm failed (an allocation, an internal limit), on this rank
      // only: the messages still complete before their buffers can change,
      // then the error goes to this rank's caller. The ranks' steps no longer
      // match; a caller that goes on must treat the operator as broken.
      MPI_Waitall(int(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
      throw;
    }
    // The send buffers are rewritten next step.
    MPI_Waitall(int(data_->plan.send_ranks.size()),
                requests_.data() + data_->plan.recv_ranks.size(), MPI_STATUSES_IGNORE);
    ++stats_.steps;
  }

  /// Same, on a default instance of `MemorySpace::execution_space` (Kokkos'
  /// space for that memory: a host space for host-pinned memory, so order it
  /// after steps run there on a device instance).
  template <class Cols, class Dx, class Y>
  void apply_cols(Cols const &cols, Dx const &dx, Y const &y)
  {
    apply_cols(default_space_, cols, dx, y);
  }

private:
  friend class DistributedAdaptiveSession<value_type, ordinal_type, memory_space>;
  using Scalar = value_type;
  using Ordinal = ordinal_type;

  static std::shared_ptr<MPI_Datatype> make_record_type(std::size_t bytes)
  {
    auto *type = new MPI_Datatype(MPI_DATATYPE_NULL);
    MPI_Type_contiguous(int(bytes), MPI_BYTE, type);
    MPI_Type_commit(type);
    return std::shared_ptr<MPI_Datatype>(type, [](MPI_Datatype *t) {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized)
        MPI_Type_free(t);
      delete t;
    });
  }

  // This rank's checks (empty: none). Writes the local ids of valid columns
  // into owned_ids_'s host list.
  template <class ExecutionSpace, class Cols, class Dx, class Y>
  detail::LocalError check(ExecutionSpace const &space, Cols const &cols, Dx const &dx,
                           Y const &y)
  {
    return detail::LocalError::from([&] {
      std::size_t const k = cols.extent(0);
      if (dx.extent(0) != k)
        detail::throw_invalid("argument 'dx' has ", dx.extent(0),
                              " rows but 'cols' holds ", k, " columns");
      if (dx.extent(1) != std::size_t(width_))
        detail::throw_invalid("argument 'dx' has ", dx.extent(1),
                              " columns but the arm was made for B = ", width_);
      if (y.extent(0) != std::size_t(data_->n_local_rows))
        detail::throw_invalid("argument 'y' has ", y.extent(0),
                              " rows but this rank owns ", data_->n_local_rows);
      if (y.extent(1) != std::size_t(width_))
        detail::throw_invalid("argument 'y' has ", y.extent(1),
                              " columns but the arm was made for B = ", width_);
      auto const n_owned = std::int64_t(data_->n_owned);
      if (std::int64_t(k) > n_owned)
        detail::throw_invalid("argument 'cols' holds ", k,
                              " columns but this rank owns only ", n_owned,
                              " (ids must be distinct)");
      reserve_dx_staging<Dx>(k); // may allocate: before the agreement
      // k <= n_owned: staged ids take n_owned entries, once.
      Ordinal const *ids =
          detail::host_readable_ids(space, cols, id_staging_, std::size_t(data_->n_owned),
                                    "hst::DistributedArm::id_staging");
      owned_ids_.reserve(k); // grows to the largest k seen
      // Duplicates found with the local operator's shared column stamps
      // (owned columns are its first n_owned): nothing of the operator's
      // size is held or cleared per arm.
      auto const lease = owned_arm_.op_->scratch->acquire();
      std::uint32_t const generation = lease->new_column_generation();
      std::uint32_t *const stamp = lease->column_stamp();
      auto const begin = data_->col_begin;
      Ordinal *const local = owned_ids_.host();
      for (std::size_t i = 0; i < k; ++i)
      {
        std::int64_t const c = std::int64_t(ids[i]) - begin;
        if (c < 0 || c >= n_owned)
          detail::throw_invalid("argument 'cols' holds column id ", ids[i],
                                " at position ", i, ", outside this rank's columns [",
                                begin, ", ", begin + n_owned, ")");
        if (stamp[c] == generation)
          detail::throw_invalid("argument 'cols' holds column id ", ids[i],
                                " twice (the second at position ", i, ")");
        stamp[c] = generation;
        local[i] = Ordinal(c);
      }
    });
  }

  // Room to stage k rows of dx where the host cannot read them: n_owned
  // rows (k <= n_owned), allocated on the first such step.
  template <class Dx>
  void reserve_dx_staging(std::size_t k)
  {
    if constexpr (!kokkos_ext::is_host_accessible<typename Dx::memory_space>)
    {
      if (dx_staging_.extent(0) < k)
      {
        dx_staging_ =
            decltype(dx_staging_)(Kokkos::view_alloc(Kokkos::WithoutInitializing,
                                                     "hst::DistributedArm::dx_staging"),
                                  std::size_t(data_->n_owned), std::size_t(width_));
        dx_staging_host_ = Kokkos::create_mirror_view(dx_staging_);
      }
    }
    else
      (void)k;
  }

  // The caller's dx, readable on the host: dx itself where the host can
  // reach it, else a staged copy.
  template <class ExecutionSpace, class Dx>
  auto host_rows(ExecutionSpace const &space, Dx const &dx)
  {
    if constexpr (kokkos_ext::is_host_accessible<typename Dx::memory_space>)
    {
      (void)space;
      return dx;
    }
    else
    {
      std::size_t const k = dx.extent(0); // staging reserved by check()
      auto const rows = std::make_pair(std::size_t(0), k);
      auto device = Kokkos::subview(dx_staging_, rows, Kokkos::ALL);
      auto host = Kokkos::subview(dx_staging_host_, rows, Kokkos::ALL);
      Kokkos::deep_copy(space, device, dx); // to one layout, on the device
      Kokkos::deep_copy(space, host, device);
      kokkos_ext::fence(space, "hst::host_rows"); // the host packs these rows next
      return host;
    }
  }

  // Packs one record (slot, row of dx) per (changed column, neighbour) and
  // posts the receives and sends.
  template <class X>
  void post_exchange(X const &x, std::size_t k)
  {
    auto const &plan = data_->plan;
    MPI_Comm const comm = data_->comm.get();
    std::size_t const n_recv = plan.recv_ranks.size();
    std::size_t const n_send = plan.send_ranks.size();
    for (std::size_t q = 0; q < n_recv; ++q)
      MPI_Irecv(recv_bytes_.data() + std::size_t(plan.recv_offsets[q]) * record_,
                int(plan.recv_offsets[q + 1] - plan.recv_offsets[q]), *record_type_,
                plan.recv_ranks[q], detail::tag_changes, comm, &requests_[q]);
    std::fill(send_count_.begin(), send_count_.end(), 0);
    Ordinal const *const local = owned_ids_.host();
    for (std::size_t i = 0; i < k; ++i)
    {
      auto const c = std::size_t(local[i]);
      for (auto p = plan.dest_ptr[c]; p < plan.dest_ptr[c + 1]; ++p)
      {
        auto const d = plan.dest[std::size_t(p)];
        char *out = send_bytes_.data() + std::size_t(plan.send_offsets[d.neighbour] +
                                                     send_count_[d.neighbour]++) *
                                             record_;
        std::memcpy(out, &d.slot, sizeof(d.slot));
        out += sizeof(d.slot);
        for (int b = 0; b < width_; ++b, out += sizeof(Scalar))
        {
          Scalar const v = x(i, b);
          std::memcpy(out, &v, sizeof(Scalar));
        }
      }
    }
    for (std::size_t n = 0; n < n_send; ++n)
    {
      MPI_Isend(send_bytes_.data() + std::size_t(plan.send_offsets[n]) * record_,
                int(send_count_[n]), *record_type_, plan.send_ranks[n],
                detail::tag_changes, comm, &requests_[n_recv + n]);
      stats_.bytes_sent += send_count_[n] * std::int64_t(record_);
      stats_.changes_sent += send_count_[n];
    }
    stats_.messages_sent += std::int64_t(n_send);
  }

  // Waits for the receives and unpacks them into the ghost id list and rows
  // of dx (in receive-neighbour order, each in its sender's order); returns
  // how many arrived.
  template <class ExecutionSpace>
  std::size_t finish_receives(ExecutionSpace const &space)
  {
    auto const &plan = data_->plan;
    std::size_t const n_recv = plan.recv_ranks.size();
    MPI_Waitall(int(n_recv), requests_.data(), statuses_.data());
    Ordinal *const ids = ghost_ids_.host();
    std::size_t j = 0;
    for (std::size_t q = 0; q < n_recv; ++q)
    {
      int changes = 0;
      MPI_Get_count(&statuses_[q], *record_type_, &changes);
      auto const count = std::size_t(changes);
      char const *in = recv_bytes_.data() + std::size_t(plan.recv_offsets[q]) * record_;
      auto const ghost_base = std::int64_t(data_->n_owned) + plan.recv_offsets[q];
      for (std::size_t s = 0; s < count; ++s, ++j, in += record_)
      {
        std::int32_t slot = 0;
        std::memcpy(&slot, in, sizeof(slot));
        ids[j] = Ordinal(ghost_base + slot);
        std::memcpy(&ghost_dx_host_(j, 0), in + sizeof(slot), record_ - sizeof(slot));
      }
    }
    ghost_ids_.upload(space, j);
    if constexpr (!std::is_same_v<typename decltype(ghost_dx_host_)::memory_space,
                                  typename decltype(ghost_dx_)::memory_space>)
    {
      auto const rows = std::make_pair(std::size_t(0), j);
      Kokkos::deep_copy(space, Kokkos::subview(ghost_dx_, rows, Kokkos::ALL),
                        Kokkos::subview(ghost_dx_host_, rows, Kokkos::ALL));
    }
    stats_.changes_received += std::int64_t(j);
    return j;
  }

  std::shared_ptr<data_type const> data_;
  int width_;
  std::string where_;
  std::size_t record_; // bytes per change sent: slot, then B values
  // One change as an MPI datatype, so that counts are in changes (each
  // neighbour's list fits an int) rather than in bytes.
  std::shared_ptr<MPI_Datatype> record_type_;
  LocalArm owned_arm_;
  LocalArm ghost_arm_;
  // The default instance, made once: on Kokkos 4 making one allocates.
  typename memory_space::execution_space default_space_;
  detail::PlannedBuffer<Ordinal, memory_space> owned_ids_;
  detail::PlannedBuffer<Ordinal, memory_space> ghost_ids_;
  std::size_t received_ = 0; // ghost ids of the latest step
  Kokkos::View<Scalar **, Kokkos::LayoutRight, memory_space> ghost_dx_;
  typename Kokkos::View<Scalar **, Kokkos::LayoutRight, memory_space>::HostMirror
      ghost_dx_host_;
  Kokkos::View<Ordinal *, Kokkos::HostSpace> id_staging_;
  Kokkos::View<Scalar **, Kokkos::LayoutRight, memory_space> dx_staging_;
  typename Kokkos::View<Scalar **, Kokkos::LayoutRight, memory_space>::HostMirror
      dx_staging_host_;
  std::vector<std::int64_t> send_count_;
  std::vector<char> send_bytes_;
  std::vector<char> recv_bytes_;
  std::vector<MPI_Request> requests_; // receives, then sends
  std::vector<MPI_Status> statuses_;
  ExchangeStats stats_;
};

} // namespace hst
