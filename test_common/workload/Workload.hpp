#pragma once
// Deterministic sequences of changed column sets and dx values (MISSION.md):
// drift, jump and frozen motion at churn rho.

#include <KokkosSparse_CrsMatrix.hpp>
#include <Kokkos_Core.hpp>

#include <workload/Random.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace hst::workload
{

enum class Motion
{
  drift,  ///< oldest members leave; graph neighbours of members enter
  jump,   ///< random members leave; uniform non-members enter
  frozen, ///< the set never changes
};

inline char const *to_string(Motion m)
{
  switch (m)
  {
  case Motion::drift:
    return "drift";
  case Motion::jump:
    return "jump";
  case Motion::frozen:
    return "frozen";
  }
  return "?";
}

/// The motion named `name` ("drift", "jump", "frozen"), or none.
inline std::optional<Motion> motion_named(std::string const &name)
{
  for (Motion m : {Motion::drift, Motion::jump, Motion::frozen})
    if (name == to_string(m))
      return m;
  return std::nullopt;
}

/// MISSION.md's default set size: max(64, round(0.003 n)), at most n.
inline std::int64_t default_k(std::int64_t n_cols)
{
  return std::min<std::int64_t>(
      n_cols, std::max<std::int64_t>(64, std::llround(0.003 * double(n_cols))));
}

struct WorkloadOptions
{
  Motion motion = Motion::drift;
  double churn = 0.01; ///< expected fraction of the set replaced per step
  std::int64_t k = -1; ///< set size in [0, n_cols]; -1 means default_k(n_cols)
  int width = 8;       ///< B: columns of dx
  std::uint64_t seed = 1;
};

/// The changed sets S_t and values dx_t of one workload, step by step.
///
/// Each step replaces floor(rho k) members, plus one more with probability
/// frac(rho k) (stochastic rounding). Drift: the oldest members leave; each
/// entering column is a graph neighbour (row ids of column c and column ids of
/// row c, where those are column ids) of a random member, and if a few tries
/// find no free neighbour it is a uniform non-member (the documented
/// fallback). Jump: random members leave, uniform non-members enter. The
/// first set is a breadth-first ball around a random column for drift and
/// frozen (a localised set), uniform for jump. An entering column takes the
/// position of the one it replaces, so `columns()` keeps its order otherwise.
/// Leavers are chosen before entrants, so exactly last_replaced() columns
/// differ between consecutive steps.
template <class Scalar, class Ordinal>
class Workload
{
public:
  template <class Matrix>
  Workload(Matrix const &A, WorkloadOptions const &options)
      : options_(options)
      , random_(options.seed)
  {
    auto const row_map =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, A.graph.row_map);
    auto const entries =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, A.graph.entries);
    n_rows_ = Ordinal(A.numRows());
    n_cols_ = Ordinal(A.numCols());
    if (!(options.churn >= 0 && options.churn <= 1))
      throw std::invalid_argument("hst::workload::Workload: argument "
                                  "'options.churn' must lie in [0, 1], got " +
                                  std::to_string(options.churn));
    std::int64_t const k = options.k == -1 ? default_k(n_cols_) : options.k;
    if (k < 0 || k > n_cols_)
      throw std::invalid_argument(
          "hst::workload::Workload: argument 'options.k' = " + std::to_string(k) +
          " exceeds the " + std::to_string(n_cols_) + " columns");
    // Neighbour lists: rows of column c (CSC) and columns of row c (CSR).
    row_ptr_.assign(row_map.data(), row_map.data() + row_map.extent(0));
    row_cols_.assign(entries.data(), entries.data() + entries.extent(0));
    col_ptr_.assign(std::size_t(n_cols_) + 1, 0);
    for (auto c : row_cols_)
      ++col_ptr_[c + 1];
    for (Ordinal c = 0; c < n_cols_; ++c)
      col_ptr_[c + 1] += col_ptr_[c];
    col_rows_.resize(row_cols_.size());
    std::vector<std::size_t> next(col_ptr_.begin(), col_ptr_.end() - 1);
    for (Ordinal r = 0; r < n_rows_; ++r)
      for (auto p = row_ptr_[r]; p < row_ptr_[r + 1]; ++p)
        col_rows_[next[row_cols_[p]]++] = r;

    member_.assign(std::size_t(n_cols_), 0);
    columns_.reserve(std::size_t(k));
    if (options.motion == Motion::jump)
      while (std::int64_t(columns_.size()) < k)
        enter(Ordinal(random_.below(n_cols_)));
    else
      initial_ball(k);
    for (std::size_t i = 0; i < columns_.size(); ++i)
      age_order_.push_back(i);
    fill_dx();
  }

  std::vector<Ordinal> const &columns() const { return columns_; }
  /// dx for the current step, row-major k x B.
  std::vector<Scalar> const &dx() const { return dx_; }
  std::int64_t step() const { return step_; }
  /// Members replaced by the last advance().
  std::int64_t last_replaced() const { return last_replaced_; }
  std::int64_t fallbacks() const { return fallbacks_; }

  /// Moves to the next step's set and values.
  void advance()
  {
    ++step_;
    last_replaced_ = 0;
    if (options_.motion != Motion::frozen && !columns_.empty() &&
        std::int64_t(columns_.size()) < n_cols_)
    {
      double const expected = options_.churn * double(columns_.size());
      auto count = std::int64_t(std::floor(expected));
      if (random_.uniform() < expected - double(count))
        ++count;
      // Leavers stay members until the entrants are chosen: at most
      // n_cols - k columns can enter.
      count = std::min<std::int64_t>(
          count,
          std::min<std::int64_t>(std::int64_t(columns_.size()),
                                 std::int64_t(n_cols_) - std::int64_t(columns_.size())));
      replace(count);
      last_replaced_ = count;
    }
    fill_dx();
  }

private:
  bool is_member(Ordinal c) const { return member_[c] != 0; }

  void enter(Ordinal c)
  {
    if (is_member(c))
      return;
    member_[c] = 1;
    columns_.push_back(c);
  }

  void initial_ball(std::int64_t k)
  {
    std::vector<Ordinal> queue;
    while (std::int64_t(columns_.size()) < k)
    {
      Ordinal const seed = Ordinal(random_.below(n_cols_));
      if (is_member(seed))
        continue;
      queue.assign(1, seed);
      enter(seed);
      for (std::size_t head = 0; head < queue.size() && std::int64_t(columns_.size()) < k;
           ++head)
        for_each_neighbour(queue[head], [&](Ordinal c) {
          if (!is_member(c) && std::int64_t(columns_.size()) < k)
          {
            enter(c);
            queue.push_back(c);
          }
        });
    }
  }

  template <class F>
  void for_each_neighbour(Ordinal c, F &&f) const
  {
    for (auto p = col_ptr_[c]; p < col_ptr_[c + 1]; ++p)
      if (col_rows_[p] < n_cols_)
        f(Ordinal(col_rows_[p]));
    if (c < n_rows_)
      for (auto p = row_ptr_[c]; p < row_ptr_[c + 1]; ++p)
        f(row_cols_[p]);
  }

  Ordinal entering_column()
  {
    if (options_.motion == Motion::drift)
      for (int attempt = 0; attempt < 8; ++attempt)
      {
        Ordinal const anchor = columns_[random_.below(std::int64_t(columns_.size()))];
        candidates_.clear();
        for_each_neighbour(anchor, [&](Ordinal c) {
          if (!is_member(c))
            candidates_.push_back(c);
        });
        if (!candidates_.empty())
          return candidates_[random_.below(std::int64_t(candidates_.size()))];
      }
    if (options_.motion == Motion::drift)
      ++fallbacks_;
    for (;;)
    {
      Ordinal const c = Ordinal(random_.below(n_cols_));
      if (!is_member(c))
        return c;
    }
  }

  // Picks the leaving positions first, then the entering columns while the
  // leavers are still members, so that no column leaves and re-enters (or
  // enters and leaves) within one step: exactly `count` columns change.
  void replace(std::int64_t count)
  {
    leaving_.clear();
    for (std::int64_t m = 0; m < count; ++m)
    {
      // Drift: the oldest member leaves. Jump: a random one.
      auto const a = options_.motion == Motion::drift
                         ? std::size_t(0)
                         : std::size_t(random_.below(std::int64_t(age_order_.size())));
      leaving_.push_back(age_order_[a]);
      age_order_.erase(age_order_.begin() + std::ptrdiff_t(a));
    }
    entering_.clear();
    for (std::int64_t m = 0; m < count; ++m)
    {
      entering_.push_back(entering_column());
      member_[entering_.back()] = 1;
    }
    for (std::size_t m = 0; m < leaving_.size(); ++m)
    {
      member_[columns_[leaving_[m]]] = 0;
      columns_[leaving_[m]] = entering_[m];
      age_order_.push_back(leaving_[m]);
    }
  }

  void fill_dx()
  {
    dx_.resize(columns_.size() * std::size_t(options_.width));
    for (auto &v : dx_)
      v = Scalar(2 * random_.uniform() - 1);
  }

  WorkloadOptions options_;
  Random random_;
  Ordinal n_rows_ = 0;
  Ordinal n_cols_ = 0;
  std::vector<std::size_t> row_ptr_;
  std::vector<Ordinal> row_cols_;
  std::vector<std::size_t> col_ptr_;
  std::vector<Ordinal> col_rows_;
  std::vector<char> member_;
  std::vector<Ordinal> columns_;
  std::vector<std::size_t> age_order_; // positions, oldest first
  std::vector<Ordinal> candidates_;
  std::vector<std::size_t> leaving_;
  std::vector<Ordinal> entering_;
  std::vector<Scalar> dx_;
  std::int64_t step_ = 0;
  std::int64_t last_replaced_ = 0;
  std::int64_t fallbacks_ = 0;
};

} // namespace hst::workload
