#pragma once
// The named, deterministic operator catalogue used by the sweep, the ladder and
// the tests: every operator is generated in-process from fixed parameters and
// seeds, so a name always means the same matrix.

#include <workload/Generators.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace hst::workload
{

template <class Scalar, class Ordinal>
struct SuiteOperator
{
  std::string name;   ///< unique, [a-z0-9_] only, e.g. "grid2d_5pt_316x316_shuffled"
  std::string family; ///< e.g. "grid2d_5pt", "mesh_geometric", "road", "rmat"
  std::int64_t rows;  ///< rows of the operator, known without building it
  bool shuffled;      ///< rows and columns relabelled by a random permutation
  /// Deterministic; rows come sorted by column, one entry per column, with
  /// the diagonal present.
  std::function<Triplets<Scalar, Ordinal>()> build;
};

enum class SuiteScale
{
  quick, ///< 10 operators of at most ~1e5 rows, 9 families, one shuffled
  full,  ///< 31 operators, 10 families, 1e4 to 1e6 rows, 5 shuffled
};

namespace detail
{

template <class Scalar, class Ordinal>
struct SuiteFactory
{
  using Op = SuiteOperator<Scalar, Ordinal>;
  using T = Triplets<Scalar, Ordinal>;

  static std::string str(std::int64_t v) { return std::to_string(v); }

  static Op grid2d(int points, Ordinal nx, Ordinal ny)
  {
    std::string const family = "grid2d_" + str(points) + "pt";
    return {family + "_" + str(nx) + "x" + str(ny), family, std::int64_t(nx) * ny, false,
            [=] { return grid_2d<Scalar, Ordinal>(nx, ny, points); }};
  }
  static Op grid3d(int points, Ordinal n)
  {
    std::string const family = "grid3d_" + str(points) + "pt";
    return {family + "_" + str(n) + "x" + str(n) + "x" + str(n), family,
            std::int64_t(n) * n * n, false,
            [=] { return grid_3d<Scalar, Ordinal>(n, points); }};
  }
  // Mean degree 7 (off-diagonal) away from the boundary.
  static Op mesh(Ordinal n, std::uint64_t seed)
  {
    return {"mesh_geometric_" + str(n), "mesh_geometric", n, false,
            [=] { return geometric_mesh<Scalar, Ordinal>(n, 7.0, seed); }};
  }
  static Op circuit_op(Ordinal n, std::uint64_t seed)
  {
    return {"circuit_" + str(n), "circuit", n, false,
            [=] { return circuit<Scalar, Ordinal>(n, seed); }};
  }
  static Op road_op(Ordinal nx, Ordinal ny, std::uint64_t seed)
  {
    return {"road_" + str(nx) + "x" + str(ny), "road", std::int64_t(nx) * ny, false,
            [=] { return road<Scalar, Ordinal>(nx, ny, seed); }};
  }
  // Edge factor 8, Graph500 probabilities.
  static Op rmat_op(int scale, std::uint64_t seed)
  {
    return {"rmat_s" + str(scale), "rmat", std::int64_t(1) << scale, false,
            [=] { return rmat<Scalar, Ordinal>(scale, 8, seed); }};
  }
  static Op banded_op(Ordinal n, int half_bandwidth)
  {
    return {"banded_" + str(n) + "_hw" + str(half_bandwidth), "banded", n, false,
            [=] { return banded<Scalar, Ordinal>(n, half_bandwidth); }};
  }
  // dofs fields on the nodes of a 2D 9-point grid (bilinear quadrilaterals).
  static Op multiphysics_grid(Ordinal nx, Ordinal ny, int dofs)
  {
    return {"multiphysics_grid2d_" + str(nx) + "x" + str(ny) + "_" + str(dofs) + "dof",
            "multiphysics", std::int64_t(nx) * ny * dofs, false,
            [=] { return blocked(grid_2d<Scalar, Ordinal>(nx, ny, 9), dofs); }};
  }
  // dofs fields on the nodes of the geometric mesh.
  static Op multiphysics_mesh(Ordinal nodes, int dofs, std::uint64_t seed)
  {
    return {"multiphysics_mesh_" + str(nodes) + "_" + str(dofs) + "dof", "multiphysics",
            std::int64_t(nodes) * dofs, false, [=] {
              return blocked(geometric_mesh<Scalar, Ordinal>(nodes, 7.0, seed), dofs);
            }};
  }
  // The same operator with rows and columns relabelled by one permutation,
  // rows sorted again (shuffled() leaves them in relabelled order).
  static Op shuffle(Op op, std::uint64_t seed)
  {
    op.name += "_shuffled";
    op.shuffled = true;
    op.build = [inner = std::move(op.build), seed] {
      auto t = shuffled(inner(), seed);
      for (auto &row : t.rows)
        std::sort(row.begin(), row.end(),
                  [](auto const &a, auto const &b) { return a.first < b.first; });
      return t;
    };
    return op;
  }

  static std::vector<Op> full()
  {
    return {
        grid2d(5, 100, 100),
        grid2d(5, 316, 316),
        shuffle(grid2d(5, 316, 316), 501),
        grid2d(5, 1000, 1000),
        grid2d(9, 173, 173),
        grid2d(9, 316, 316),
        shuffle(grid2d(9, 316, 316), 502),
        grid3d(7, 32),
        grid3d(7, 46),
        shuffle(grid3d(7, 46), 503),
        grid3d(27, 30),
        grid3d(27, 46),
        mesh(10000, 11),
        mesh(30000, 12),
        mesh(100000, 13),
        shuffle(mesh(100000, 13), 504),
        mesh(1000000, 14),
        circuit_op(30000, 21),
        circuit_op(100000, 22),
        circuit_op(300000, 23),
        road_op(173, 173, 31),
        road_op(316, 316, 32),
        shuffle(road_op(316, 316, 32), 505),
        road_op(1000, 1000, 33),
        rmat_op(15, 41),
        rmat_op(17, 42),
        banded_op(30000, 5),
        banded_op(100000, 12),
        banded_op(100000, 30),
        multiphysics_grid(80, 80, 3),
        multiphysics_mesh(25000, 4, 51),
    };
  }

  static std::vector<std::string> quick_names()
  {
    return {"grid2d_5pt_316x316",   "grid2d_5pt_316x316_shuffled",
            "grid2d_9pt_173x173",   "grid3d_7pt_32x32x32",
            "mesh_geometric_30000", "circuit_30000",
            "road_173x173",         "rmat_s15",
            "banded_30000_hw5",     "multiphysics_grid2d_80x80_3dof"};
  }

  static std::vector<Op> growth()
  {
    return {grid2d(5, 100, 100), grid2d(5, 173, 173), grid2d(5, 316, 316),
            grid2d(5, 548, 548), grid2d(5, 1000, 1000)};
  }
};

} // namespace detail

/// The operator catalogue. `full`: 31 operators from 10 families, 1e4 to 1e6
/// rows, each under 9M nonzeros, 5 of them shuffled variants of a grid, mesh
/// or road operator also in the list. `quick`: the 10 of those that a short
/// sweep uses (at most ~1e5 rows, 9 families, one shuffled), in the same order.
/// Building an operator (`build()`) is the caller's choice and cost.
template <class Scalar = double, class Ordinal = int>
std::vector<SuiteOperator<Scalar, Ordinal>> operator_suite(SuiteScale scale)
{
  using Factory = detail::SuiteFactory<Scalar, Ordinal>;
  auto all = Factory::full();
  if (scale == SuiteScale::full)
    return all;
  auto const names = Factory::quick_names();
  std::vector<SuiteOperator<Scalar, Ordinal>> quick;
  for (auto &op : all)
    if (std::find(names.begin(), names.end(), op.name) != names.end())
      quick.push_back(std::move(op));
  return quick;
}

/// One family (2D 5-point grid, natural numbering) at about 1e4, 3e4, 1e5, 3e5
/// and 1e6 rows, for the cost-growth measurement at fixed k.
template <class Scalar = double, class Ordinal = int>
std::vector<SuiteOperator<Scalar, Ordinal>> growth_series()
{
  return detail::SuiteFactory<Scalar, Ordinal>::growth();
}

/// The operator called `name` in operator_suite(SuiteScale::full) or
/// growth_series(). Throws std::invalid_argument naming the unknown name and
/// listing the valid ones.
template <class Scalar = double, class Ordinal = int>
SuiteOperator<Scalar, Ordinal> suite_operator(std::string const &name)
{
  auto all = operator_suite<Scalar, Ordinal>(SuiteScale::full);
  for (auto &op : growth_series<Scalar, Ordinal>())
    all.push_back(std::move(op));
  std::vector<std::string> valid;
  for (auto &op : all)
  {
    if (op.name == name)
      return std::move(op);
    if (std::find(valid.begin(), valid.end(), op.name) == valid.end())
      valid.push_back(op.name);
  }
  std::string list;
  for (auto const &v : valid)
    list += (list.empty() ? "" : ", ") + v;
  throw std::invalid_argument("hst::workload::suite_operator: argument 'name' = '" +
                              name + "' is not a suite operator; valid names: " + list);
}

} // namespace hst::workload
