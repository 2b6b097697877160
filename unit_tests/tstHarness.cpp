// The benchmarks' harness: the balanced order in which the sweep interleaves
// its rungs, and the median every tool reports.

#include <gtest/gtest.h>

#include "Harness.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

namespace
{

using hst::bench::balanced_order;

TEST(Harness, balanced_order_puts_each_rung_after_each_other_rung_equally_often)
{
  for (std::size_t n = 1; n <= 7; ++n)
  {
    SCOPED_TRACE(n);
    // A full cycle: n rounds for even n, 2n for odd n.
    int const rounds = int(n % 2 ? 2 * n : n);
    std::map<std::pair<std::size_t, std::size_t>, int> follows;
    std::vector<int> first(n, 0);
    for (int r = 0; r < rounds; ++r)
    {
      auto const order = balanced_order(n, r);
      ASSERT_EQ(order.size(), n);
      auto sorted = order;
      std::sort(sorted.begin(), sorted.end());
      for (std::size_t i = 0; i < n; ++i)
        ASSERT_EQ(sorted[i], i) << "round " << r << " is not a permutation";
      ++first[order[0]];
      for (std::size_t i = 1; i < n; ++i)
        ++follows[std::make_pair(order[i - 1], order[i])];
      // The cycle repeats.
      EXPECT_EQ(balanced_order(n, r + rounds), order);
    }
    for (std::size_t a = 0; a < n; ++a)
    {
      EXPECT_EQ(first[a], rounds / int(n)) << "rung " << a << " first";
      for (std::size_t b = 0; b < n; ++b)
      {
        if (a != b)
        {
          EXPECT_EQ(follows[std::make_pair(a, b)], rounds / int(n))
              << b << " right after " << a;
        }
      }
    }
  }
  EXPECT_TRUE(balanced_order(0, 3).empty());
  // Four rungs, as the sweep has: the Williams square.
  EXPECT_EQ(balanced_order(4, 0), (std::vector<std::size_t>{0, 1, 3, 2}));
  EXPECT_EQ(balanced_order(4, 1), (std::vector<std::size_t>{1, 2, 0, 3}));
}

TEST(Harness, median_of_odd_even_and_empty_samples)
{
  EXPECT_EQ(hst::bench::median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_EQ(hst::bench::median({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_TRUE(std::isnan(hst::bench::median({})));
}

} // namespace
