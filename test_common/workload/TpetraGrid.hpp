#pragma once
// Test, benchmark and example fixture: a stencil on a 2D grid as a
// Tpetra::CrsMatrix, each rank assembling only the rows its map owns (no
// global copy). Used by examples/tpetra_heat.cpp and perf_tests/bench_tpetra.cpp.

#include <Teuchos_ArrayView.hpp>
#include <Teuchos_RCP.hpp>
#include <Tpetra_CrsMatrix.hpp>

#include <vector>

namespace hst::workload
{

/// The stencil on a side x side grid (row id i * side + j) with zero
/// (Dirichlet) boundaries: weight `centre` on the diagonal, `edge` for each
/// neighbour sharing an edge, `corner` for each diagonal neighbour; zero
/// weights are not stored (corner = 0: the 5-point pattern of grid_2d).
/// The rows `map` owns on this rank, fill-complete.
template <class Crs>
Teuchos::RCP<Crs>
tpetra_grid_2d(Teuchos::RCP<typename Crs::map_type const> const &map,
               typename Crs::global_ordinal_type side, typename Crs::scalar_type centre,
               typename Crs::scalar_type edge, typename Crs::scalar_type corner)
{
  using GO = typename Crs::global_ordinal_type;
  using SC = typename Crs::scalar_type;
  auto A = Teuchos::rcp(new Crs(map, 9));
  std::vector<GO> cols;
  std::vector<SC> vals;
  for (GO g : map->getNodeElementList())
  {
    GO const i = g / side, j = g % side;
    cols.clear();
    vals.clear();
    for (GO di = -1; di <= 1; ++di)
      for (GO dj = -1; dj <= 1; ++dj)
      {
        GO const ii = i + di, jj = j + dj;
        SC const w = di == 0 && dj == 0 ? centre : (di == 0 || dj == 0 ? edge : corner);
        if (ii < 0 || jj < 0 || ii >= side || jj >= side || w == SC(0))
          continue;
        cols.push_back(ii * side + jj);
        vals.push_back(w);
      }
    A->insertGlobalValues(g, Teuchos::ArrayView<GO const>(cols.data(), cols.size()),
                          Teuchos::ArrayView<SC const>(vals.data(), vals.size()));
  }
  A->fillComplete();
  return A;
}

} // namespace hst::workload
