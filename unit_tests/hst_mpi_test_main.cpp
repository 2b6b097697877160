// Main of the MPI tests: MPI_Init, then Kokkos; reversed at exit. Every rank
// runs every test (the tests are collective); rank 0 prints the usual
// report, the other ranks print only their failures, and the exit code is a
// failure if any rank failed.

#include <Kokkos_Core.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>

namespace
{

// Prints failed assertions, prefixed by the rank.
class RankFailurePrinter : public ::testing::EmptyTestEventListener
{
public:
  explicit RankFailurePrinter(int rank)
      : rank_(rank)
  {}
  void OnTestPartResult(::testing::TestPartResult const &result) override
  {
    if (result.failed())
      std::printf("[rank %d] %s:%d: Failure\n%s\n", rank_,
                  result.file_name() ? result.file_name() : "?", result.line_number(),
                  result.summary());
  }
  void OnTestEnd(::testing::TestInfo const &info) override
  {
    if (info.result()->Failed())
      std::printf("[rank %d] FAILED %s.%s\n", rank_, info.test_suite_name(), info.name());
  }

private:
  int rank_;
};

} // namespace

int main(int argc, char *argv[])
{
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int failed = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    ::testing::InitGoogleTest(&argc, argv);
    if (rank != 0)
    {
      auto &listeners = ::testing::UnitTest::GetInstance()->listeners();
      delete listeners.Release(listeners.default_result_printer());
      listeners.Append(new RankFailurePrinter(rank));
    }
    failed = RUN_ALL_TESTS() != 0;
  }
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && failed)
    std::printf("hst_mpi_test_main: a test failed on at least one rank\n");
  MPI_Finalize();
  return failed;
}
