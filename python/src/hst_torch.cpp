// The PyTorch extension: hst::Operator and its four session kinds as TorchScript
// custom classes (torch.classes.hst.*) and ops under torch.ops.hst.*, over the
// header-only core on the host (Kokkos::HostSpace, the default host execution
// space). One translation unit: torch headers compile slowly.
//
// Tensors are wrapped as unmanaged Kokkos Views, never copied: cols (int32,
// or int64 converted into a per-session buffer that only grows), dx (k x B)
// and y (n_rows x B), C-contiguous CPU tensors of the operator's dtype
// (float64 or float32). Every check runs before y is written; a caller error
// raises c10::ValueError or c10::TypeError (Python ValueError / TypeError)
// naming the argument, as do the core's std::invalid_argument errors.
//
// Kokkos lifetime: the library initializes Kokkos when it is loaded unless
// someone else already has, and counts its live objects (each holds a
// KokkosUse). At unload (process exit) it finalizes Kokkos only if it
// initialized it and no object is alive; objects that the interpreter never
// freed keep Kokkos up until the process ends (their memory goes with it).

#include <hst/HST.hpp>

#include <KokkosSparse_CrsMatrix.hpp>
#include <Kokkos_Core.hpp>

#include <ATen/ATen.h>
#include <torch/custom_class.h>
#include <torch/library.h>
#include <workload/Suite.hpp>
#include <workload/Workload.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace hst::torch_ext
{

using Ordinal = int;
using MemorySpace = Kokkos::HostSpace;
using ExecutionSpace = Kokkos::DefaultHostExecutionSpace;
template <class Scalar>
using HostOperator = hst::Operator<Scalar, Ordinal, MemorySpace>;
template <class Scalar>
using HostMatrix = KokkosSparse::CrsMatrix<Scalar, Ordinal, ExecutionSpace>;
using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;

// ---------------------------------------------------------------- lifetime

class KokkosLifetime
{
public:
  static KokkosLifetime &instance()
  {
    static KokkosLifetime lifetime;
    return lifetime;
  }

  void acquire()
  {
    if (!Kokkos::is_initialized())
    {
      Kokkos::initialize();
      initialized_here_ = true;
    }
    ++live_;
  }
  void release() { --live_; }
  std::int64_t live() const { return live_; }
  bool initialized_here() const { return initialized_here_; }

  ~KokkosLifetime()
  {
    // Static destruction at unload: Python has freed what it frees by then.
    if (initialized_here_ && live_ == 0 && Kokkos::is_initialized())
      Kokkos::finalize();
  }

private:
  KokkosLifetime() = default;
  std::atomic<std::int64_t> live_{0};
  bool initialized_here_ = false;
};

// Held first by every object that owns Kokkos Views: constructed before and
// destroyed after them.
struct KokkosUse
{
  KokkosUse() { KokkosLifetime::instance().acquire(); }
  KokkosUse(KokkosUse const &) = delete;
  KokkosUse &operator=(KokkosUse const &) = delete;
  ~KokkosUse() { KokkosLifetime::instance().release(); }
};

// Initialize on load (if nobody has); the count stays at zero.
[[maybe_unused]] bool const kokkos_ready_on_load = [] {
  KokkosUse use;
  return true;
}();

// ------------------------------------------------------------------ checks

// Runs f, turning the core's std::invalid_argument into c10::ValueError.
template <class F>
decltype(auto) translating(F &&f)
{
  try
  {
    return f();
  }
  catch (std::invalid_argument const &e)
  {
    C10_THROW_ERROR(ValueError, e.what());
  }
}

inline std::string shape_of(at::Tensor const &t)
{
  std::string s = "(";
  for (int64_t d = 0; d < t.dim(); ++d)
    s += (d ? ", " : "") + std::to_string(t.size(d));
  return s + (t.dim() == 1 ? ",)" : ")");
}

// dtypes as Python spells them.
inline std::string dtype_name(at::ScalarType t)
{
  switch (t)
  {
  case at::kDouble:
    return "torch.float64";
  case at::kFloat:
    return "torch.float32";
  case at::kInt:
    return "torch.int32";
  case at::kLong:
    return "torch.int64";
  default:
    return std::string("torch.") + c10::toString(t);
  }
}

inline bool is_float_dtype(at::ScalarType t)
{
  return t == at::kDouble || t == at::kFloat;
}

// A CPU, C-contiguous tensor of `dim` dimensions; dtype checked by the caller.
inline void check_dense(char const *where, char const *arg, at::Tensor const &t, int dim)
{
  TORCH_CHECK_VALUE(t.defined(), where, ": argument '", arg, "' is an undefined tensor");
  TORCH_CHECK_VALUE(t.device().is_cpu(), where, ": argument '", arg,
                    "' must be a CPU tensor, got device ", t.device());
  TORCH_CHECK_VALUE(t.layout() == at::kStrided, where, ": argument '", arg,
                    "' must be a dense (strided) tensor, got layout ", t.layout());
  TORCH_CHECK_VALUE(t.dim() == dim, where, ": argument '", arg, "' must have ", dim,
                    " dimension", dim == 1 ? "" : "s", ", got shape ", shape_of(t));
  TORCH_CHECK_VALUE(t.is_contiguous(), where, ": argument '", arg,
                    "' must be C-contiguous (call .contiguous()), got strides ",
                    t.strides());
}

inline void check_dtype(char const *where, char const *arg, at::Tensor const &t,
                        at::ScalarType dtype)
{
  TORCH_CHECK_TYPE(t.scalar_type() == dtype, where, ": argument '", arg,
                   "' must have dtype ", dtype_name(dtype), " (the operator's), got ",
                   dtype_name(t.scalar_type()));
}

inline bool overlap(at::Tensor const &a, at::Tensor const &b)
{
  if (a.numel() == 0 || b.numel() == 0)
    return false;
  auto const *a0 = static_cast<char const *>(a.data_ptr());
  auto const *b0 = static_cast<char const *>(b.data_ptr());
  auto const *a1 = a0 + a.numel() * a.element_size();
  auto const *b1 = b0 + b.numel() * b.element_size();
  return a0 < b1 && b0 < a1;
}

// Column ids as int32 on the host: the tensor's own memory for int32, else a
// conversion into `buffer` (grown, never shrunk) with a range check, since
// an int64 id would otherwise be truncated before the core sees it.
inline Ordinal const *column_ids(char const *where, char const *arg,
                                 at::Tensor const &cols, std::int64_t n_cols,
                                 std::vector<Ordinal> &buffer)
{
  check_dense(where, arg, cols, 1);
  auto const type = cols.scalar_type();
  TORCH_CHECK_TYPE(type == at::kInt || type == at::kLong, where, ": argument '", arg,
                   "' must have dtype torch.int32 or torch.int64, got ",
                   dtype_name(type));
  if (type == at::kInt)
    return cols.data_ptr<std::int32_t>();
  auto const k = std::size_t(cols.numel());
  auto const *ids = cols.data_ptr<std::int64_t>();
  if (buffer.size() < k)
    buffer.resize(std::max(k, 2 * buffer.size()));
  for (std::size_t i = 0; i < k; ++i)
  {
    TORCH_CHECK_VALUE(ids[i] >= 0 && ids[i] < n_cols, where, ": argument '", arg,
                      "' holds column id ", ids[i], " at position ", i, ", outside [0, ",
                      n_cols, ")");
    buffer[i] = Ordinal(ids[i]);
  }
  return buffer.data();
}

template <class T>
using HostVector = Kokkos::View<T *, Kokkos::LayoutRight, MemorySpace, Unmanaged>;
template <class T>
using HostMatrixView = Kokkos::View<T **, Kokkos::LayoutRight, MemorySpace, Unmanaged>;

// A CrsMatrix copied from CSR tensors (row_ptr and col_idx int32 or int64,
// values of dtype Scalar), checked on the way.
template <class Scalar>
HostMatrix<Scalar> crs_from_tensors(char const *where, std::int64_t n_rows,
                                    std::int64_t n_cols, at::Tensor const &row_ptr,
                                    at::Tensor const &col_idx, at::Tensor const &values)
{
  TORCH_CHECK_VALUE(n_rows >= 0 && n_cols >= 0 &&
                        n_rows <= std::numeric_limits<Ordinal>::max() &&
                        n_cols <= std::numeric_limits<Ordinal>::max(),
                    where, ": the shape (", n_rows, ", ", n_cols,
                    ") must be non-negative and below 2^31");
  check_dense(where, "row_ptr", row_ptr, 1);
  check_dense(where, "col_idx", col_idx, 1);
  check_dense(where, "values", values, 1);
  for (auto const *t : {&row_ptr, &col_idx})
    TORCH_CHECK_TYPE(t->scalar_type() == at::kInt || t->scalar_type() == at::kLong, where,
                     ": index arrays must be int32 or int64, got ",
                     dtype_name(t->scalar_type()));
  TORCH_CHECK_VALUE(row_ptr.numel() == n_rows + 1, where, ": argument 'row_ptr' has ",
                    row_ptr.numel(), " entries, expected n_rows + 1 = ", n_rows + 1);
  TORCH_CHECK_VALUE(col_idx.numel() == values.numel(), where, ": 'col_idx' has ",
                    col_idx.numel(), " entries but 'values' has ", values.numel());
  auto const rp = row_ptr.to(at::kLong);
  auto const ci = col_idx.to(at::kLong);
  auto const *p = rp.data_ptr<std::int64_t>();
  auto const *c = ci.data_ptr<std::int64_t>();
  auto const nnz = col_idx.numel();
  TORCH_CHECK_VALUE(p[0] == 0 && p[n_rows] == nnz, where,
                    ": argument 'row_ptr' must run from 0 to nnz = ", nnz, ", got ", p[0],
                    " to ", p[n_rows]);
  using size_type = typename HostMatrix<Scalar>::size_type;
  Kokkos::View<size_type *, MemorySpace> map("hst::torch::row_map", n_rows + 1);
  Kokkos::View<Ordinal *, MemorySpace> entries("hst::torch::entries", nnz);
  Kokkos::View<Scalar *, MemorySpace> vals("hst::torch::values", nnz);
  for (std::int64_t r = 0; r <= n_rows; ++r)
  {
    TORCH_CHECK_VALUE(r == 0 || p[r] >= p[r - 1], where,
                      ": argument 'row_ptr' decreases at row ", r);
    map(r) = size_type(p[r]);
  }
  auto const *v = values.data_ptr<Scalar>();
  for (std::int64_t e = 0; e < nnz; ++e)
  {
    TORCH_CHECK_VALUE(c[e] >= 0 && c[e] < n_cols, where,
                      ": argument 'col_idx' holds column id ", c[e], " at entry ", e,
                      ", outside [0, ", n_cols, ")");
    entries(e) = Ordinal(c[e]);
    vals(e) = v[e];
  }
  return HostMatrix<Scalar>("hst::torch::A", Ordinal(n_rows), Ordinal(n_cols),
                            size_type(nnz), vals, map, entries);
}

// ---------------------------------------------------------------- sessions

struct ScheduledKind
{
  template <class S>
  using arm = hst::ScheduledArm<S, Ordinal, MemorySpace>;
  static constexpr char const *name = "hst.ScheduledSession.apply_cols";
};
struct ExactSetKind
{
  template <class S>
  using arm = hst::ExactSetArm<S, Ordinal, MemorySpace>;
  static constexpr char const *name = "hst.ExactSetSession.apply_cols";
};
struct ScatterKind
{
  template <class S>
  using arm = hst::ScatterArm<S, Ordinal, MemorySpace>;
  static constexpr char const *name = "hst.ScatterSession.apply_cols";
};
struct AdaptiveKind
{
  template <class S>
  using arm = hst::AdaptiveSession<S, Ordinal, MemorySpace>;
  static constexpr char const *name = "hst.AdaptiveSession.apply_cols";
};

/// One arm of one operator for batch width B, as a TorchScript object. The arm
/// holds the operator's shared preparation, so it outlives the Operator object
/// it came from.
template <class Kind>
class Session : public torch::CustomClassHolder
{
public:
  template <class Arm>
  Session(Arm arm, at::ScalarType dtype)
      : dtype_(dtype)
      , n_rows_(arm.num_rows())
      , n_cols_(arm.num_cols())
      , width_(arm.width())
      , arm_(std::move(arm))
  {}

  std::int64_t width() const { return width_; }
  std::int64_t num_rows() const { return n_rows_; }
  std::int64_t num_cols() const { return n_cols_; }
  std::int64_t steps() const { return steps_; }
  at::ScalarType dtype() const { return dtype_; }

  /// y += A[:, cols] * dx, in place. Checks everything before writing y.
  void apply_cols(at::Tensor const &cols, at::Tensor const &dx, at::Tensor const &y)
  {
    char const *where = Kind::name;
    Ordinal const *ids = column_ids(where, "cols", cols, n_cols_, cols_buffer_);
    auto const k = cols.numel();
    check_dense(where, "dx", dx, 2);
    check_dtype(where, "dx", dx, dtype_);
    TORCH_CHECK_VALUE(dx.size(0) == k && dx.size(1) == width_, where,
                      ": argument 'dx' must have shape (", k, ", ", width_,
                      ") (len(cols), B), got ", shape_of(dx));
    check_dense(where, "y", y, 2);
    check_dtype(where, "y", y, dtype_);
    TORCH_CHECK_VALUE(y.size(0) == n_rows_ && y.size(1) == width_, where,
                      ": argument 'y' must have shape (", n_rows_, ", ", width_,
                      ") (n_rows, B), got ", shape_of(y));
    TORCH_CHECK_VALUE(!overlap(y, dx) && !overlap(y, cols), where,
                      ": argument 'y' overlaps 'dx' or 'cols' in memory");
    bool const grad = at::GradMode::is_enabled();
    for (auto const &[arg, t] : {std::pair<char const *, at::Tensor const *>{"dx", &dx},
                                 std::pair<char const *, at::Tensor const *>{"y", &y}})
      TORCH_CHECK_VALUE(!(grad && t->requires_grad()), where, ": argument '", arg,
                        "' requires grad; HST has no autograd (it writes y in place): "
                        "call it under torch.no_grad()");
    y.unsafeGetTensorImpl()->bump_version();
    std::visit(
        [&](auto &arm) {
          using Arm = std::decay_t<decltype(arm)>;
          if constexpr (!std::is_same_v<Arm, std::monostate>)
          {
            using Scalar = typename Arm::value_type;
            HostVector<Ordinal const> const c(ids, std::size_t(k));
            HostMatrixView<Scalar const> const d(dx.data_ptr<Scalar>(), std::size_t(k),
                                                 std::size_t(width_));
            HostMatrixView<Scalar> const out(y.data_ptr<Scalar>(), std::size_t(n_rows_),
                                             std::size_t(width_));
            translating([&] { arm.apply_cols(c, d, out); });
          }
        },
        arm_);
    ++steps_;
  }

  /// For the ladder: runs steps [0, S) of cols (S x k, int32) and dx
  /// (S x k x B) into y from C++ with the core's own apply_cols, as a C++
  /// caller would, and returns the seconds per step of steps [untimed, S).
  double time_steps(at::Tensor const &cols, at::Tensor const &dx, at::Tensor const &y,
                    std::int64_t untimed)
  {
    char const *where = "hst.time_steps";
    check_dense(where, "cols", cols, 2);
    TORCH_CHECK_TYPE(cols.scalar_type() == at::kInt, where,
                     ": argument 'cols' must have dtype torch.int32");
    check_dense(where, "dx", dx, 3);
    check_dtype(where, "dx", dx, dtype_);
    check_dense(where, "y", y, 2);
    check_dtype(where, "y", y, dtype_);
    auto const S = cols.size(0), k = cols.size(1);
    TORCH_CHECK_VALUE(dx.size(0) == S && dx.size(1) == k && dx.size(2) == width_, where,
                      ": argument 'dx' must have shape (", S, ", ", k, ", ", width_,
                      "), got ", shape_of(dx));
    TORCH_CHECK_VALUE(y.size(0) == n_rows_ && y.size(1) == width_, where,
                      ": argument 'y' must have shape (", n_rows_, ", ", width_,
                      "), got ", shape_of(y));
    TORCH_CHECK_VALUE(untimed >= 0 && untimed < S, where,
                      ": argument 'untimed' must lie in [0, ", S, "), got ", untimed);
    y.unsafeGetTensorImpl()->bump_version();
    double seconds = 0;
    std::visit(
        [&](auto &arm) {
          using Arm = std::decay_t<decltype(arm)>;
          if constexpr (!std::is_same_v<Arm, std::monostate>)
          {
            using Scalar = typename Arm::value_type;
            auto const *ids = cols.data_ptr<Ordinal>();
            auto const *values = dx.data_ptr<Scalar>();
            HostMatrixView<Scalar> const out(y.data_ptr<Scalar>(), std::size_t(n_rows_),
                                             std::size_t(width_));
            auto step = [&](std::int64_t s) {
              HostVector<Ordinal const> const c(ids + s * k, std::size_t(k));
              HostMatrixView<Scalar const> const d(values + s * k * width_,
                                                   std::size_t(k), std::size_t(width_));
              arm.apply_cols(c, d, out);
            };
            translating([&] {
              for (std::int64_t s = 0; s < untimed; ++s)
                step(s);
              ExecutionSpace{}.fence();
              auto const start = std::chrono::steady_clock::now();
              for (std::int64_t s = untimed; s < S; ++s)
                step(s);
              ExecutionSpace{}.fence();
              seconds =
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                      .count();
            });
          }
        },
        arm_);
    steps_ += S;
    return seconds / double(S - untimed);
  }

  /// Counters of the arm (see the Python wrapper's docstrings).
  c10::Dict<std::string, std::int64_t> stats() const
  {
    c10::Dict<std::string, std::int64_t> out;
    out.insert("steps", steps_);
    std::visit(
        [&](auto const &arm) {
          using Arm = std::decay_t<decltype(arm)>;
          if constexpr (std::is_same_v<Kind, ScheduledKind> &&
                        !std::is_same_v<Arm, std::monostate>)
          {
            auto const &s = arm.stats();
            out.insert("replans", s.replans);
            out.insert("tiles_compiled", s.tiles_compiled);
            out.insert("tiles_retired", s.tiles_retired);
            out.insert("column_tiles", s.column_tiles);
            out.insert("tiles", s.tiles);
            out.insert("row_blocks", s.row_blocks);
          }
          else if constexpr (std::is_same_v<Kind, ExactSetKind> &&
                             !std::is_same_v<Arm, std::monostate>)
            out.insert("compiles", arm.compiles());
          else if constexpr (std::is_same_v<Kind, AdaptiveKind> &&
                             !std::is_same_v<Arm, std::monostate>)
          {
            auto const &r = arm.report();
            out.insert("probing", r.probing ? 1 : 0);
            out.insert("probe_steps", r.probe_steps);
            out.insert("decisions", std::int64_t(r.decisions.size()));
            out.insert("sampled_steps", r.sampled_steps);
            for (std::size_t a = 0; a < hst::arm_count; ++a)
              out.insert(std::string("steps_") + hst::to_string(hst::Arm(a)),
                         r.arm_steps[a]);
          }
        },
        arm_);
    return out;
  }

  // The adaptive session's report, in pieces TorchScript can return.
  std::string active() const
  {
    return visit_adaptive(
        [](auto const &a) { return std::string(to_string(a.active())); });
  }
  std::string report_text() const
  {
    return visit_adaptive([](auto const &a) {
      std::ostringstream s;
      s << a.report();
      return s.str();
    });
  }
  c10::Dict<std::string, double> report_totals() const
  {
    return visit_adaptive([](auto const &a) {
      auto const &r = a.report();
      c10::Dict<std::string, double> out;
      out.insert("steps", double(r.steps));
      out.insert("probe_steps", double(r.probe_steps));
      out.insert("probe_seconds", r.probe_seconds);
      out.insert("probe_compiles", double(r.probe_compiles));
      out.insert("probe_excess_seconds", r.probe_excess_seconds);
      out.insert("sampled_steps", double(r.sampled_steps));
      out.insert("sampled_seconds", r.sampled_seconds);
      return out;
    });
  }
  // One tuple per decision: (probe_start, step, chosen, us_per_step[3],
  // ns_per_entry[3], measured_steps[3], warmup_steps[3], reason); lists are
  // indexed scheduled, exact_set, scatter (NaN: not probed).
  std::vector<std::tuple<std::int64_t, std::int64_t, std::string, std::vector<double>,
                         std::vector<double>, std::vector<std::int64_t>,
                         std::vector<std::int64_t>, std::string>>
  report_decisions() const
  {
    return visit_adaptive([](auto const &a) {
      std::vector<std::tuple<std::int64_t, std::int64_t, std::string, std::vector<double>,
                             std::vector<double>, std::vector<std::int64_t>,
                             std::vector<std::int64_t>, std::string>>
          out;
      for (auto const &d : a.report().decisions)
        out.emplace_back(
            d.probe_start, d.step, to_string(d.chosen),
            std::vector<double>(d.us_per_step.begin(), d.us_per_step.end()),
            std::vector<double>(d.ns_per_entry.begin(), d.ns_per_entry.end()),
            std::vector<std::int64_t>(d.measured_steps.begin(), d.measured_steps.end()),
            std::vector<std::int64_t>(d.warmup_steps.begin(), d.warmup_steps.end()),
            d.reason);
      return out;
    });
  }
  void reprobe()
  {
    visit_adaptive_mutable([](auto &a) {
      a.reprobe();
      return 0;
    });
  }

private:
  template <class F>
  auto visit_adaptive(F &&f) const
      -> decltype(f(std::declval<AdaptiveKind::arm<double> const &>()))
  {
    static_assert(std::is_same_v<Kind, AdaptiveKind>);
    if (auto const *a = std::get_if<AdaptiveKind::arm<double>>(&arm_))
      return f(*a);
    return f(std::get<AdaptiveKind::arm<float>>(arm_));
  }
  template <class F>
  auto visit_adaptive_mutable(F &&f)
      -> decltype(f(std::declval<AdaptiveKind::arm<double> &>()))
  {
    static_assert(std::is_same_v<Kind, AdaptiveKind>);
    if (auto *a = std::get_if<AdaptiveKind::arm<double>>(&arm_))
      return f(*a);
    return f(std::get<AdaptiveKind::arm<float>>(arm_));
  }

  KokkosUse use_; // first: outlives the arm's Views
  at::ScalarType dtype_;
  std::int64_t n_rows_;
  std::int64_t n_cols_;
  std::int64_t width_;
  std::variant<std::monostate, typename Kind::template arm<double>,
               typename Kind::template arm<float>>
      arm_;
  std::vector<Ordinal> cols_buffer_;
  std::int64_t steps_ = 0;
};

using ScheduledSession = Session<ScheduledKind>;
using ExactSetSession = Session<ExactSetKind>;
using ScatterSession = Session<ScatterKind>;
using AdaptiveSessionObject = Session<AdaptiveKind>;

// ---------------------------------------------------------------- operator

/// hst::Operator built from CSR tensors (values float64 or float32).
class OperatorObject : public torch::CustomClassHolder
{
public:
  OperatorObject(std::int64_t n_rows, std::int64_t n_cols, at::Tensor row_ptr,
                 at::Tensor col_idx, at::Tensor values, std::int64_t tile,
                 std::int64_t row_block, bool locality)
  {
    char const *where = "hst.Operator";
    TORCH_CHECK_TYPE(
        values.defined() && is_float_dtype(values.scalar_type()), where,
        ": argument 'values' must have dtype torch.float64 or torch.float32");
    TORCH_CHECK_VALUE(tile > 0 && tile <= std::numeric_limits<int>::max(), where,
                      ": argument 'tile' must be positive, got ", tile);
    TORCH_CHECK_VALUE(row_block > 0 && row_block <= std::numeric_limits<int>::max(),
                      where, ": argument 'row_block' must be positive, got ", row_block);
    hst::OperatorOptions options;
    options.tile = int(tile);
    options.row_block = int(row_block);
    options.locality = locality;
    dtype_ = values.scalar_type();
    translating([&] {
      if (dtype_ == at::kDouble)
        op_ = HostOperator<double>(
            crs_from_tensors<double>(where, n_rows, n_cols, row_ptr, col_idx, values),
            options);
      else
        op_ = HostOperator<float>(
            crs_from_tensors<float>(where, n_rows, n_cols, row_ptr, col_idx, values),
            options);
    });
  }

  std::int64_t num_rows() const
  {
    return visit([](auto const &op) { return std::int64_t(op.num_rows()); });
  }
  std::int64_t num_cols() const
  {
    return visit([](auto const &op) { return std::int64_t(op.num_cols()); });
  }
  std::int64_t nnz() const
  {
    return visit([](auto const &op) { return std::int64_t(op.nnz()); });
  }
  at::ScalarType dtype() const { return dtype_; }
  c10::Dict<std::string, double> tile_stats() const
  {
    return visit([](auto const &op) {
      auto const &s = op.tile_stats();
      c10::Dict<std::string, double> out;
      out.insert("column_tiles", double(s.column_tiles));
      out.insert("row_blocks", double(s.row_blocks));
      out.insert("tiles", double(s.tiles));
      out.insert("empty_segments", double(s.empty_segments));
      out.insert("mean_tile_nnz", s.mean_tile_nnz);
      out.insert("tile", double(op.options().tile));
      out.insert("row_block", double(op.options().row_block));
      out.insert("locality", op.options().locality ? 1.0 : 0.0);
      return out;
    });
  }

  c10::intrusive_ptr<ScheduledSession> session(at::Tensor expected_cols, std::int64_t B,
                                               std::int64_t retire_after, bool strict)
  {
    char const *where = "hst.Operator.session";
    check_width(where, B);
    TORCH_CHECK_VALUE(retire_after > 0 && retire_after <= std::numeric_limits<int>::max(),
                      where, ": argument 'retire_after' must be positive, got ",
                      retire_after);
    std::vector<Ordinal> buffer;
    Ordinal const *ids = column_ids(where, "cols", expected_cols, num_cols(), buffer);
    HostVector<Ordinal const> const cols(ids, std::size_t(expected_cols.numel()));
    hst::SessionOptions options;
    options.retire_after = int(retire_after);
    options.strict = strict;
    return visit([&](auto const &op) {
      return translating([&] {
        return c10::make_intrusive<ScheduledSession>(op.session(cols, int(B), options),
                                                     dtype_);
      });
    });
  }
  c10::intrusive_ptr<ExactSetSession> baseline(std::int64_t B)
  {
    check_width("hst.Operator.baseline", B);
    return visit([&](auto const &op) {
      return translating([&] {
        return c10::make_intrusive<ExactSetSession>(op.baseline(int(B)), dtype_);
      });
    });
  }
  c10::intrusive_ptr<ScatterSession> scatter(std::int64_t B)
  {
    check_width("hst.Operator.scatter", B);
    return visit([&](auto const &op) {
      return translating([&] {
        return c10::make_intrusive<ScatterSession>(op.scatter(int(B)), dtype_);
      });
    });
  }
  c10::intrusive_ptr<AdaptiveSessionObject> adaptive(at::Tensor expected_cols,
                                                     std::int64_t B)
  {
    char const *where = "hst.Operator.adaptive";
    check_width(where, B);
    std::vector<Ordinal> buffer;
    Ordinal const *ids = column_ids(where, "cols", expected_cols, num_cols(), buffer);
    HostVector<Ordinal const> const cols(ids, std::size_t(expected_cols.numel()));
    return visit([&](auto const &op) {
      return translating([&] {
        return c10::make_intrusive<AdaptiveSessionObject>(op.adaptive(cols, int(B)),
                                                          dtype_);
      });
    });
  }

private:
  static void check_width(char const *where, std::int64_t B)
  {
    TORCH_CHECK_VALUE(B > 0 && B <= std::numeric_limits<int>::max(), where,
                      ": argument 'B' must be positive, got ", B);
  }
  template <class F>
  auto visit(F &&f) const -> decltype(f(std::declval<HostOperator<double> const &>()))
  {
    if (auto const *op = std::get_if<HostOperator<double>>(&op_))
      return f(*op);
    return f(std::get<HostOperator<float>>(op_));
  }

  KokkosUse use_; // first: outlives the operator's Views
  at::ScalarType dtype_ = at::kDouble;
  std::variant<std::monostate, HostOperator<double>, HostOperator<float>> op_;
};

// ------------------------------------------------------- suite and workload

// CSR tensors (row_ptr, col_idx int64; values float64) of a suite operator.
std::tuple<std::int64_t, std::int64_t, at::Tensor, at::Tensor, at::Tensor>
suite_operator(std::string const &name)
{
  auto const t = translating([&] {
                   return hst::workload::suite_operator<double, Ordinal>(name);
                 }).build();
  std::int64_t nnz = 0;
  for (auto const &row : t.rows)
    nnz += std::int64_t(row.size());
  auto row_ptr = at::empty({std::int64_t(t.n_rows) + 1}, at::kLong);
  auto col_idx = at::empty({nnz}, at::kLong);
  auto values = at::empty({nnz}, at::kDouble);
  auto *p = row_ptr.data_ptr<std::int64_t>();
  auto *c = col_idx.data_ptr<std::int64_t>();
  auto *v = values.data_ptr<double>();
  std::int64_t e = 0;
  p[0] = 0;
  for (std::size_t r = 0; r < t.rows.size(); ++r)
  {
    auto row = t.rows[r];
    std::sort(row.begin(), row.end(),
              [](auto const &a, auto const &b) { return a.first < b.first; });
    for (auto const &[col, val] : row)
    {
      c[e] = col;
      v[e] = val;
      ++e;
    }
    p[r + 1] = e;
  }
  return {t.n_rows, t.n_cols, row_ptr, col_idx, values};
}

// The project's deterministic workload (hst::workload::Workload) on a CSR
// operator: cols (steps x k, int32) and dx (steps x k x B, float64).
std::tuple<at::Tensor, at::Tensor> workload_steps(std::int64_t n_rows,
                                                  std::int64_t n_cols, at::Tensor row_ptr,
                                                  at::Tensor col_idx, at::Tensor values,
                                                  std::string const &motion, double churn,
                                                  std::int64_t k, std::int64_t B,
                                                  std::int64_t seed, std::int64_t steps)
{
  char const *where = "hst.workload";
  TORCH_CHECK_VALUE(steps >= 1, where, ": argument 'steps' must be positive");
  TORCH_CHECK_VALUE(B >= 1, where, ": argument 'B' must be positive");
  TORCH_CHECK_VALUE(seed >= 0, where, ": argument 'seed' must be non-negative");
  hst::workload::WorkloadOptions options;
  if (motion == "drift")
    options.motion = hst::workload::Motion::drift;
  else if (motion == "jump")
    options.motion = hst::workload::Motion::jump;
  else if (motion == "frozen")
    options.motion = hst::workload::Motion::frozen;
  else
    TORCH_CHECK_VALUE(false, where,
                      ": argument 'motion' must be drift, jump or frozen, got '", motion,
                      "'");
  options.churn = churn;
  options.k = k;
  options.width = int(B);
  options.seed = std::uint64_t(seed);
  auto const A = crs_from_tensors<double>(where, n_rows, n_cols, row_ptr, col_idx,
                                          values.to(at::kDouble));
  return translating([&] {
    hst::workload::Workload<double, Ordinal> w(A, options);
    auto const kk = std::int64_t(w.columns().size());
    auto cols = at::empty({steps, kk}, at::kInt);
    auto dx = at::empty({steps, kk, B}, at::kDouble);
    for (std::int64_t s = 0; s < steps; ++s)
    {
      if (s > 0)
        w.advance();
      std::copy(w.columns().begin(), w.columns().end(),
                cols.data_ptr<Ordinal>() + s * kk);
      std::copy(w.dx().begin(), w.dx().end(), dx.data_ptr<double>() + s * kk * B);
    }
    return std::make_tuple(cols, dx);
  });
}

} // namespace hst::torch_ext

// ---------------------------------------------------------------- registry

namespace
{

template <class Kind>
torch::class_<hst::torch_ext::Session<Kind>> &
session_methods(torch::class_<hst::torch_ext::Session<Kind>> &c)
{
  using S = hst::torch_ext::Session<Kind>;
  return c.def("apply_cols", &S::apply_cols)
      .def("time_steps", &S::time_steps)
      .def("stats", &S::stats)
      .def("width", &S::width)
      .def("num_rows", &S::num_rows)
      .def("num_cols", &S::num_cols)
      .def("steps", &S::steps);
}

template <class Kind>
void apply_op(c10::intrusive_ptr<hst::torch_ext::Session<Kind>> const &session,
              at::Tensor const &cols, at::Tensor const &dx, at::Tensor const &y)
{
  session->apply_cols(cols, dx, y);
}

} // namespace

TORCH_LIBRARY(hst, m)
{
  using namespace hst::torch_ext;
  auto scheduled = m.class_<ScheduledSession>("ScheduledSession");
  session_methods(scheduled);
  auto exact = m.class_<ExactSetSession>("ExactSetSession");
  session_methods(exact);
  auto scatter = m.class_<ScatterSession>("ScatterSession");
  session_methods(scatter);
  auto adaptive = m.class_<AdaptiveSessionObject>("AdaptiveSession");
  session_methods(adaptive)
      .def("active", &AdaptiveSessionObject::active)
      .def("report_text", &AdaptiveSessionObject::report_text)
      .def("report_totals", &AdaptiveSessionObject::report_totals)
      .def("report_decisions", &AdaptiveSessionObject::report_decisions)
      .def("reprobe", &AdaptiveSessionObject::reprobe);

  m.class_<OperatorObject>("Operator")
      .def(torch::init<std::int64_t, std::int64_t, at::Tensor, at::Tensor, at::Tensor,
                       std::int64_t, std::int64_t, bool>())
      .def("num_rows", &OperatorObject::num_rows)
      .def("num_cols", &OperatorObject::num_cols)
      .def("nnz", &OperatorObject::nnz)
      .def("tile_stats", &OperatorObject::tile_stats)
      .def("session", &OperatorObject::session)
      .def("baseline", &OperatorObject::baseline)
      .def("scatter", &OperatorObject::scatter)
      .def("adaptive", &OperatorObject::adaptive);

  // y is written in place: the schemas say so, so that TorchScript keeps the
  // calls and orders them against other uses of y. One op per session kind:
  // overloads that differ only in a custom class argument do not resolve in
  // eager mode (torch 1.13 tries the first overload and fails to convert).
  m.def("apply_cols_scheduled(__torch__.torch.classes.hst.ScheduledSession session, "
        "Tensor cols, Tensor dx, Tensor(a!) y) -> ()",
        apply_op<ScheduledKind>);
  m.def("apply_cols_exact_set(__torch__.torch.classes.hst.ExactSetSession session, "
        "Tensor cols, Tensor dx, Tensor(a!) y) -> ()",
        apply_op<ExactSetKind>);
  m.def("apply_cols_scatter(__torch__.torch.classes.hst.ScatterSession session, "
        "Tensor cols, Tensor dx, Tensor(a!) y) -> ()",
        apply_op<ScatterKind>);
  m.def("apply_cols_adaptive(__torch__.torch.classes.hst.AdaptiveSession session, "
        "Tensor cols, Tensor dx, Tensor(a!) y) -> ()",
        apply_op<AdaptiveKind>);
  m.def("suite_operator(str name) -> (int, int, Tensor, Tensor, Tensor)", suite_operator);
  m.def("workload(int n_rows, int n_cols, Tensor row_ptr, Tensor col_idx, Tensor values, "
        "str motion, float churn, int k, int B, int seed, int steps) -> (Tensor, Tensor)",
        workload_steps);
  m.def("live_objects() -> int",
        [] { return hst::torch_ext::KokkosLifetime::instance().live(); });
  m.def("kokkos_initialized_by_hst() -> bool",
        [] { return hst::torch_ext::KokkosLifetime::instance().initialized_here(); });
}
