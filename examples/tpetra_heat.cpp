// Explicit time stepping of the heat equation u' = -K u + P s(t) on a 2D grid
// of Tpetra objects, with a heat source s(t) (a small hot disc) that moves
// along a circle. The state u changes everywhere every step; the source
// changes only on the disc's leading and trailing edges. The load b = P s is
// therefore what HST keeps up to date: the classic loop calls P.apply(s, b)
// on the whole source every step, the HST loop adds P[:, S] ds for the cells
// S whose source changed (make_delta, apply_cols, copy_rows). Both loops
// step u with K.apply; the two results are compared at the end, and the
// program exits non-zero (on every rank) if they differ by more than 1e-12
// (relative).
//
//   mpiexec -n 2 tpetra_heat [--side N] [--steps S] [--radius R]

#include <hst/tpetra/DeltaOperator.hpp>
#include <hst/tpetra/MultiVectorDelta.hpp>

#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <Teuchos_DefaultMpiComm.hpp>
#include <Tpetra_CrsMatrix.hpp>
#include <Tpetra_Map.hpp>
#include <Tpetra_MultiVector.hpp>
#include <workload/TpetraGrid.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace
{

using crs_type = Tpetra::CrsMatrix<>;
using map_type = Tpetra::Map<>;
using mv_type = Tpetra::MultiVector<>;
using GO = crs_type::global_ordinal_type;
using SC = crs_type::scalar_type;
using memory_space = hst::tpetra::DeltaOperator<>::memory_space;

double now()
{
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The source strength of cell g at step t: 1 inside a disc of `radius`
// cells whose centre runs along a circle around the grid's centre.
struct Source
{
  GO side;
  double radius;
  double speed; // radians per step

  void centre(int t, double &ci, double &cj) const
  {
    double const orbit = 0.3 * double(side);
    ci = 0.5 * double(side) + orbit * std::cos(speed * t);
    cj = 0.5 * double(side) + orbit * std::sin(speed * t);
  }
  double value(GO g, int t) const
  {
    double ci = 0, cj = 0;
    centre(t, ci, cj);
    double const di = double(g / side) - ci, dj = double(g % side) - cj;
    return di * di + dj * dj <= radius * radius ? 1.0 : 0.0;
  }
  // The cells whose value may differ between steps t - 1 and t: the
  // bounding boxes of both discs (O(radius^2), never O(n)).
  template <class F>
  void for_each_candidate(int t, F &&f) const
  {
    double ci[2], cj[2];
    centre(t - 1, ci[0], cj[0]);
    centre(t, ci[1], cj[1]);
    GO const lo_i = std::max<GO>(0, GO(std::floor(std::min(ci[0], ci[1]) - radius)));
    GO const hi_i =
        std::min<GO>(side - 1, GO(std::ceil(std::max(ci[0], ci[1]) + radius)));
    GO const lo_j = std::max<GO>(0, GO(std::floor(std::min(cj[0], cj[1]) - radius)));
    GO const hi_j =
        std::min<GO>(side - 1, GO(std::ceil(std::max(cj[0], cj[1]) + radius)));
    for (GO i = lo_i; i <= hi_i; ++i)
      for (GO j = lo_j; j <= hi_j; ++j)
        f(i * side + j);
  }
};

// The largest |a - b| over ranks relative to the largest |b|.
double relative_difference(mv_type const &a, mv_type const &b)
{
  mv_type d(a, Teuchos::Copy);
  d.update(-1.0, b, 1.0);
  std::vector<double> diff(1), scale(1);
  d.normInf(diff);
  b.normInf(scale);
  return scale[0] > 0 ? diff[0] / scale[0] : diff[0];
}

int heat(GO side, int steps, double radius)
{
  auto const comm = Teuchos::rcp(new Teuchos::MpiComm<int>(MPI_COMM_WORLD));
  int const rank = comm->getRank();
  auto const map =
      Teuchos::rcp(new map_type(Tpetra::global_size_t(side * side), GO(0), comm));
  double const dt = 0.2; // stable: dt * max eigenvalue of K (< 8) < 2
  // -Laplacian (5 points) and a 9-point spread of the source: the stencil
  // weights of the centre, edge and corner neighbours, each rank assembling
  // its own rows (test_common/workload/TpetraGrid.hpp).
  auto const K = hst::workload::tpetra_grid_2d<crs_type>(map, side, 4.0, -1.0, 0.0);
  auto const P = hst::workload::tpetra_grid_2d<crs_type>(map, side, 0.5, 0.1, 0.025);
  Source const source{side, radius, 0.02};

  // The source at step 0, the loads, and both loops' states.
  mv_type s(map, 1);
  {
    auto host = s.getLocalViewHost(Tpetra::Access::OverwriteAll);
    auto const mine = map->getNodeElementList();
    for (std::size_t i = 0; i < std::size_t(mine.size()); ++i)
      host(i, 0) = source.value(mine[i], 0);
  }
  mv_type s_old(s, Teuchos::Copy);
  mv_type b_classic(map, 1), b_hst(map, 1), Ku(map, 1);
  mv_type u_classic(map, 1), u_hst(map, 1);
  P->apply(s, b_hst); // HST keeps b_hst = P s from here on

  hst::tpetra::DeltaOperator<> const op(*P);
  auto arm = op.adaptive(Kokkos::View<GO *, memory_space>("expected", 0), 1);

  std::vector<GO> changed;
  Kokkos::View<GO *, memory_space> gids("gids", map->getNodeNumElements());
  Kokkos::View<SC **, Kokkos::LayoutLeft, memory_space> ds("ds",
                                                           map->getNodeNumElements(), 1);
  double t_classic = 0, t_hst = 0;
  long changed_total = 0;
  for (int t = 1; t <= steps; ++t)
  {
    // The caller's own update of the source: only the cells it changes.
    changed.clear();
    {
      auto host = s.getLocalViewHost(Tpetra::Access::ReadWrite);
      source.for_each_candidate(t, [&](GO g) {
        auto const lid = map->getLocalElement(g);
        if (lid == Teuchos::OrdinalTraits<int>::invalid())
          return;
        double const v = source.value(g, t);
        if (v != host(std::size_t(lid), 0))
        {
          host(std::size_t(lid), 0) = v;
          changed.push_back(g);
        }
      });
    }
    changed_total += long(changed.size());

    // Classic: the load from the whole source, then the explicit step.
    double start = now();
    P->apply(s, b_classic);
    t_classic += now() - start;
    K->apply(u_classic, Ku);
    u_classic.update(-dt, Ku, dt, b_classic, 1.0);

    // HST: the load follows the changed cells only.
    start = now();
    auto const k = std::make_pair(std::size_t(0), changed.size());
    auto const step_gids = Kokkos::subview(gids, k);
    auto const step_ds = Kokkos::subview(ds, k, Kokkos::ALL);
    {
      auto host = Kokkos::create_mirror_view(step_gids);
      std::copy(changed.begin(), changed.end(), host.data());
      Kokkos::deep_copy(step_gids, host);
    }
    hst::tpetra::make_delta(step_gids, s_old, s, step_ds);
    arm.apply_cols(step_gids, step_ds, b_hst);
    hst::tpetra::copy_rows(step_gids, s, s_old);
    Kokkos::fence();
    t_hst += now() - start;
    K->apply(u_hst, Ku);
    u_hst.update(-dt, Ku, dt, b_hst, 1.0);
  }

  double const load_error = relative_difference(b_hst, b_classic);
  double const state_error = relative_difference(u_hst, u_classic);
  double times[2] = {t_classic, t_hst};
  MPI_Allreduce(MPI_IN_PLACE, times, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  long changed_all = changed_total;
  MPI_Allreduce(MPI_IN_PLACE, &changed_all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  bool const ok = load_error <= 1e-12 && state_error <= 1e-12;
  if (rank == 0)
  {
    std::printf("tpetra_heat: %lld x %lld grid (%lld cells), %d ranks, %d steps, "
                "source radius %.1f\n",
                (long long)side, (long long)side, (long long)(side * side),
                comm->getSize(), steps, radius);
    std::printf("  changed source cells per step (all ranks): %.1f of %lld\n",
                double(changed_all) / steps, (long long)(side * side));
    std::printf("  load b = P s, per step (slowest rank): P.apply %.2f us, HST %.2f us "
                "(make_delta + apply_cols + copy_rows), %.1fx\n",
                1e6 * times[0] / steps, 1e6 * times[1] / steps, times[0] / times[1]);
    std::printf("  adaptive session chose %s\n",
                hst::to_string(arm.inner().report().active));
    std::printf("  relative difference HST vs classic: load %.3g, state %.3g: %s\n",
                load_error, state_error, ok ? "OK" : "WRONG");
  }
  return ok ? 0 : 1;
}

} // namespace

int main(int argc, char *argv[])
{
  MPI_Init(&argc, &argv);
  int status = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    GO side = 200;
    int steps = 300;
    double radius = 6.0;
    for (int i = 1; i + 1 < argc; i += 2)
    {
      std::string const flag = argv[i];
      if (flag == "--side")
        side = GO(std::atoll(argv[i + 1]));
      else if (flag == "--steps")
        steps = std::atoi(argv[i + 1]);
      else if (flag == "--radius")
        radius = std::atof(argv[i + 1]);
      else
      {
        std::fprintf(stderr, "tpetra_heat: unknown option %s\n", argv[i]);
        status = 2;
      }
    }
    if (status == 0)
      status = heat(side, steps, radius);
  }
  MPI_Finalize();
  return status;
}
