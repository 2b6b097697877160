// bench_tpetra: per step, what a Trilinos user does without HST, a full
// Tpetra::CrsMatrix::apply of the whole X, against each arm of
// hst::tpetra::DeltaOperator, on a 2D grid (1e6 rows; --quick: 90 000),
// B = 8, drift and jump, k = 0.3% n; then both as k grows, to show where
// they cross. Run it with mpiexec -n 1, 2, ...
//
// Rungs, all on the same steps (a step: k_local owned global ids and their
// rows dX of the change, the same global workload on every rank):
//   apply      X(gids) += dX on the owned rows, then A.apply(X, Y): Y = A X
//              (Tpetra's import of the ghost entries, then its local spmv);
//   scatter, baseline, session, adaptive: DeltaArm::apply_cols(gids, dX, Y).
// A step is timed on every rank after a barrier (fence, clock, step, fence,
// clock); its time is the slowest rank's (MPI_Allreduce MAX, untimed); a
// rung's us/step is the median over its steps and rounds. Rungs run in
// interleaved rounds in balanced order (Harness.hpp). Step 0 of a pass is not
// timed (first compiles); arms are made fresh for each pass. After every
// pass, Y must equal A.apply(X_final) to 1e-12 relative.

#include <hst/tpetra/DeltaOperator.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include "Harness.hpp"
#include <Teuchos_DefaultMpiComm.hpp>
#include <Tpetra_CrsMatrix.hpp>
#include <Tpetra_Map.hpp>
#include <Tpetra_MultiVector.hpp>
#include <workload/Generators.hpp>
#include <workload/TpetraGrid.hpp>
#include <workload/Workload.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace
{

using crs_type = Tpetra::CrsMatrix<>;
using map_type = Tpetra::Map<>;
using mv_type = Tpetra::MultiVector<>;
using GO = crs_type::global_ordinal_type;
using SC = crs_type::scalar_type;
using delta_type = hst::tpetra::DeltaOperator<>;
using exec_space = delta_type::execution_space;
using mem_space = delta_type::memory_space;
using Triplets = hst::workload::Triplets<double, int>;
using Global = KokkosSparse::CrsMatrix<double, int, exec_space>;
int const width = 8;

double max_over_ranks(double v)
{
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return v;
}

char const *const rungs[] = {"apply", "scatter", "baseline", "session", "adaptive"};
constexpr std::size_t n_rungs = 5;

struct Result
{
  double us[n_rungs] = {};
  double error = 0;
};

// Times every rung on `steps` steps of the workload `w`, `rounds` rounds.
Result measure(crs_type const &M, delta_type const &op, Global const &global,
               hst::workload::WorkloadOptions const &w, int steps, int rounds)
{
  auto const &domain = *M.getDomainMap();
  std::size_t const k_max = std::size_t(w.k);
  Kokkos::View<GO *, mem_space> gids("bench::gids", k_max);
  Kokkos::View<SC **, Kokkos::LayoutLeft, mem_space> dX("bench::dX", k_max, width);
  std::vector<std::vector<double>> times(n_rungs);
  mv_type X(M.getDomainMap(), width), Y(M.getRangeMap(), width),
      Y_ref(M.getRangeMap(), width);
  exec_space space;
  Result result;
  for (int round = 0; round < rounds; ++round)
    for (std::size_t r : hst::bench::balanced_order(n_rungs, round))
    {
      hst::workload::Workload<double, int> workload(global, w);
      X.putScalar(0.0);
      Y.putScalar(0.0);
      // Fills gids and dX with this rank's part of the workload's step.
      auto stage = [&] {
        auto const &all = workload.columns();
        auto const &dx = workload.dx();
        std::size_t k = 0;
        for (std::size_t i = 0; i < all.size(); ++i)
          if (domain.isNodeGlobalElement(GO(all[i])))
          {
            gids(k) = GO(all[i]);
            for (int b = 0; b < width; ++b)
              dX(k, b) = dx[i * width + std::size_t(b)];
            ++k;
          }
        return k;
      };
      std::size_t k = stage();
      auto expected = Kokkos::subview(gids, std::make_pair(std::size_t(0), k));
      std::optional<delta_type::scatter_type> scatter;
      std::optional<delta_type::baseline_type> baseline;
      std::optional<delta_type::session_type> session;
      std::optional<delta_type::adaptive_type> adaptive;
      if (r == 1)
        scatter.emplace(op.scatter(width));
      else if (r == 2)
        baseline.emplace(op.baseline(width));
      else if (r == 3)
        session.emplace(op.session(expected, width));
      else if (r == 4)
        adaptive.emplace(op.adaptive(expected, width));
      for (int t = 0; t < steps; ++t)
      {
        if (t > 0)
        {
          workload.advance();
          k = stage();
        }
        auto const ids = Kokkos::subview(gids, std::make_pair(std::size_t(0), k));
        auto const d =
            Kokkos::subview(dX, std::make_pair(std::size_t(0), k), Kokkos::ALL);
        MPI_Barrier(MPI_COMM_WORLD);
        space.fence();
        double const start = MPI_Wtime();
        if (r == 0)
        {
          // The user's own update of X (k rows), then the full apply.
          {
            auto x = X.getLocalViewHost(Tpetra::Access::ReadWrite);
            for (std::size_t i = 0; i < k; ++i)
            {
              auto const row = std::size_t(domain.getLocalElement(ids(i)));
              for (int b = 0; b < width; ++b)
                x(row, std::size_t(b)) += d(i, b);
            }
          }
          M.apply(X, Y);
        }
        else if (r == 1)
          scatter->apply_cols(space, ids, d, Y);
        else if (r == 2)
          baseline->apply_cols(space, ids, d, Y);
        else if (r == 3)
          session->apply_cols(space, ids, d, Y);
        else
          adaptive->apply_cols(space, ids, d, Y);
        space.fence();
        double const seconds = max_over_ranks(MPI_Wtime() - start);
        if (t > 0)
          times[r].push_back(seconds);
        if (r != 0)
        {
          // Untimed: X follows the changes, for the check below.
          auto x = X.getLocalViewHost(Tpetra::Access::ReadWrite);
          for (std::size_t i = 0; i < k; ++i)
          {
            auto const row = std::size_t(domain.getLocalElement(ids(i)));
            for (int b = 0; b < width; ++b)
              x(row, std::size_t(b)) += d(i, b);
          }
        }
      }
      M.apply(X, Y_ref);
      Y.update(-1.0, Y_ref, 1.0);
      std::vector<double> diff(width), scale(width);
      Y.normInf(diff);
      Y_ref.normInf(scale);
      double const e = *std::max_element(diff.begin(), diff.end()) /
                       std::max(1e-300, *std::max_element(scale.begin(), scale.end()));
      result.error = std::max(result.error, e);
    }
  for (std::size_t r = 0; r < n_rungs; ++r)
    result.us[r] = 1e6 * hst::bench::median(times[r]);
  return result;
}

int run(bool quick, int steps, int rounds)
{
  auto const comm = Teuchos::rcp(new Teuchos::MpiComm<int>(MPI_COMM_WORLD));
  int const size = comm->getSize();
  bool const root = comm->getRank() == 0;
  int const side = quick ? 300 : 1000;
  Triplets const A = hst::workload::grid_2d<double, int>(side, side);
  auto const map =
      Teuchos::rcp(new map_type(Tpetra::global_size_t(A.n_rows), GO(0), comm));
  // The same 5-point grid as A (whose pattern the workloads follow), with
  // stencil weights, each rank assembling its own rows.
  auto const M = hst::workload::tpetra_grid_2d<crs_type>(map, side, 4.0, -1.0, 0.0);
  MPI_Barrier(MPI_COMM_WORLD);
  double const t0 = MPI_Wtime();
  delta_type const op(*M);
  double const prep = max_over_ranks(MPI_Wtime() - t0);
  Global const global = hst::workload::to_crs<Global>(A);
  if (std::size_t(M->getGlobalNumEntries()) != std::size_t(global.nnz()))
  {
    if (root)
      std::fprintf(stderr,
                   "bench_tpetra: the Tpetra grid and the workload's grid differ\n");
    return 1;
  }
  if (root)
  {
    std::printf("bench_tpetra: %d rank(s), %s, grid2d_5pt_%dx%d (%d rows, %zu nnz), "
                "B = %d, churn 0.01\n",
                size, exec_space::name(), side, side, A.n_rows,
                std::size_t(M->getGlobalNumEntries()), width);
    std::printf("DeltaOperator made in %.3f s (slowest rank); us/step: median over %d "
                "timed steps x %d rounds of the slowest rank's step\n",
                prep, steps - 1, rounds);
  }
  int failures = 0;
  auto check = [&](Result const &res, char const *what) {
    if (res.error > 1e-12)
    {
      ++failures;
      if (root)
        std::printf("  WRONG: %s: max relative error %.3g\n", what, res.error);
    }
  };

  for (auto motion : {hst::workload::Motion::drift, hst::workload::Motion::jump})
  {
    hst::workload::WorkloadOptions w;
    w.motion = motion;
    w.churn = 0.01;
    w.k = std::llround(0.003 * A.n_rows);
    w.width = width;
    w.seed = 17;
    auto const res = measure(*M, op, global, w, steps, rounds);
    check(res, hst::workload::to_string(motion));
    if (!root)
      continue;
    std::printf("\n%s, k = %lld (0.3%% of n)\n", hst::workload::to_string(motion),
                (long long)w.k);
    std::printf("  %-10s %12s %12s\n", "rung", "us/step", "vs apply");
    double best = 1e300;
    for (std::size_t r = 0; r < n_rungs; ++r)
    {
      std::printf("  %-10s %12.1f %11.1fx\n", rungs[r], res.us[r], res.us[0] / res.us[r]);
      if (r > 0)
        best = std::min(best, res.us[r]);
    }
    std::printf("  best HST arm vs apply: %.1fx (target >= 50x); max rel err %.2g\n",
                res.us[0] / best, res.error);
  }

  // As k grows: apply against the best of the three arms (and the adaptive
  // session), drift; fewer steps.
  if (root)
    std::printf("\ncrossover (drift): apply vs HST as k grows\n  %-8s %10s %12s %12s "
                "%10s %12s %10s\n",
                "k/n", "k", "apply us", "best arm us", "best/apply", "adaptive us",
                "adapt/apply");
  double last_win = -1, first_loss = -1;
  for (double fraction : {0.003, 0.01, 0.03, 0.1, 0.3})
  {
    hst::workload::WorkloadOptions w;
    w.motion = hst::workload::Motion::drift;
    w.churn = 0.01;
    w.k = std::llround(fraction * A.n_rows);
    w.width = width;
    w.seed = 23;
    auto const res = measure(*M, op, global, w, std::min(steps, 12), 2);
    check(res, "crossover");
    double const best = std::min({res.us[1], res.us[2], res.us[3]});
    if (best < res.us[0])
      last_win = fraction;
    else if (first_loss < 0)
      first_loss = fraction;
    if (root)
      std::printf("  %-8.3f %10lld %12.1f %12.1f %9.2fx %12.1f %9.2fx\n", fraction,
                  (long long)w.k, res.us[0], best, res.us[0] / best, res.us[4],
                  res.us[0] / res.us[4]);
  }
  if (root)
  {
    if (first_loss < 0)
      std::printf("  the best arm beats apply at every k measured (up to 30%% of n)\n");
    else
      std::printf("  the best arm beats apply up to k = %.1f%% of n; apply wins from "
                  "k = %.1f%% of n\n",
                  100 * last_win, 100 * first_loss);
  }
  return failures == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char *argv[])
{
  MPI_Init(&argc, &argv);
  int status = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    bool quick = false;
    int steps = 0, rounds = 0;
    for (int i = 1; i < argc; ++i)
    {
      std::string const a = argv[i];
      if (a == "--quick")
        quick = true;
      else if (a.rfind("--steps=", 0) == 0)
        steps = std::atoi(a.c_str() + 8);
      else if (a.rfind("--rounds=", 0) == 0)
        rounds = std::atoi(a.c_str() + 9);
      else
      {
        std::fprintf(stderr,
                     "usage: bench_tpetra [--quick] [--steps=N] [--rounds=N]\n"
                     "  unknown argument: %s\n",
                     argv[i]);
        status = 2;
      }
    }
    if (steps == 0)
      steps = quick ? 21 : 41;
    if (rounds == 0)
      rounds = quick ? 2 : 3;
    if (status == 0 && (steps < 2 || rounds < 1))
    {
      std::fprintf(stderr, "bench_tpetra: --steps must be >= 2, --rounds >= 1\n");
      status = 2;
    }
    if (status == 0)
      status = run(quick, steps, rounds);
  }
  MPI_Finalize();
  return status;
}
