#pragma once
// The distributed layer's communicator and its one error-agreement rule.

#include <hst/detail/InputCheck.hpp>

#include <mpi.h>

#include <memory>
#include <stdexcept>
#include <string>

namespace hst::detail
{

// A duplicate of the caller's communicator, freed with its last owner. HST's
// messages and collectives never match the caller's. Every owner must be
// destroyed before MPI_Finalize.
class Communicator
{
public:
  explicit Communicator(MPI_Comm comm)
  {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized)
      throw std::logic_error("hst: MPI must be initialized before a distributed HST "
                             "object is made");
    auto *dup = new MPI_Comm(MPI_COMM_NULL);
    MPI_Comm_dup(comm, dup);
    comm_.reset(dup, [](MPI_Comm *c) {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized)
        MPI_Comm_free(c);
      delete c;
    });
    MPI_Comm_rank(*comm_, &rank_);
    MPI_Comm_size(*comm_, &size_);
  }

  MPI_Comm get() const { return *comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

private:
  std::shared_ptr<MPI_Comm> comm_;
  int rank_ = 0;
  int size_ = 1;
};

// Collective. Every rank passes its own error message (empty: none). If any
// rank has one, every rank throws std::invalid_argument with the message of
// the lowest such rank, prefixed by "<where>: on rank r: "; otherwise all
// return. One MPI_Allreduce of an int on the good path; an MPI_Bcast of the
// message when some rank failed, on every rank alike, so no rank is left
// waiting in a collective the others skipped.
inline void agree_on_error(MPI_Comm comm, int rank, int size, char const *where,
                           std::string const &local_error)
{
  // The lowest failing rank r contributes size - r, the others 0.
  int failing = local_error.empty() ? 0 : size - rank;
  MPI_Allreduce(MPI_IN_PLACE, &failing, 1, MPI_INT, MPI_MAX, comm);
  if (failing == 0)
    return;
  int const root = size - failing;
  std::string message = local_error;
  int length = int(message.size());
  MPI_Bcast(&length, 1, MPI_INT, root, comm);
  message.resize(std::size_t(length));
  MPI_Bcast(message.data(), length, MPI_CHAR, root, comm);
  throw_invalid(where, ": on rank ", root, ": ", message);
}

inline void agree_on_error(Communicator const &comm, char const *where,
                           std::string const &local_error)
{
  agree_on_error(comm.get(), comm.rank(), comm.size(), where, local_error);
}

// Runs `check`; a std::invalid_argument it throws becomes this rank's error
// message for agree_on_error (collective), other exceptions propagate.
template <class F>
void agree_on(Communicator const &comm, char const *where, F &&check)
{
  std::string error;
  try
  {
    check();
  }
  catch (std::invalid_argument const &e)
  {
    error = e.what();
    if (error.empty())
      error = "invalid argument";
  }
  agree_on_error(comm, where, error);
}

} // namespace hst::detail
