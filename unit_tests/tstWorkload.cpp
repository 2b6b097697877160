// Property tests of hst::workload::Workload against MISSION.md. Statistical
// bounds are 5 sigma (or a chi-square quantile of that tail); the seeds are
// fixed, so each run is deterministic anyway.

#include "HSTTestHelpers.hpp"
#include <workload/Workload.hpp>

#include <stdexcept>

namespace
{

using namespace hst_test;
namespace hw = hst::workload;
using hw::Motion;
using Host = Kokkos::DefaultHostExecutionSpace;
using Workload = hw::Workload<Scalar, Ordinal>;
using Set = std::vector<Ordinal>;

hw::WorkloadOptions options(Motion motion, double churn, std::uint64_t seed = 1)
{
  hw::WorkloadOptions w;
  w.motion = motion, w.churn = churn, w.seed = seed;
  return w;
}

Triplets grid(Ordinal nx, Ordinal ny) { return hw::grid_2d<Scalar, Ordinal>(nx, ny); }

std::string name(Motion motion, double rho)
{
  return std::string(hw::to_string(motion)) + " rho " + std::to_string(rho);
}

// Sorted a \ b (with duplicates of a kept).
Set minus(Set a, Set b)
{
  std::sort(a.begin(), a.end()), std::sort(b.begin(), b.end());
  Set out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

// Graph neighbours of each column: the row ids of column c and the column ids
// of row c, where those are column ids; not c itself.
std::vector<Set> neighbours(Triplets const &t)
{
  std::vector<Set> nb(t.n_cols);
  for (Ordinal r = 0; r < t.n_rows && r < t.n_cols; ++r)
    for (auto const &entry : t.rows[r])
      if (entry.first != r)
        nb[entry.first].push_back(r), nb[r].push_back(entry.first);
  return nb;
}

// Columns adjacent to a member of `a` or of `b`, as a 0/1 mask.
std::vector<char> near(std::vector<Set> const &nb, Set const &a, Set const &b)
{
  std::vector<char> mask(nb.size(), 0);
  for (auto const *set : {&a, &b})
    for (Ordinal c : *set)
      for (Ordinal d : nb[c])
        mask[d] = 1;
  return mask;
}

TEST(Workload, sets_have_k_distinct_columns_in_range)
{
  for (auto const &t : {grid(40, 40), hw::rectangular_band<Scalar, Ordinal>(300, 1200, 2),
                        hw::rectangular_band<Scalar, Ordinal>(1200, 300, 2)})
    for (Motion motion : {Motion::drift, Motion::jump, Motion::frozen})
    {
      SCOPED_TRACE(name(motion, 0.25) + " n_cols " + std::to_string(t.n_cols));
      Workload w(to_matrix<Host>(t), options(motion, 0.25));
      auto const k = std::size_t(hw::default_k(t.n_cols));
      for (int step = 0; step < 300; ++step, w.advance())
      {
        auto const s = minus(w.columns(), {}); // sorted
        ASSERT_EQ(s.size(), k);
        ASSERT_EQ(std::adjacent_find(s.begin(), s.end()), s.end()) << "duplicate";
        ASSERT_TRUE(s.front() >= 0 && s.back() < t.n_cols);
        ASSERT_EQ(w.dx().size(), k * 8);
      }
    }
}

TEST(Workload, replacements_average_rho_k_with_stochastic_rounding)
{
  // A step replaces floor(rho k) + X, X ~ Bernoulli(f), f = frac(rho k): over
  // T steps the total has mean T rho k and variance T f (1 - f). Allow 5 sd.
  auto const A = to_matrix<Host>(grid(100, 100));
  int const steps = 10000;
  for (Motion motion : {Motion::drift, Motion::jump})
    for (double rho : {0.002, 0.01, 0.05, 0.25})
    {
      SCOPED_TRACE(name(motion, rho));
      Workload w(A, options(motion, rho, 7));
      double const expected = rho * double(w.columns().size()); // k = 64
      auto const low = std::int64_t(std::floor(expected));
      double const f = expected - double(low);
      std::int64_t total = 0;
      for (int step = 0; step < steps; ++step)
      {
        w.advance();
        ASSERT_TRUE(w.last_replaced() == low || w.last_replaced() == low + 1)
            << w.last_replaced() << " at step " << step;
        total += w.last_replaced();
      }
      EXPECT_NEAR(double(total), steps * expected,
                  5 * std::sqrt(steps * f * (1 - f)) + 1e-9);
    }
}

TEST(Workload, set_difference_equals_last_replaced)
{
  auto const A = to_matrix<Host>(grid(100, 100));
  for (Motion motion : {Motion::drift, Motion::jump})
    for (double rho : {0.01, 0.05, 0.25})
    {
      SCOPED_TRACE(name(motion, rho));
      Workload w(A, options(motion, rho, 3));
      std::int64_t replaced = 0, changed = 0;
      int mismatches = 0, first = 0;
      for (int step = 1; step <= 2000; ++step)
      {
        auto const before = w.columns();
        w.advance();
        auto const entering = std::int64_t(minus(w.columns(), before).size());
        ASSERT_EQ(entering, std::int64_t(minus(before, w.columns()).size()));
        replaced += w.last_replaced(), changed += entering;
        if (entering != w.last_replaced() && mismatches++ == 0)
          first = step;
      }
      EXPECT_EQ(mismatches, 0) << "first at step " << first << "; " << changed
                               << " columns changed, last_replaced() summed to "
                               << replaced;
    }
}

TEST(Workload, drift_enters_neighbours_and_retires_the_oldest)
{
  auto const t = grid(60, 60);
  auto const nb = neighbours(t);
  for (double rho : {0.01, 0.25})
  {
    SCOPED_TRACE(name(Motion::drift, rho));
    Workload w(to_matrix<Host>(t), options(Motion::drift, rho, 11));
    // rho k = 0.64 replaces at most one column a step; 0.25 replaces ~16.
    bool const single = rho * double(w.columns().size()) <= 1;
    std::vector<int> entered_at(t.n_cols, 0); // the first set enters at 0
    for (int step = 1; step <= 2000; ++step)
    {
      auto const before = w.columns();
      auto const fallbacks = w.fallbacks();
      w.advance();
      auto const entering = minus(w.columns(), before);
      auto const leaving = minus(before, w.columns());
      // An entering column neighbours a member of the previous set (with one
      // replacement), or of the set as it stood when it entered (an earlier
      // entrant of this step); otherwise it must be a counted fallback.
      auto const near_set = near(nb, before, single ? Set{} : w.columns());
      std::int64_t strays = 0;
      for (Ordinal c : entering)
        strays += !near_set[c];
      EXPECT_LE(strays, w.fallbacks() - fallbacks) << "step " << step;
      // Leavers are the oldest: each entered no later than any member staying
      // (leavers are chosen before entrants, so none re-enters in its step).
      int youngest_leaver = -1, oldest_stayer = step;
      for (Ordinal c : leaving)
        youngest_leaver = std::max(youngest_leaver, entered_at[c]);
      for (Ordinal c : minus(before, leaving))
        oldest_stayer = std::min(oldest_stayer, entered_at[c]);
      EXPECT_LE(youngest_leaver, oldest_stayer) << "step " << step;
      for (Ordinal c : entering)
        entered_at[c] = step;
    }
  }
}

TEST(Workload, jump_enters_uniformly_and_not_near_the_set)
{
  // A chain of n columns, k = 64, 16 replacements a step for 2000 steps.
  Ordinal const n = 10000;
  auto const t = hw::rectangular_band<Scalar, Ordinal>(n, n, 1);
  auto const A = to_matrix<Host>(t);
  auto const nb = neighbours(t);
  std::int64_t total[2] = {}, close[2] = {}, drift_fallbacks = 0;
  std::vector<std::int64_t> buckets(10, 0); // jump's entries by column id
  for (Motion motion : {Motion::jump, Motion::drift})
  {
    int const m = motion == Motion::drift;
    Workload w(A, options(motion, 0.25, 5));
    for (int step = 0; step < 2000; ++step)
    {
      auto const before = w.columns();
      w.advance();
      auto const near_set = near(nb, before, w.columns());
      for (Ordinal c : minus(w.columns(), before))
      {
        buckets[std::size_t(c) * 10 / std::size_t(n)] += !m;
        ++total[m];
        close[m] += near_set[c];
      }
    }
    drift_fallbacks = w.fallbacks();
  }
  // Jump is invariant under relabelling columns and starts from a uniform
  // set, so each entering column is uniform over all n and the bucket counts
  // are ~ multinomial(total, 1/10). Entries exclude current members and each
  // other, which only evens the counts out, so the multinomial chi-square (9
  // dof) is conservative: P(chi2_9 > 50) = 1.1e-7 < 2.9e-7, the 5-sigma tail.
  ASSERT_GT(total[0], 10000);
  double const expected = double(total[0]) / 10;
  double chi2 = 0;
  for (auto b : buckets)
    chi2 += (double(b) - expected) * (double(b) - expected) / expected;
  EXPECT_LT(chi2, 50.0) << "over " << total[0] << " jump entries";
  // Not concentrated near the set: at most 2 (k + 16) non-members neighbour
  // the old or new set, out of n - k candidates, so each jump entry is near
  // with p <= 160 / 9936 (1.6%); allow 5 binomial sd. Drift on the same chain
  // enters only next to the set, bar counted fallbacks.
  double const p = 2.0 * (64 + 16) / double(n - 64);
  EXPECT_LE(double(close[0]), total[0] * p + 5 * std::sqrt(total[0] * p * (1 - p)))
      << "of " << total[0];
  EXPECT_GE(close[1], total[1] - drift_fallbacks);
}

TEST(Workload, frozen_set_never_changes_but_dx_does)
{
  Workload w(to_matrix<Host>(grid(50, 50)), options(Motion::frozen, 0.25));
  auto const first = w.columns();
  for (int step = 1; step <= 200; ++step)
  {
    auto const dx = w.dx();
    w.advance();
    ASSERT_EQ(w.columns(), first) << "step " << step;
    EXPECT_EQ(w.last_replaced(), 0);
    EXPECT_NE(w.dx(), dx) << "step " << step;
  }
}

TEST(Workload, seed_determines_the_sequence)
{
  auto const A = to_matrix<Host>(hw::shuffled(grid(60, 60), 4));
  for (Motion motion : {Motion::drift, Motion::jump, Motion::frozen})
  {
    SCOPED_TRACE(hw::to_string(motion));
    Workload a(A, options(motion, 0.05, 21)), b(A, options(motion, 0.05, 21)),
        c(A, options(motion, 0.05, 22));
    bool other_set = false, other_dx = false;
    for (int step = 0; step < 100; ++step, a.advance(), b.advance(), c.advance())
    {
      ASSERT_EQ(a.columns(), b.columns()) << "step " << step;
      ASSERT_EQ(a.dx(), b.dx()) << "step " << step; // bitwise
      other_set = other_set || a.columns() != c.columns();
      other_dx = other_dx || a.dx() != c.dx();
    }
    EXPECT_TRUE(other_set);
    EXPECT_TRUE(other_dx);
  }
}

TEST(Workload, default_k)
{
  EXPECT_EQ(hw::default_k(1000), 64);
  EXPECT_EQ(hw::default_k(100000), 300);
  EXPECT_EQ(hw::default_k(10), 10);
  // k = -1 picks it, capped at n.
  EXPECT_EQ(Workload(to_matrix<Host>(grid(5, 2)), {}).columns().size(), 10u);
}

TEST(Workload, invalid_options_throw)
{
  auto const A = to_matrix<Host>(grid(10, 10));
  for (double churn : {-0.01, 1.01, -1.0, 2.0})
    EXPECT_THROW(Workload(A, options(Motion::jump, churn)), std::invalid_argument)
        << churn;
  for (double churn : {0.0, 1.0})
    EXPECT_NO_THROW(Workload(A, options(Motion::jump, churn))) << churn;
  auto w = options(Motion::drift, 0.1);
  w.k = 101;
  EXPECT_THROW(Workload(A, w), std::invalid_argument);
  w.k = 100;
  EXPECT_NO_THROW(Workload(A, w));
}

} // namespace
