// HST's main job in miniature: a drifting changed set on a 2D mesh, applied
// with each arm and with a full recompute (KokkosSparse::spmv), timed on the
// same inputs, answers checked. Exits non-zero on a wrong answer.
//
//   delta_apply_demo [--rows N] [--steps S] [--churn RHO] [--B WIDTH]

#include <hst/HST.hpp>

#include <KokkosSparse_spmv.hpp>
#include <Kokkos_Core.hpp>
#include <Kokkos_Timer.hpp>

#include <workload/Check.hpp>
#include <workload/Generators.hpp>
#include <workload/Workload.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace
{

using Scalar = double;
using Ordinal = int;
using ExecutionSpace = Kokkos::DefaultExecutionSpace;
using MemorySpace = ExecutionSpace::memory_space;
using Matrix = KokkosSparse::CrsMatrix<Scalar, Ordinal, ExecutionSpace>;
using MultiVector = Kokkos::View<Scalar **, Kokkos::LayoutLeft, MemorySpace>;

struct Arguments
{
  long rows = 100000;
  int steps = 200;
  double churn = 0.01;
  int width = 8;
};

Arguments parse(int argc, char *argv[])
{
  Arguments a;
  for (int i = 1; i + 1 < argc; i += 2)
  {
    std::string const flag = argv[i];
    char const *value = argv[i + 1];
    if (flag == "--rows")
      a.rows = std::atol(value);
    else if (flag == "--steps")
      a.steps = std::atoi(value);
    else if (flag == "--churn")
      a.churn = std::atof(value);
    else if (flag == "--B")
      a.width = std::atoi(value);
    else
    {
      std::fprintf(stderr, "delta_apply_demo: unknown option %s\n", argv[i]);
      std::exit(2);
    }
  }
  if (a.rows < 4 || a.steps < 1 || a.width < 1)
  {
    std::fprintf(stderr, "delta_apply_demo: need --rows >= 4, --steps >= 1, --B >= 1\n");
    std::exit(2);
  }
  return a;
}

int run(Arguments const &args)
{
  ExecutionSpace space;
  auto const side = Ordinal(std::lround(std::sqrt(double(args.rows))));
  Kokkos::Timer timer;
  auto const A =
      hst::workload::to_crs<Matrix>(hst::workload::grid_2d<Scalar, Ordinal>(side, side));
  Ordinal const n = A.numRows();

  // The whole workload, staged on the device before any timing.
  hst::workload::WorkloadOptions w;
  w.churn = args.churn;
  w.width = args.width;
  hst::workload::Workload<Scalar, Ordinal> workload(A, w);
  auto const k = workload.columns().size();
  Kokkos::View<Ordinal **, Kokkos::LayoutRight, MemorySpace> cols("cols", args.steps, k);
  Kokkos::View<Scalar ***, Kokkos::LayoutRight, MemorySpace> dx("dx", args.steps, k,
                                                                args.width);
  {
    auto cols_host = Kokkos::create_mirror_view(cols);
    auto dx_host = Kokkos::create_mirror_view(dx);
    for (int s = 0; s < args.steps; ++s, workload.advance())
      for (std::size_t i = 0; i < k; ++i)
      {
        cols_host(s, i) = workload.columns()[i];
        for (int b = 0; b < args.width; ++b)
          dx_host(s, i, b) = workload.dx()[i * args.width + b];
      }
    Kokkos::deep_copy(cols, cols_host);
    Kokkos::deep_copy(dx, dx_host);
  }
  auto step_cols = [&](int s) { return Kokkos::subview(cols, s, Kokkos::ALL); };
  auto step_dx = [&](int s) { return Kokkos::subview(dx, s, Kokkos::ALL, Kokkos::ALL); };

  timer.reset();
  hst::Operator op(space, A);
  double const prepare_operator = timer.seconds();

  // Full recompute: x += dx at the changed columns, then y = A x.
  MultiVector x("x", A.numCols(), args.width), y_full("y_full", n, args.width);
  space.fence();
  timer.reset();
  for (int s = 0; s < args.steps; ++s)
  {
    auto const c = step_cols(s);
    auto const d = step_dx(s);
    int const width = args.width;
    Kokkos::parallel_for(
        "demo::accumulate_x", Kokkos::RangePolicy<ExecutionSpace>(space, 0, k),
        KOKKOS_LAMBDA(int i) {
          for (int b = 0; b < width; ++b)
            x(c(i), b) += d(i, b);
        });
    KokkosSparse::spmv("N", 1.0, A, x, 0.0, y_full);
  }
  Kokkos::fence();
  double const full = timer.seconds() / args.steps;

  std::printf("HST delta apply demo: 2D 5-point mesh, %d rows, %zu nonzeros, "
              "drift, k = %zu, churn %.3g, B = %d, %d steps\n",
              n, std::size_t(A.nnz()), k, args.churn, args.width, args.steps);
  std::printf("tile index: %lld tiles, %.1f entries per tile, built in %.1f ms\n\n",
              (long long)op.tile_stats().tiles, op.tile_stats().mean_tile_nnz,
              1e3 * prepare_operator);
  std::printf("%-34s %12s %14s %12s\n", "arm", "us/step", "x full (spmv)", "rel. error");
  std::printf("%-34s %12.2f %14s %12s\n", "full recompute (KokkosSparse::spmv)",
              1e6 * full, "1.00", "-");

  bool ok = true;
  auto report = [&](char const *name, auto &&arm, double prepare) {
    MultiVector y("y", n, args.width);
    space.fence();
    timer.reset();
    for (int s = 0; s < args.steps; ++s)
      arm.apply_cols(space, step_cols(s), step_dx(s), y);
    space.fence();
    double const per_step = timer.seconds() / args.steps;
    double const error = hst::workload::relative_difference(y, y_full);
    bool const right = error <= 1e-12;
    ok = ok && right;
    std::printf("%-34s %12.2f %14.1f %12.1e%s", name, 1e6 * per_step, full / per_step,
                error, right ? "" : "  WRONG");
    if (prepare > 0)
      std::printf("   (schedule compiled in %.1f us)", 1e6 * prepare);
    std::printf("\n");
  };
  report("direct scatter", op.scatter(args.width), 0);
  report("exact set (compiled row list)", op.baseline(args.width), 0);
  timer.reset();
  auto session = op.session(space, step_cols(0), args.width);
  double const prepare_session = timer.seconds();
  report("scheduled (tiles)", session, prepare_session);
  std::printf("\nscheduled arm: %lld tiles compiled, %lld retired, %lld re-plans\n",
              (long long)session.stats().tiles_compiled,
              (long long)session.stats().tiles_retired,
              (long long)session.stats().replans);
  std::printf("%s\n", ok ? "all arms match the full recompute"
                         : "ERROR: an arm disagrees with the full recompute");
  return ok ? 0 : 1;
}

} // namespace

int main(int argc, char *argv[])
{
  Kokkos::ScopeGuard kokkos(argc, argv);
  return run(parse(argc, argv));
}
