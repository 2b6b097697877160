#pragma once
// What the ladder benchmark and the sweep share: one workload staged on the
// device with the full recompute's answer, the two rungs that are not HST arms
// (full recompute and the library slice), and one timed pass of any rung over
// the staged steps.
//
// A pass applies every step to a zeroed y. Step 0 is not timed: it is where
// an arm compiles its first set (reported as preparation); steps 1..S-1 are
// timed between fences on the instance, so us/step includes every re-plan
// and tile compile that the workload causes after the first step. After the
// pass, y must equal A * (sum of all dx) from the full recompute.
//
// Everything is templated on the layout of the caller's multivectors
// (Kokkos::LayoutLeft, as Tpetra's, or Kokkos::LayoutRight): x, y and the full
// answer have that layout, and so has each step's k x B dx block, so that all
// rungs of one run see the same inputs in the same layout.

#include <hst/HST.hpp>

#include <KokkosSparse_CrsMatrix.hpp>

#include <workload/Check.hpp>
#include <workload/Workload.hpp>
// Kokkos Kernels 3.4's SPMV_MV_Transpose_Functor leaves rows_per_team
// unset on the RangePolicy path and then copies the functor; GCC 12 reports
// that from inside the (system) header as -Wmaybe-uninitialized wherever the
// transposed multivector spmv is instantiated in a user's file, which is the
// case for the library-slice rung with LayoutRight (LayoutLeft is
// pre-instantiated in the library). The member is never read on that path;
// silence the report for that header only (this takes effect where
// Harness.hpp is the first to include KokkosSparse_spmv.hpp).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <KokkosSparse_spmv.hpp>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#include <Kokkos_Core.hpp>
#include <Kokkos_Timer.hpp>
#if __has_include(<KokkosSparse_Utils.hpp>)
#include <KokkosSparse_Utils.hpp> // Kokkos Kernels 4.x: KokkosSparse::Impl::transpose_matrix
#else
#include <KokkosKernels_SparseUtils.hpp> // 3.x: KokkosKernels::Impl::transpose_matrix
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace hst::bench
{

using Scalar = double;
using Ordinal = int;
using ExecutionSpace = Kokkos::DefaultExecutionSpace;
using MemorySpace = ExecutionSpace::memory_space;
using Matrix = KokkosSparse::CrsMatrix<Scalar, Ordinal, ExecutionSpace>;
/// A command-line value of a perf tool as a finite number; `fail(message)`
/// (the tool's usage error, which does not return) names the flag otherwise.
template <class Fail>
double number_argument(std::string const &flag, std::string const &text, Fail &&fail)
{
  char *end = nullptr;
  double const value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(value))
    fail("argument '" + flag + "' expects a number, got '" + text + "'");
  return value;
}

/// The same as an integer in [minimum, 1e9].
template <class Fail>
int count_argument(std::string const &flag, std::string const &text, int minimum,
                   Fail &&fail)
{
  double const value = number_argument(flag, text, fail);
  if (value != std::floor(value) || value < minimum || value > 1e9)
    fail("argument '" + flag + "' expects an integer >= " + std::to_string(minimum) +
         ", got '" + text + "'");
  return int(value);
}

/// Median of a sample (NaN when empty): what every tool reports per rung.
inline double median(std::vector<double> v)
{
  if (v.empty())
    return std::nan("");
  std::sort(v.begin(), v.end());
  std::size_t const n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// The order in which round `round` runs n interleaved rungs: a Williams
/// design. A pass leaves state behind it (caches, the allocator's free
/// lists, y) that the next pass inherits, and that carry-over differs from
/// rung to rung; measured, an arm timed always right after the same other
/// arm read up to 1.5x slower than a second copy of itself timed after
/// another. Over n rounds (2n for odd n) each rung runs right after each
/// other rung equally often, and first in a round equally often, so the
/// carry-over falls on every rung alike. Round r of even n is the sequence
/// 0, 1, n-1, 2, n-2, ... shifted by r (mod n); odd n adds its mirror.
inline std::vector<std::size_t> balanced_order(std::size_t n, int round)
{
  std::vector<std::size_t> order(n);
  if (n == 0)
    return order;
  std::size_t const rows = n % 2 ? 2 * n : n;
  std::size_t const r = std::size_t(round) % rows;
  for (std::size_t j = 0; j < n; ++j)
  {
    std::size_t const base = j == 0 ? 0 : j % 2 ? (j + 1) / 2 : n - j / 2;
    order[j] = (base + r) % n;
  }
  if (r >= n)
    std::reverse(order.begin(), order.end());
  return order;
}

/// The caller's n x B multivectors (x, y) in layout L.
template <class L>
using MultiVectorOf = Kokkos::View<Scalar **, L, MemorySpace>;
using MultiVector = MultiVectorOf<Kokkos::LayoutLeft>; ///< the default layout

/// The multivector layouts the harness measures.
enum class Layout
{
  left,  ///< Kokkos::LayoutLeft (column-major, Tpetra's)
  right, ///< Kokkos::LayoutRight (row-major: one row of y is B contiguous values)
};

inline char const *to_string(Layout l) { return l == Layout::left ? "left" : "right"; }

/// "left" or "right"; anything else is std::nullopt.
inline std::optional<Layout> parse_layout(std::string const &name)
{
  if (name == "left")
    return Layout::left;
  if (name == "right")
    return Layout::right;
  return std::nullopt;
}

template <class L>
constexpr Layout layout_of()
{
  static_assert(std::is_same_v<L, Kokkos::LayoutLeft> ||
                    std::is_same_v<L, Kokkos::LayoutRight>,
                "hst::bench: the layout must be Kokkos::LayoutLeft or LayoutRight");
  return std::is_same_v<L, Kokkos::LayoutLeft> ? Layout::left : Layout::right;
}

/// Calls f(Kokkos::LayoutLeft{}) or f(Kokkos::LayoutRight{}).
template <class F>
void with_layout(Layout l, F &&f)
{
  if (l == Layout::left)
    f(Kokkos::LayoutLeft{});
  else
    f(Kokkos::LayoutRight{});
}

/// The ladder's rungs, in ladder order (MISSION.md, "What faster means").
enum class Rung
{
  full,      ///< (a) y = A x with KokkosSparse::spmv after accumulating dx into x
  slice,     ///< (b) cut A[:, S] out of a transposed copy, multiply the slice
  scatter,   ///< (c) HST direct-scatter arm
  exact,     ///< (d) HST exact-set arm
  scheduled, ///< (e) HST scheduled arm
  adaptive,  ///< (f) HST adaptive session (probe steps included in its time)
};

inline std::vector<Rung> const &all_rungs()
{
  static std::vector<Rung> const rungs = {Rung::full,  Rung::slice,     Rung::scatter,
                                          Rung::exact, Rung::scheduled, Rung::adaptive};
  return rungs;
}

/// The three HST arms: the choices the sweep compares per case (the adaptive
/// session is measured against the best of them).
inline std::vector<Rung> const &arm_rungs()
{
  static std::vector<Rung> const rungs = {Rung::scatter, Rung::exact, Rung::scheduled};
  return rungs;
}

inline char const *to_string(Rung r)
{
  switch (r)
  {
  case Rung::full:
    return "full_spmv";
  case Rung::slice:
    return "library_slice";
  case Rung::scatter:
    return "scatter";
  case Rung::exact:
    return "exact_set";
  case Rung::scheduled:
    return "scheduled";
  case Rung::adaptive:
    return "adaptive";
  }
  return "?";
}

inline char const *describe(Rung r)
{
  switch (r)
  {
  case Rung::full:
    return "(a) full recompute (KokkosSparse::spmv)";
  case Rung::slice:
    return "(b) library slice A[:,S] + spmv";
  case Rung::scatter:
    return "(c) direct scatter";
  case Rung::exact:
    return "(d) exact set";
  case Rung::scheduled:
    return "(e) scheduled";
  case Rung::adaptive:
    return "(f) adaptive (probing included)";
  }
  return "?";
}

/// A workload's steps on the device and the full answer, for multivectors in
/// layout L. cols is k x S LayoutLeft (one step's k ids are contiguous). dx
/// holds each step's k x B block contiguously in layout L: k x B x S
/// LayoutLeft for LayoutLeft, S x k x B LayoutRight for LayoutRight.
template <class L = Kokkos::LayoutLeft>
struct Staged
{
  static constexpr Layout layout = layout_of<L>();
  using MultiVector = MultiVectorOf<L>;
  using DxView = Kokkos::View<Scalar ***, L, MemorySpace>;

  Matrix A;
  int steps = 0;
  int k = 0;
  int width = 0;
  Kokkos::View<Ordinal **, Kokkos::LayoutLeft, MemorySpace> cols;
  DxView dx;
  MultiVector y_full;     ///< A * (sum over steps of dx scattered to S_t)
  double changed_nnz = 0; ///< mean nnz(A[:, S_t]) per step
  std::size_t max_changed_nnz = 0;
  double replaced = 0; ///< mean columns replaced per step

  auto step_cols(int s) const { return Kokkos::subview(cols, Kokkos::ALL, s); }
  auto step_dx(int s) const
  {
    if constexpr (layout == Layout::left)
      return Kokkos::subview(dx, Kokkos::ALL, Kokkos::ALL, s);
    else
      return Kokkos::subview(dx, s, Kokkos::ALL, Kokkos::ALL);
  }

  /// A zeroed dx for k ids, B and `steps` steps in this layout.
  static DxView make_dx(int k, int width, int steps)
  {
    if constexpr (layout == Layout::left)
      return DxView("hst::bench::dx", k, width, steps);
    else
      return DxView("hst::bench::dx", steps, k, width);
  }

  /// Entry (i, b) of step s's dx in a view made by make_dx (or its mirror).
  template <class View>
  static auto &dx_entry(View const &dx, int i, int b, int s)
  {
    if constexpr (layout == Layout::left)
      return dx(i, b, s);
    else
      return dx(s, i, b);
  }
};

/// One stretch of a staged workload: `steps` steps of one Workload.
struct Phase
{
  workload::WorkloadOptions options;
  int steps = 0;
};

/// Stages the phases one after another (each from its own Workload, so the
/// set jumps where a phase begins); all phases must share k and B.
template <class L = Kokkos::LayoutLeft>
Staged<L> stage(Matrix const &A, std::vector<Phase> const &phases)
{
  using Out = Staged<L>;
  int steps = 0;
  for (auto const &phase : phases)
    steps += phase.steps;
  if (phases.empty() || steps < 2)
    throw std::invalid_argument("hst::bench::stage: the phases need at least 2 steps");
  Out p;
  p.A = A;
  p.steps = steps;
  p.width = phases.front().options.width;

  auto const entries =
      Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, A.graph.entries);
  std::vector<std::size_t> column_nnz(std::size_t(A.numCols()), 0);
  for (std::size_t e = 0; e < entries.extent(0); ++e)
    ++column_nnz[std::size_t(entries(e))];

  typename Out::MultiVector x("hst::bench::x", A.numCols(), p.width);
  auto x_host = Kokkos::create_mirror_view(x);
  decltype(Kokkos::create_mirror_view(p.cols)) cols;
  decltype(Kokkos::create_mirror_view(p.dx)) dx;
  std::int64_t replaced = 0;
  int s = 0;
  for (auto const &phase : phases)
  {
    if (phase.options.width != p.width)
      throw std::invalid_argument("hst::bench::stage: the phases differ in B");
    workload::Workload<Scalar, Ordinal> w(A, phase.options);
    if (s == 0)
    {
      p.k = int(w.columns().size());
      p.cols = decltype(p.cols)("hst::bench::cols", p.k, steps);
      p.dx = Out::make_dx(p.k, p.width, steps);
      cols = Kokkos::create_mirror_view(p.cols);
      dx = Kokkos::create_mirror_view(p.dx);
    }
    else if (int(w.columns().size()) != p.k)
      throw std::invalid_argument("hst::bench::stage: the phases differ in k");
    for (int t = 0; t < phase.steps; ++t, ++s)
    {
      std::size_t nnz = 0;
      for (int i = 0; i < p.k; ++i)
      {
        Ordinal const c = w.columns()[std::size_t(i)];
        cols(i, s) = c;
        nnz += column_nnz[std::size_t(c)];
        for (int b = 0; b < p.width; ++b)
        {
          auto &entry = Out::dx_entry(dx, i, b, s);
          entry = w.dx()[std::size_t(i) * std::size_t(p.width) + std::size_t(b)];
          x_host(c, b) += entry;
        }
      }
      p.changed_nnz += double(nnz) / steps;
      p.max_changed_nnz = std::max(p.max_changed_nnz, nnz);
      if (t + 1 < phase.steps)
      {
        w.advance();
        replaced += w.last_replaced();
      }
    }
  }
  p.replaced = double(replaced) / double(steps - 1);
  Kokkos::deep_copy(p.cols, cols);
  Kokkos::deep_copy(p.dx, dx);
  Kokkos::deep_copy(x, x_host);
  p.y_full = typename Out::MultiVector("hst::bench::y_full", A.numRows(), p.width);
  KokkosSparse::spmv("N", 1.0, A, x, 0.0, p.y_full);
  Kokkos::fence();
  return p;
}

template <class L = Kokkos::LayoutLeft>
Staged<L> stage(Matrix const &A, workload::WorkloadOptions const &options, int steps)
{
  return stage<L>(A, std::vector<Phase>{{options, steps}});
}

/// Rung (a): what a code without HST does each step. dx is accumulated into
/// x, then y = A x. (Kokkos Kernels 3.4's spmv takes no instance; it runs on
/// the default instance.) x and y are in layout L.
template <class L>
class FullRecompute
{
public:
  using MultiVector = MultiVectorOf<L>;

  explicit FullRecompute(Staged<L> const &p)
      : A_(p.A)
      , x_("hst::bench::x", p.A.numCols(), p.width)
  {}

  template <class Cols, class Dx>
  void apply_cols(ExecutionSpace const &space, Cols const &cols, Dx const &dx,
                  MultiVector const &y)
  {
    auto const x = x_;
    int const width = int(dx.extent(1));
    Kokkos::parallel_for(
        "hst::bench::accumulate_x",
        Kokkos::RangePolicy<ExecutionSpace>(space, 0, cols.extent(0)),
        KOKKOS_LAMBDA(int i) {
          for (int b = 0; b < width; ++b)
            x(cols(i), b) += dx(i, b);
        });
    KokkosSparse::spmv("N", 1.0, A_, x_, 0.0, y);
  }

private:
  Matrix A_;
  MultiVector x_;
};

/// Rung (b): the best a caller does with library calls alone. A^T is built
/// once (Kokkos Kernels' transpose); each step the k rows of A^T named by the
/// set (the columns A[:, S]) are copied into a k x n_rows CRS slice (one
/// parallel_scan for its row map, one parallel_for for its entries), and
/// KokkosSparse::spmv("T") adds slice^T dx to y. Buffers are sized once for
/// the workload's largest slice, so a step allocates nothing. dx and y are
/// both in layout L (Kokkos Kernels' multivector spmv takes x and y of any
/// one layout; the harness never mixes them).
template <class L>
class LibrarySlice
{
public:
  using MultiVector = MultiVectorOf<L>;

  explicit LibrarySlice(Staged<L> const &p)
#if __has_include(<KokkosSparse_Utils.hpp>)
      : At_(KokkosSparse::Impl::transpose_matrix(p.A))
#else
      : At_(KokkosKernels::Impl::transpose_matrix(p.A))
#endif
      , n_rows_(p.A.numRows())
      , row_map_("hst::bench::slice_row_map", std::size_t(p.k) + 1)
      , entries_("hst::bench::slice_entries", p.max_changed_nnz)
      , values_("hst::bench::slice_values", p.max_changed_nnz)
  {}

  template <class Cols, class Dx>
  void apply_cols(ExecutionSpace const &space, Cols const &cols, Dx const &dx,
                  MultiVector const &y)
  {
    static_assert(std::is_same_v<typename Dx::array_layout, L>,
                  "hst::bench::LibrarySlice: dx and y must share the layout");
    using size_type = Matrix::size_type;
    auto const at_rows = At_.graph.row_map;
    auto const at_entries = At_.graph.entries;
    auto const at_values = At_.values;
    auto const row_map = row_map_;
    auto const entries = entries_;
    auto const values = values_;
    int const k = int(cols.extent(0));
    size_type nnz = 0;
    Kokkos::parallel_scan(
        "hst::bench::slice_row_map", Kokkos::RangePolicy<ExecutionSpace>(space, 0, k + 1),
        KOKKOS_LAMBDA(int i, size_type &offset, bool final) {
          if (final)
            row_map(i) = offset;
          if (i < k)
            offset += at_rows(cols(i) + 1) - at_rows(cols(i));
        },
        nnz);
    Kokkos::parallel_for(
        "hst::bench::slice_entries", Kokkos::RangePolicy<ExecutionSpace>(space, 0, k),
        KOKKOS_LAMBDA(int i) {
          size_type out = row_map(i);
          for (size_type e = at_rows(cols(i)); e < at_rows(cols(i) + 1); ++e, ++out)
          {
            entries(out) = at_entries(e);
            values(out) = at_values(e);
          }
        });
    auto const used = std::make_pair(size_type(0), nnz);
    Matrix const slice("slice", Ordinal(k), n_rows_, nnz, Kokkos::subview(values, used),
                       row_map, Kokkos::subview(entries, used));
    KokkosSparse::spmv("T", 1.0, slice, dx, 1.0, y);
  }

private:
  Matrix At_;
  Ordinal n_rows_;
  Kokkos::View<Matrix::size_type *, MemorySpace> row_map_;
  Kokkos::View<Ordinal *, MemorySpace> entries_;
  Kokkos::View<Scalar *, MemorySpace> values_;
};

/// One pass of a rung over a staged workload.
struct Pass
{
  double prepare_seconds = 0; ///< making the rung + its untimed first steps
  double us_per_step = 0;     ///< the timed steps
  double rel_error = 0;       ///< against the full recompute
};

/// Makes the rung with `make()`, runs every step into `y` (zeroed first),
/// times steps `untimed`..S-1 as described at the top of this file (untimed =
/// 1: step 0 is preparation) and checks the answer. `after(rung)` sees the
/// rung before it is destroyed.
template <class L, class Make, class After>
Pass timed_pass(Staged<L> const &p, Make &&make, typename Staged<L>::MultiVector const &y,
                int untimed, After &&after, ExecutionSpace const &space = {})
{
  if (untimed < 1 || untimed >= p.steps)
    throw std::invalid_argument(
        "hst::bench::timed_pass: 'untimed' must lie in [1, steps)");
  Pass pass;
  Kokkos::deep_copy(space, y, 0.0);
  space.fence();
  Kokkos::Timer timer;
  auto rung = make();
  for (int s = 0; s < untimed; ++s)
    rung.apply_cols(space, p.step_cols(s), p.step_dx(s), y);
  space.fence();
  pass.prepare_seconds = timer.seconds();
  timer.reset();
  for (int s = untimed; s < p.steps; ++s)
    rung.apply_cols(space, p.step_cols(s), p.step_dx(s), y);
  space.fence();
  pass.us_per_step = 1e6 * timer.seconds() / double(p.steps - untimed);
  pass.rel_error = workload::relative_difference(y, p.y_full);
  after(rung);
  return pass;
}

template <class L, class Make>
Pass timed_pass(Staged<L> const &p, Make &&make, typename Staged<L>::MultiVector const &y)
{
  return timed_pass(p, make, y, 1, [](auto const &) {});
}

using HSTOperator = hst::Operator<Scalar, Ordinal, MemorySpace>;

/// Options of the adaptive rung (hst-sweep --model sets its cost model).
inline hst::AdaptiveOptions &adaptive_options()
{
  static hst::AdaptiveOptions options;
  return options;
}

/// Calls f(make) with a factory for rung r on operator `op`.
template <class L, class F>
void with_rung(Rung r, Staged<L> const &p, HSTOperator const &op, F &&f)
{
  switch (r)
  {
  case Rung::full:
    return f([&] { return FullRecompute<L>(p); });
  case Rung::slice:
    return f([&] { return LibrarySlice<L>(p); });
  case Rung::scatter:
    return f([&] { return op.scatter(p.width); });
  case Rung::exact:
    return f([&] { return op.baseline(p.width); });
  case Rung::scheduled:
    return f([&] { return op.session(p.step_cols(0), p.width); });
  case Rung::adaptive:
    return f([&] { return op.adaptive(p.step_cols(0), p.width, adaptive_options()); });
  }
}

/// One pass of rung r; throws std::runtime_error if the answer is wrong.
template <class L>
Pass run_rung(Rung r, Staged<L> const &p, HSTOperator const &op,
              typename Staged<L>::MultiVector const &y)
{
  Pass pass;
  with_rung(r, p, op, [&](auto make) { pass = timed_pass(p, make, y); });
  if (!(pass.rel_error <= 1e-12))
    throw std::runtime_error(std::string("hst::bench: rung ") + to_string(r) +
                             " differs from the full recompute by " +
                             std::to_string(pass.rel_error));
  return pass;
}

/// Seconds to build the hst::Operator (CSC copy and tile index).
inline double time_operator_build(Matrix const &A, std::optional<HSTOperator> &op)
{
  Kokkos::fence();
  Kokkos::Timer timer;
  op.emplace(A);
  Kokkos::fence();
  return timer.seconds();
}

} // namespace hst::bench
