#pragma once
// The distributed layer's communicator and its one error-agreement rule.

#include <hst/detail/InputCheck.hpp>

#include <mpi.h>

#include <exception>
#include <memory>
#include <stdexcept>
#include <string>

namespace hst::detail
{

// A duplicate of the caller's communicator, freed with its last owner. HST's
// messages and collectives never match the caller's. Every owner must be
// destroyed before MPI_Finalize (MPI_Comm_free is collective: destroy them
// on every rank alike).
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

// What one rank found wrong: a caller error (std::invalid_argument) or an
// internal failure (anything else: an allocation, an invariant). Empty
// message: nothing.
struct LocalError
{
  std::string message;
  bool caller = true;

  bool empty() const { return message.empty(); }

  // Runs `f` and returns what it threw, if anything.
  template <class F>
  static LocalError from(F &&f)
  {
    try
    {
      f();
    }
    catch (std::invalid_argument const &e)
    {
      return {*e.what() ? e.what() : "invalid argument", true};
    }
    catch (std::exception const &e)
    {
      return {std::string("internal error: ") + e.what(), false};
    }
    return {};
  }
};

// Collective. Every rank passes what it found (empty: nothing). If any rank
// found something, every rank throws the lowest such rank's error, prefixed
// by "<where>: on rank r: ": std::invalid_argument for a caller error,
// std::runtime_error for an internal failure. Otherwise all return. One
// MPI_Allreduce of an int on the good path; two MPI_Bcast when some rank
// failed, on every rank alike, so no rank waits in a collective that the
// others skipped.
inline void agree_on_error(MPI_Comm comm, int rank, int size, char const *where,
                           LocalError const &local)
{
  // The lowest failing rank r contributes size - r, the others 0.
  int failing = local.empty() ? 0 : size - rank;
  MPI_Allreduce(MPI_IN_PLACE, &failing, 1, MPI_INT, MPI_MAX, comm);
  if (failing == 0)
    return;
  int const root = size - failing;
  std::string message = local.message;
  int header[2] = {int(message.size()), local.caller ? 1 : 0};
  MPI_Bcast(header, 2, MPI_INT, root, comm);
  message.resize(std::size_t(header[0]));
  MPI_Bcast(message.data(), header[0], MPI_CHAR, root, comm);
  std::string const what =
      std::string(where) + ": on rank " + std::to_string(root) + ": " + message;
  if (header[1])
    throw std::invalid_argument(what);
  throw std::runtime_error(what);
}

inline void agree_on_error(Communicator const &comm, char const *where,
                           LocalError const &local)
{
  agree_on_error(comm.get(), comm.rank(), comm.size(), where, local);
}

// Collective: runs `f` on every rank and agrees on what any of them threw
// (see agree_on_error).
template <class F>
void agree_on(Communicator const &comm, char const *where, F &&f)
{
  agree_on_error(comm, where, LocalError::from(f));
}

} // namespace hst::detail
