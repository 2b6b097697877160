#pragma once
// Deterministic test and benchmark operators, built on the host and returned
// as KokkosSparse::CrsMatrix in MemorySpace.

#include <KokkosSparse_CrsMatrix.hpp>
#include <Kokkos_Core.hpp>

#include <workload/Random.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace hst::workload
{

// A matrix being assembled on the host, one row at a time.
template <class Scalar, class Ordinal>
struct Triplets
{
  Ordinal n_rows = 0;
  Ordinal n_cols = 0;
  std::vector<std::vector<std::pair<Ordinal, Scalar>>> rows;

  Triplets(Ordinal rows_, Ordinal cols_)
      : n_rows(rows_)
      , n_cols(cols_)
      , rows(rows_)
  {}
  void add(Ordinal r, Ordinal c, Scalar v) { rows[r].emplace_back(c, v); }
};

template <class Matrix, class Scalar, class Ordinal>
Matrix to_crs(Triplets<Scalar, Ordinal> t, char const *label = "hst::workload::A")
{
  using size_type = typename Matrix::size_type;
  using memory_space = typename Matrix::memory_space;
  std::size_t nnz = 0;
  for (auto &row : t.rows)
  {
    std::sort(row.begin(), row.end(),
              [](auto const &a, auto const &b) { return a.first < b.first; });
    nnz += row.size();
  }
  Kokkos::View<size_type *, Kokkos::HostSpace> row_map("hst::workload::row_map",
                                                       std::size_t(t.n_rows) + 1);
  Kokkos::View<Ordinal *, Kokkos::HostSpace> entries("hst::workload::entries", nnz);
  Kokkos::View<Scalar *, Kokkos::HostSpace> values("hst::workload::values", nnz);
  std::size_t p = 0;
  for (Ordinal r = 0; r < t.n_rows; ++r)
  {
    for (auto const &[c, v] : t.rows[r])
    {
      entries(p) = c;
      values(p) = v;
      ++p;
    }
    row_map(r + 1) = size_type(p);
  }
  auto d_row_map = Kokkos::create_mirror_view_and_copy(memory_space{}, row_map);
  auto d_entries = Kokkos::create_mirror_view_and_copy(memory_space{}, entries);
  auto d_values = Kokkos::create_mirror_view_and_copy(memory_space{}, values);
  return Matrix(label, t.n_rows, t.n_cols, Ordinal(nnz), d_values, d_row_map, d_entries);
}

// Values that make every entry distinct (so a misplaced entry shows) and keep
// sums well conditioned.
inline double entry_value(std::int64_t r, std::int64_t c)
{
  return r == c ? 4.0 + 1e-3 * double(r % 97) : -1.0 - 1e-3 * double((r + 3 * c) % 89);
}

// 2D grid nx x ny, 5-point (points = 5) or 9-point (points = 9) stencil.
template <class Scalar, class Ordinal>
Triplets<Scalar, Ordinal> grid_2d(Ordinal nx, Ordinal ny, int points = 5)
{
  Triplets<Scalar, Ordinal> t(nx * ny, nx * ny);
  for (Ordinal y = 0; y < ny; ++y)
    for (Ordinal x = 0; x < nx; ++x)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
        {
          if (points == 5 && dx != 0 && dy != 0)
            continue;
          Ordinal const x2 = x + dx, y2 = y + dy;
          if (x2 < 0 || x2 >= nx || y2 < 0 || y2 >= ny)
            continue;
          Ordinal const r = y * nx + x, c = y2 * nx + x2;
          t.add(r, c, Scalar(entry_value(r, c)));
        }
  return t;
}

// 3D grid n x n x n, 7-point (points = 7) or 27-point (points = 27) stencil.
template <class Scalar, class Ordinal>
Triplets<Scalar, Ordinal> grid_3d(Ordinal n, int points = 7)
{
  Triplets<Scalar, Ordinal> t(n * n * n, n * n * n);
  for (Ordinal z = 0; z < n; ++z)
    for (Ordinal y = 0; y < n; ++y)
      for (Ordinal x = 0; x < n; ++x)
        for (int dz = -1; dz <= 1; ++dz)
          for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx)
            {
              if (points == 7 && std::abs(dx) + std::abs(dy) + std::abs(dz) > 1)
                continue;
              Ordinal const x2 = x + dx, y2 = y + dy, z2 = z + dz;
              if (x2 < 0 || x2 >= n || y2 < 0 || y2 >= n || z2 < 0 || z2 >= n)
                continue;
              Ordinal const r = (z * n + y) * n + x, c = (z2 * n + y2) * n + x2;
              t.add(r, c, Scalar(entry_value(r, c)));
            }
  return t;
}

// Power-law graph (Chung-Lu: endpoint i drawn with weight ~ (i + 1)^-0.6),
// symmetric, plus the diagonal.
template <class Scalar, class Ordinal>
Triplets<Scalar, Ordinal> power_law(Ordinal n, int mean_degree, std::uint64_t seed)
{
  Random random(seed);
  std::vector<double> cumulative(n);
  double sum = 0;
  for (Ordinal i = 0; i < n; ++i)
    cumulative[i] = (sum += std::pow(double(i + 1), -0.6));
  auto draw = [&] {
    double const u = random.uniform() * sum;
    return Ordinal(std::upper_bound(cumulative.begin(), cumulative.end(), u) -
                   cumulative.begin());
  };
  std::vector<std::vector<Ordinal>> neighbours(n);
  for (std::int64_t e = 0; e < std::int64_t(n) * mean_degree / 2; ++e)
  {
    Ordinal const a = std::min(draw(), n - 1), b = std::min(draw(), n - 1);
    if (a == b)
      continue;
    neighbours[a].push_back(b);
    neighbours[b].push_back(a);
  }
  Triplets<Scalar, Ordinal> t(n, n);
  for (Ordinal r = 0; r < n; ++r)
  {
    auto &list = neighbours[r];
    list.push_back(r);
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    for (Ordinal c : list)
      t.add(r, c, Scalar(entry_value(r, c)));
  }
  return t;
}

// Rectangular n_rows x n_cols band: row r couples to the columns around
// r * n_cols / n_rows.
template <class Scalar, class Ordinal>
Triplets<Scalar, Ordinal> rectangular_band(Ordinal n_rows, Ordinal n_cols, int half_width)
{
  Triplets<Scalar, Ordinal> t(n_rows, n_cols);
  for (Ordinal r = 0; r < n_rows; ++r)
  {
    auto const centre = Ordinal(std::int64_t(r) * n_cols / n_rows);
    for (Ordinal c = std::max<Ordinal>(0, centre - half_width);
         c <= std::min<Ordinal>(n_cols - 1, centre + half_width); ++c)
      t.add(r, c, Scalar(entry_value(r, c)));
  }
  return t;
}

// Drops every entry in the rows with r % row_stride == 0 and the columns with
// c % col_stride == 0, leaving empty rows and columns.
template <class Scalar, class Ordinal>
Triplets<Scalar, Ordinal> with_empty_lines(Triplets<Scalar, Ordinal> t,
                                           Ordinal row_stride, Ordinal col_stride)
{
  for (Ordinal r = 0; r < t.n_rows; ++r)
  {
    auto &row = t.rows[r];
    if (r % row_stride == 0)
      row.clear();
    row.erase(std::remove_if(row.begin(), row.end(),
                             [&](auto const &e) { return e.first % col_stride == 0; }),
              row.end());
  }
  return t;
}

// The same operator with rows and columns relabelled by one random
// permutation (a badly numbered mesh). Square operators only.
template <class Scalar, class Ordinal>
Triplets<Scalar, Ordinal> shuffled(Triplets<Scalar, Ordinal> const &t, std::uint64_t seed)
{
  std::vector<Ordinal> label(t.n_rows);
  std::iota(label.begin(), label.end(), Ordinal(0));
  Random random(seed);
  for (Ordinal i = t.n_rows - 1; i > 0; --i)
    std::swap(label[i], label[random.below(i + 1)]);
  Triplets<Scalar, Ordinal> out(t.n_rows, t.n_cols);
  for (Ordinal r = 0; r < t.n_rows; ++r)
    for (auto const &[c, v] : t.rows[r])
      out.add(label[r], label[c], v);
  return out;
}

namespace detail
{

// Sorts every row by column, adds the diagonal (r, r) where the row has
// none (square part only), keeps one entry per column and gives each entry
// the value entry_value(r, c). For generators that add raw couplings.
template <class Scalar, class Ordinal>
void assemble_rows(Triplets<Scalar, Ordinal> &t)
{
  for (Ordinal r = 0; r < t.n_rows; ++r)
  {
    auto &row = t.rows[r];
    if (r < t.n_cols)
      row.emplace_back(r, Scalar(0));
    std::sort(row.begin(), row.end(),
              [](auto const &a, auto const &b) { return a.first < b.first; });
    row.erase(
        std::unique(row.begin(), row.end(),
                    [](auto const &a, auto const &b) { return a.first == b.first; }),
        row.end());
    for (auto &[c, v] : row)
      v = Scalar(entry_value(r, c));
  }
}

// Node numbering of a deterministic pseudo-random bijection of [0, n):
// rank -> (rank * stride) mod n with gcd(stride, n) = 1, spreading ranks over
// the whole id range without storing a permutation.
inline std::int64_t coprime_stride(std::int64_t n)
{
  std::int64_t stride = std::max<std::int64_t>(1, std::int64_t(0.6180339887 * double(n)));
  while (std::gcd(stride, std::max<std::int64_t>(n, 1)) != 1)
    ++stride;
  return stride;
}

} // namespace detail

// Unstructured 2D mesh-like operator: a random geometric graph. n points
// uniform in the unit square; two points are coupled when closer than the
// radius that gives `mean_degree` neighbours away from the boundary
// (n pi r^2 = mean_degree). Structurally symmetric, with the diagonal. Points
// are numbered cell by cell (cells of side >= r, row-major), as a mesh
// generator numbers its nodes, so the natural numbering keeps couplings near
// the diagonal (bandwidth ~ 2 sqrt(n mean_degree / pi)). Neighbour search
// looks only at the 3 x 3 surrounding cells: O(n) work.
template <class Scalar, class Ordinal>
Triplets<Scalar, Ordinal> geometric_mesh(Ordinal n, double mean_degree,
                                         std::uint64_t seed)
{
  if (n < 0 || !(mean_degree > 0))
    throw std::invalid_argument(
        "hst::workload::geometric_mesh: arguments 'n' = " + std::to_string(n) +
        ", 'mean_degree' = " + std::to_string(mean_degree) + " must be >= 0 and > 0");
  double const pi = std::acos(-1.0);
  double const radius = std::sqrt(mean_degree / (pi * double(std::max<Ordinal>(n, 1))));
  // Cells per side; the cell side 1 / m is at least the radius.
  std::int64_t const m = std::clamp<std::int64_t>(std::int64_t(1.0 / radius), 1, 1 << 15);
  Random random(seed);
  std::vector<double> px(n), py(n);
  std::vector<std::int64_t> cell(n), start(std::size_t(m * m) + 1, 0);
  for (Ordinal i = 0; i < n; ++i)
  {
    px[i] = random.uniform(), py[i] = random.uniform();
    auto const cx = std::min<std::int64_t>(m - 1, std::int64_t(px[i] * double(m)));
    auto const cy = std::min<std::int64_t>(m - 1, std::int64_t(py[i] * double(m)));
    cell[i] = cy * m + cx;
    ++start[cell[i] + 1];
  }
  std::partial_sum(start.begin(), start.end(), start.begin());
  // New id = position in cell order (stable within a cell).
  std::vector<double> x(n), y(n);
  {
    auto next = start;
    for (Ordinal i = 0; i < n; ++i)
    {
      auto const id = next[cell[i]]++;
      x[id] = px[i], y[id] = py[i];
    }
  }
  double const r2 = radius * radius;
  Triplets<Scalar, Ordinal> t(n, n);
  for (std::int64_t cy = 0; cy < m; ++cy)
    for (std::int64_t cx = 0; cx < m; ++cx)
      for (auto i = start[cy * m + cx]; i < start[cy * m + cx + 1]; ++i)
      {
        auto &row = t.rows[i];
        row.reserve(std::size_t(mean_degree) + 4);
        // Cells in row-major order and ids within a cell ascending: the row
        // comes out sorted, the diagonal (distance 0) included.
        for (auto ny = std::max<std::int64_t>(cy - 1, 0); ny <= std::min(cy + 1, m - 1);
             ++ny)
          for (auto j = start[ny * m + std::max<std::int64_t>(cx - 1, 0)];
               j < start[ny * m + std::min(cx + 1, m - 1) + 1]; ++j)
          {
            double const dx = x[i] - x[j], dy = y[i] - y[j];
            if (dx * dx + dy * dy <= r2)
              row.emplace_back(Ordinal(j), Scalar(entry_value(i, j)));
          }
      }
  return t;
}

// Circuit-like operator: each node couples to 1-3 nodes at most 50 ids away
// (the reverse coupling present with probability 3/4, so the pattern is
// nearly but not exactly symmetric), and with probability 0.3 to one hub in
// both directions. Hubs are drawn with Zipf weights 1 / rank and spread over
// the id range, so a few rows and columns are very dense (power-law degrees,
// like supply nets). Off-diagonal values entry_value(r, c); the diagonal is
// 1 + the sum of the row's off-diagonal magnitudes (strictly dominant, as for
// a conductance matrix).
template <class Scalar, class Ordinal>
Triplets<Scalar, Ordinal> circuit(Ordinal n, std::uint64_t seed)
{
  if (n < 0)
    throw std::invalid_argument(
        "hst::workload::circuit: argument 'n' = " + std::to_string(n) + " must be >= 0");
  constexpr std::int64_t window = 50;
  Random random(seed);
  std::vector<double> cumulative(n);
  double sum = 0;
  for (Ordinal i = 0; i < n; ++i)
    cumulative[i] = (sum += 1.0 / double(i + 1));
  std::int64_t const stride = detail::coprime_stride(n);
  auto hub = [&] {
    auto const rank = std::min<std::int64_t>(
        n - 1,
        std::upper_bound(cumulative.begin(), cumulative.end(), random.uniform() * sum) -
            cumulative.begin());
    return Ordinal(rank * stride % n);
  };
  Triplets<Scalar, Ordinal> t(n, n);
  for (Ordinal i = 0; i < n; ++i)
  {
    auto const local = 1 + random.below(3);
    for (std::int64_t l = 0; l < local; ++l)
    {
      auto const offset = 1 + random.below(window);
      auto const j =
          random.below(2) ? std::int64_t(i) + offset : std::int64_t(i) - offset;
      bool const reverse = random.uniform() < 0.75;
      if (j < 0 || j >= n)
        continue;
      t.add(i, Ordinal(j), Scalar(0));
      if (reverse)
        t.add(Ordinal(j), i, Scalar(0));
    }
    if (random.uniform() < 0.3)
    {
      Ordinal const h = hub();
      if (h != i)
        t.add(i, h, Scalar(0)), t.add(h, i, Scalar(0));
    }
  }
  detail::assemble_rows(t);
  for (Ordinal r = 0; r < n; ++r)
  {
    double off = 0;
    for (auto const &[c, v] : t.rows[r])
      if (c != r)
        off += std::abs(double(v));
    for (auto &[c, v] : t.rows[r])
      if (c == r)
        v = Scalar(1.0 + off);
  }
  return t;
}

// Road-like operator: an nx x ny street grid (nx, ny >= 2) with streets
// removed and a few diagonal shortcuts, planar, every node of degree 2 to 4
// (diagonal not counted). Grid edges are visited in row-major order and each
// is deleted with probability 0.4 unless an endpoint would drop below degree
// 2; then each cell gets, with probability 0.05, one of its two diagonals if
// both endpoints are below degree 4 (one diagonal per cell keeps the graph
// planar). Structurally symmetric, with the diagonal, numbered row-major.
template <class Scalar, class Ordinal>
Triplets<Scalar, Ordinal> road(Ordinal nx, Ordinal ny, std::uint64_t seed)
{
  if (nx < 2 || ny < 2)
    throw std::invalid_argument(
        "hst::workload::road: arguments 'nx' = " + std::to_string(nx) +
        ", 'ny' = " + std::to_string(ny) + " must be >= 2");
  std::size_t const n = std::size_t(nx) * std::size_t(ny);
  auto id = [nx](std::int64_t x, std::int64_t y) { return std::size_t(y * nx + x); };
  // right[v]: edge v - (v + 1); down[v]: edge v - (v + nx); diagonal[v] of the
  // cell with top-left corner v: 1 = v - (v + nx + 1), 2 = (v + 1) - (v + nx).
  std::vector<unsigned char> right(n, 0), down(n, 0), diagonal(n, 0), degree(n, 0);
  for (Ordinal y = 0; y < ny; ++y)
    for (Ordinal x = 0; x < nx; ++x)
    {
      auto const v = id(x, y);
      right[v] = x + 1 < nx, down[v] = y + 1 < ny;
      degree[v] = (x > 0) + (x + 1 < nx) + (y > 0) + (y + 1 < ny);
    }
  Random random(seed);
  auto try_delete = [&](unsigned char &edge, std::size_t u, std::size_t v) {
    if (edge && random.uniform() < 0.4 && degree[u] > 2 && degree[v] > 2)
      edge = 0, --degree[u], --degree[v];
  };
  for (Ordinal y = 0; y < ny; ++y)
    for (Ordinal x = 0; x < nx; ++x)
    {
      auto const v = id(x, y);
      try_delete(right[v], v, v + 1);
      try_delete(down[v], v, v + std::size_t(nx));
    }
  for (Ordinal y = 0; y + 1 < ny; ++y)
    for (Ordinal x = 0; x + 1 < nx; ++x)
    {
      if (random.uniform() >= 0.05)
        continue;
      auto const v = id(x, y);
      bool const main = random.below(2) == 0;
      auto const a = main ? v : v + 1,
                 b = main ? v + std::size_t(nx) + 1 : v + std::size_t(nx);
      if (degree[a] < 4 && degree[b] < 4)
        diagonal[v] = main ? 1 : 2, ++degree[a], ++degree[b];
    }
  Triplets<Scalar, Ordinal> t(nx * ny, nx * ny);
  for (Ordinal y = 0; y < ny; ++y)
    for (Ordinal x = 0; x < nx; ++x)
    {
      auto const v = id(x, y);
      auto &row = t.rows[v];
      row.reserve(5);
      auto add = [&](bool present, std::size_t c) {
        if (present)
          row.emplace_back(Ordinal(c),
                           Scalar(entry_value(std::int64_t(v), std::int64_t(c))));
      };
      // Ascending column order.
      add(x > 0 && y > 0 && diagonal[id(x - 1, y - 1)] == 1, id(x - 1, y - 1));
      add(y > 0 && down[id(x, y - 1)], id(x, y - 1));
      add(x + 1 < nx && y > 0 && diagonal[id(x, y - 1)] == 2, id(x + 1, y - 1));
      add(x > 0 && right[id(x - 1, y)], id(x - 1, y));
      add(true, v);
      add(right[v], v + 1);
      add(x > 0 && y + 1 < ny && diagonal[id(x - 1, y)] == 2, id(x - 1, y + 1));
      add(down[v], id(x, y + 1));
      add(diagonal[v] == 1, id(x + 1, y + 1));
    }
  return t;
}

// R-MAT power-law graph on 2^scale nodes: edge_factor * 2^scale directed edges,
// each placed by descending `scale` levels of the quadrant recursion with
// probabilities a, b, c and d = 1 - a - b - c (Chakrabarti, Zhan, Faloutsos
// 2004; Graph500 uses 0.57, 0.19, 0.19, 0.05), plus the diagonal, duplicates
// removed. Unsymmetric; numbered as generated (hubs at low ids).
template <class Scalar, class Ordinal>
Triplets<Scalar, Ordinal> rmat(int scale, int edge_factor, std::uint64_t seed,
                               double a = 0.57, double b = 0.19, double c = 0.19)
{
  if (scale < 0 || scale > 30 || edge_factor < 0 || !(a >= 0 && b >= 0 && c >= 0) ||
      !(a + b + c <= 1))
    throw std::invalid_argument(
        "hst::workload::rmat: arguments 'scale' = " + std::to_string(scale) +
        ", 'edge_factor' = " + std::to_string(edge_factor) +
        " or probabilities out of range (0 <= scale <= 30, "
        "edge_factor >= 0, a, b, c >= 0, a + b + c <= 1)");
  auto const n = Ordinal(std::int64_t(1) << scale);
  // Thresholds on a 32-bit uniform: [0, ta) top-left, [ta, tb) top-right,
  // [tb, tc) bottom-left, [tc, 2^32) bottom-right.
  auto threshold = [](double p) {
    return std::uint64_t(std::ldexp(std::min(p, 1.0), 32));
  };
  std::uint64_t const ta = threshold(a), tb = threshold(a + b), tc = threshold(a + b + c);
  Random random(seed);
  Triplets<Scalar, Ordinal> t(n, n);
  std::int64_t const edges = std::int64_t(edge_factor) * n;
  for (std::int64_t e = 0; e < edges; ++e)
  {
    std::int64_t row = 0, col = 0;
    std::uint64_t bits = 0;
    for (int level = 0; level < scale; ++level)
    {
      if (level % 2 == 0)
        bits = random.next();
      std::uint64_t const u = level % 2 == 0 ? bits >> 32 : bits & 0xffffffffULL;
      std::int64_t const bit = std::int64_t(1) << (scale - 1 - level);
      if (u >= tb)
        row |= bit;
      if ((u >= ta && u < tb) || u >= tc)
        col |= bit;
    }
    t.add(Ordinal(row), Ordinal(col), Scalar(0));
  }
  detail::assemble_rows(t);
  return t;
}

// Banded n x n operator: every entry with |r - c| <= half_bandwidth
// (2 half_bandwidth + 1 diagonals).
template <class Scalar, class Ordinal>
Triplets<Scalar, Ordinal> banded(Ordinal n, int half_bandwidth)
{
  if (n < 0 || half_bandwidth < 0)
    throw std::invalid_argument(
        "hst::workload::banded: arguments 'n' = " + std::to_string(n) +
        ", 'half_bandwidth' = " + std::to_string(half_bandwidth) + " must be >= 0");
  return rectangular_band<Scalar, Ordinal>(n, n, half_bandwidth);
}

// Block (multiphysics) operator: `dofs` unknowns per node of `nodes`, each
// node-node coupling (i, j) of `nodes` a dense dofs x dofs block, numbered
// node-major (unknown f of node i is i * dofs + f). Values entry_value of
// the expanded row and column.
template <class Scalar, class Ordinal>
Triplets<Scalar, Ordinal> blocked(Triplets<Scalar, Ordinal> const &nodes, int dofs)
{
  if (dofs < 1)
    throw std::invalid_argument("hst::workload::blocked: argument 'dofs' = " +
                                std::to_string(dofs) + " must be >= 1");
  Triplets<Scalar, Ordinal> t(nodes.n_rows * dofs, nodes.n_cols * dofs);
  std::vector<Ordinal> cols;
  for (Ordinal i = 0; i < nodes.n_rows; ++i)
  {
    cols.clear();
    for (auto const &entry : nodes.rows[i])
      cols.push_back(entry.first);
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    for (int f = 0; f < dofs; ++f)
    {
      Ordinal const r = i * dofs + f;
      auto &row = t.rows[r];
      row.reserve(cols.size() * std::size_t(dofs));
      for (Ordinal j : cols)
        for (int g = 0; g < dofs; ++g)
        {
          Ordinal const c = j * dofs + g;
          row.emplace_back(c, Scalar(entry_value(r, c)));
        }
    }
  }
  return t;
}

} // namespace hst::workload
