// The distributed layer in miniature: a 2D grid split over the MPI ranks by
// row blocks, a drifting changed set, every rank passing the changes of the
// columns it owns to the adaptive session, and the result checked against a
// full recompute of A x on the gathered operator. Exits non-zero on a wrong
// answer (on any rank).
//
//   mpiexec -n 2 distributed_demo [--side N] [--steps S]

#include <hst/HST.hpp>

#include <KokkosSparse_spmv.hpp>
#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <workload/Generators.hpp>
#include <workload/Workload.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

namespace
{

using Scalar = double;
using Ordinal = int;
using ExecutionSpace = Kokkos::DefaultExecutionSpace;
using MemorySpace = ExecutionSpace::memory_space;
using Matrix = KokkosSparse::CrsMatrix<Scalar, Ordinal, ExecutionSpace>;
using MultiVector = Kokkos::View<Scalar **, Kokkos::LayoutLeft, MemorySpace>;
int const width = 8;

int demo(int side, int steps)
{
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  // Every rank generates the same grid and keeps its rows (global column
  // ids); a real code would assemble only its own rows.
  auto const grid = hst::workload::grid_2d<Scalar, Ordinal>(side, side);
  auto const rows = hst::BlockPartition::uniform(grid.n_rows, MPI_COMM_WORLD);
  auto const cols = hst::BlockPartition::uniform(grid.n_cols, MPI_COMM_WORLD);
  hst::workload::Triplets<Scalar, Ordinal> mine(Ordinal(rows.local_size(rank)),
                                                grid.n_cols);
  for (auto r = rows.begin(rank); r < rows.end(rank); ++r)
    mine.rows[std::size_t(r - rows.begin(rank))] = grid.rows[std::size_t(r)];
  auto const A_local = hst::workload::to_crs<Matrix>(mine);

  hst::DistributedOperator<Scalar, Ordinal, MemorySpace> op(MPI_COMM_WORLD, A_local, rows,
                                                            cols);

  // The changed sets: one global drifting workload, each rank taking the
  // changes of the columns it owns.
  auto const A = hst::workload::to_crs<Matrix>(grid);
  hst::workload::WorkloadOptions w;
  w.churn = 0.02;
  w.width = width;
  hst::workload::Workload<Scalar, Ordinal> workload(A, w);
  auto owned = [&](std::vector<Scalar> *dx_rows) {
    std::vector<Ordinal> ids;
    for (std::size_t i = 0; i < workload.columns().size(); ++i)
    {
      auto const c = workload.columns()[i];
      if (c >= cols.begin(rank) && c < cols.end(rank))
      {
        ids.push_back(c);
        if (dx_rows)
          dx_rows->insert(dx_rows->end(),
                          workload.dx().begin() + std::ptrdiff_t(i * width),
                          workload.dx().begin() + std::ptrdiff_t((i + 1) * width));
      }
    }
    return ids;
  };
  auto const expected = owned(nullptr);
  Kokkos::View<Ordinal *, Kokkos::HostSpace> expected_view(
      const_cast<Ordinal *>(expected.data()), expected.size());
  auto session = op.adaptive(expected_view, width);

  MultiVector y("y", std::size_t(rows.local_size(rank)), width);
  std::vector<Scalar> x(std::size_t(grid.n_cols) * width,
                        0.0); // every rank: the sum of dx
  for (int step = 0; step < steps; ++step, workload.advance())
  {
    std::vector<Scalar> dx_rows;
    auto const ids = owned(&dx_rows);
    Kokkos::View<Ordinal *, MemorySpace> cols_view("cols", ids.size());
    MultiVector dx("dx", ids.size(), width);
    auto cols_host = Kokkos::create_mirror_view(cols_view);
    auto dx_host = Kokkos::create_mirror_view(dx);
    for (std::size_t i = 0; i < ids.size(); ++i)
    {
      cols_host(i) = ids[i];
      for (int b = 0; b < width; ++b)
        dx_host(i, b) = dx_rows[i * width + b];
    }
    Kokkos::deep_copy(cols_view, cols_host);
    Kokkos::deep_copy(dx, dx_host);
    session.apply_cols(cols_view, dx, y); // collective: y += A[my rows, S] dx
    for (std::size_t i = 0; i < workload.columns().size(); ++i)
      for (int b = 0; b < width; ++b)
        x[std::size_t(workload.columns()[i]) * width + b] += workload.dx()[i * width + b];
  }

  // Check: y must equal this rank's rows of A x.
  MultiVector x_view("x", std::size_t(grid.n_cols), width),
      y_full("y_full", grid.n_rows, width);
  auto x_host = Kokkos::create_mirror_view(x_view);
  for (Ordinal c = 0; c < grid.n_cols; ++c)
    for (int b = 0; b < width; ++b)
      x_host(c, b) = x[std::size_t(c) * width + b];
  Kokkos::deep_copy(x_view, x_host);
  KokkosSparse::spmv("N", 1.0, A, x_view, 0.0, y_full);
  auto const full = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y_full);
  auto const mine_y = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y);
  double diff = 0, scale = 0;
  for (std::size_t r = 0; r < mine_y.extent(0); ++r)
    for (int b = 0; b < width; ++b)
    {
      diff = std::max(diff, std::abs(mine_y(r, b) - full(rows.begin(rank) + r, b)));
      scale = std::max(scale, std::abs(full(rows.begin(rank) + r, b)));
    }
  MPI_Allreduce(MPI_IN_PLACE, &diff, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &scale, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  double const error = scale > 0 ? diff / scale : diff;
  if (rank == 0)
  {
    std::cout << "distributed_demo: " << size << " rank(s), " << grid.n_rows << " rows, "
              << steps << " steps, B = " << width << "; rank 0 sends to "
              << op.send_neighbours().size() << " rank(s), " << op.num_ghost_cols()
              << " ghost columns\n"
              << session.report() << "max relative error vs full recompute: " << error
              << '\n';
  }
  return error <= 1e-12 ? 0 : 1;
}

} // namespace

int main(int argc, char *argv[])
{
  MPI_Init(&argc, &argv);
  int status = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    int side = 100, steps = 100;
    for (int i = 1; i + 1 < argc; i += 2)
    {
      std::string const flag = argv[i];
      if (flag == "--side")
        side = std::atoi(argv[i + 1]);
      else if (flag == "--steps")
        steps = std::atoi(argv[i + 1]);
      else
      {
        std::fprintf(stderr, "distributed_demo: unknown option %s\n", argv[i]);
        status = 2;
      }
    }
    if (status == 0)
      status = demo(side, steps);
  }
  MPI_Finalize();
  return status;
}
