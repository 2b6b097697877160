#pragma once
// Deterministic test and benchmark operators, built on the host and returned
// as KokkosSparse::CrsMatrix in MemorySpace.

#include <hst/workload/Random.hpp>

#include <KokkosSparse_CrsMatrix.hpp>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
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

} // namespace hst::workload
