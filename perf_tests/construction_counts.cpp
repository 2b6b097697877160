// construction_counts: the instructions to make an adaptive session (mode 0),
// or to make it and run its initial probe (mode 1: 12 steps on the frozen
// expected set, every arm made and run), on an nx x nx 5-point grid with the
// same 8 x 8 patch of expected columns at every nx (issue 14). Collected
// only around that region, under callgrind:
//   valgrind --tool=callgrind --collect-atstart=no construction_counts NX MODE
// and read "Collected". Equal counts at two nx: nothing of the operator's
// size is visited.

#include <hst/HST.hpp>

#include <valgrind/callgrind.h>
#include <workload/Generators.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int main(int argc, char *argv[])
{
  if (argc < 3)
  {
    std::fprintf(stderr, "usage: construction_counts NX MODE (NX >= 40, MODE 0 or 1)\n");
    return 2;
  }
  int const nx = std::atoi(argv[1]);
  int const mode = std::atoi(argv[2]);
  if (nx < 40 || (mode != 0 && mode != 1))
  {
    std::fprintf(stderr, "construction_counts: argument 'NX' must be >= 40 and 'MODE' 0 "
                         "or 1\n");
    return 2;
  }
  Kokkos::ScopeGuard guard(argc, argv);
  using Space = Kokkos::DefaultHostExecutionSpace;
  using Matrix = KokkosSparse::CrsMatrix<double, int, Space, void, int>;
  auto const A =
      hst::workload::to_crs<Matrix>(hst::workload::grid_2d<double, int>(nx, nx));
  hst::Operator op(A);
  std::vector<int> patch;
  for (int y = 20; y < 28; ++y)
    for (int x = 20; x < 28; ++x)
      patch.push_back(y * nx + x);
  Kokkos::View<int *, Kokkos::HostSpace> cols("hst::construction_counts::cols",
                                              patch.size());
  for (std::size_t i = 0; i < patch.size(); ++i)
    cols(i) = patch[i];
  Kokkos::View<double **, Kokkos::LayoutLeft, Kokkos::HostSpace> dx(
      "hst::construction_counts::dx", patch.size(), 8);
  Kokkos::deep_copy(dx, 1e-3);
  Kokkos::View<double **, Kokkos::LayoutLeft, Kokkos::HostSpace> y(
      "hst::construction_counts::y", std::size_t(nx) * std::size_t(nx), 8);
  CALLGRIND_TOGGLE_COLLECT;
  {
    auto session = op.adaptive(cols, 8);
    if (mode == 1)
      for (int step = 0; step < 12; ++step)
        session.apply_cols(cols, dx, y);
  }
  CALLGRIND_TOGGLE_COLLECT;
  // The probe's 12 steps wrote y (mode 1): a run that wrote nothing fails.
  double const got = y(std::size_t(patch[0]), 0);
  std::printf("nx %d mode %d: y(%d, 0) = %g\n", nx, mode, patch[0], got);
  return mode == 1 && got == 0.0 ? 1 : 0;
}
