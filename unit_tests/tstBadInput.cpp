// Bad input: every check throws std::invalid_argument naming the function,
// the argument and the offending value, leaves the caller's y untouched, and
// leaves the arm (and its planning state) as it was.

#include "HSTTestHelpers.hpp"

#include <cstring>
#include <stdexcept>

namespace
{

using namespace hst_test;

template <class ExecutionSpace>
struct BadInput : ::testing::Test
{};
TYPED_TEST_SUITE(BadInput, DeviceTypes);

constexpr Ordinal n_rows = 120, n_cols = 200;
constexpr int width = 4;
std::vector<Ordinal> const good_cols{5, 17, 42};

Triplets band()
{
  return hst::workload::rectangular_band<Scalar, Ordinal>(n_rows, n_cols, 2);
}

std::vector<Scalar> pattern(std::size_t n, double offset)
{
  std::vector<Scalar> v(n);
  for (std::size_t e = 0; e < n; ++e)
    v[e] = offset + double(e % 7) - 3.0;
  return v;
}

// One rejected apply_cols call: column ids, what its message must hold, and
// how far the rows and columns of dx and y are off a valid call's.
struct BadStep
{
  std::vector<Ordinal> cols;
  std::vector<std::string> pieces;
  int dx_rows = 0, dx_cols = 0, y_rows = 0, y_cols = 0;
};

std::vector<BadStep> bad_steps()
{
  return {{{5, -1, 42}, {"'cols'", "column id -1 at position 1", "[0, 200)"}},
          {{5, 200}, {"'cols'", "column id 200 at position 1", "[0, 200)"}},
          {{5, 17, 5}, {"'cols'", "column id 5 twice", "positions 0 and 2"}},
          {good_cols, {"'dx'", "has 2 rows", "'cols' holds 3"}, -1},
          {good_cols, {"'dx'", "has 5 columns", "B = 4"}, 0, 1},
          {good_cols, {"'y'", "has 119 rows", "operator has 120"}, 0, 0, -1},
          {good_cols, {"'y'", "has 3 columns", "B = 4"}, 0, 0, 0, -1}};
}

// Alternates a valid step on good_cols (checked against the host loop) with
// each bad step (checked to throw and to leave its y bitwise untouched), on
// the same arm object.
template <class ExecutionSpace, class Arm>
void expect_rejected_steps(Arm &arm, Triplets const &t, std::vector<BadStep> const &steps)
{
  using memory_space = typename ExecutionSpace::memory_space;
  using Y = Kokkos::View<Scalar **, Kokkos::LayoutRight, memory_space>;
  auto const cols = to_view<memory_space>(good_cols);
  auto const dx_values = pattern(good_cols.size() * width, 0.25);
  auto const dx = to_matrix_view<Kokkos::LayoutLeft, memory_space>(
      dx_values, good_cols.size(), width);
  auto expected = pattern(std::size_t(n_rows) * width, 0.5);
  Y const y = to_matrix_view<Kokkos::LayoutRight, memory_space>(expected, n_rows, width);
  auto valid_step = [&] {
    arm.apply_cols(cols, dx, y);
    reference_apply(t, good_cols, dx_values, width, expected);
    EXPECT_LE(relative_error(to_host_rows(y), expected), 1e-13);
  };

  valid_step();
  for (auto const &step : steps)
  {
    SCOPED_TRACE(step.pieces[0] + " " + step.pieces[1]);
    auto const bad_cols = to_view<memory_space>(step.cols);
    std::size_t const dx_rows = step.cols.size() + step.dx_rows;
    int const dx_cols = width + step.dx_cols;
    auto const bad_dx = to_matrix_view<Kokkos::LayoutLeft, memory_space>(
        pattern(dx_rows * dx_cols, 1.5), dx_rows, dx_cols);
    std::size_t const y_rows = n_rows + step.y_rows;
    int const y_cols = width + step.y_cols;
    Y const bad_y = step.y_rows == 0 && step.y_cols == 0
                        ? y
                        : to_matrix_view<Kokkos::LayoutRight, memory_space>(
                              pattern(y_rows * y_cols, 2.5), y_rows, y_cols);
    auto const before = to_host_rows(bad_y);
    auto pieces = step.pieces;
    pieces.push_back(Arm::name);
    expect_invalid([&] { arm.apply_cols(bad_cols, bad_dx, bad_y); }, pieces);
    auto const after = to_host_rows(bad_y);
    ASSERT_EQ(before.size(), after.size());
    EXPECT_EQ(std::memcmp(before.data(), after.data(), before.size() * sizeof(Scalar)),
              0);
    valid_step();
  }
}

TYPED_TEST(BadInput, apply_cols_rejects_bad_steps_and_keeps_working)
{
  using ExecutionSpace = TypeParam;
  using memory_space = typename ExecutionSpace::memory_space;
  auto const t = band();
  hst::Operator op(to_matrix<ExecutionSpace>(t));
  auto const steps = bad_steps();
  auto session = op.session(to_view<memory_space>(good_cols), width);
  auto baseline = op.baseline(width);
  auto scatter = op.scatter(width);
  expect_rejected_steps<ExecutionSpace>(session, t, steps);
  expect_rejected_steps<ExecutionSpace>(baseline, t, steps);
  expect_rejected_steps<ExecutionSpace>(scatter, t, steps);
  // Rejected calls are not steps, and never change the remembered column set:
  // the session was planned for good_cols when it was made, so no valid step
  // (all on good_cols) re-plans.
  auto const valid_steps = std::int64_t(steps.size()) + 1;
  EXPECT_EQ(session.stats().steps, valid_steps);
  EXPECT_EQ(session.stats().replans, 0);
  EXPECT_EQ(baseline.compiles(), 1);
}

TYPED_TEST(BadInput, strict_session_rejects_columns_outside_schedule)
{
  using ExecutionSpace = TypeParam;
  using memory_space = typename ExecutionSpace::memory_space;
  auto const t = band();
  hst::OperatorOptions options;
  options.tile = 1; // one column per tile: the schedule holds exactly good_cols
  hst::Operator op(to_matrix<ExecutionSpace>(t), options);
  hst::SessionOptions strict;
  strict.retire_after = 64;
  strict.strict = true;
  auto session = op.session(to_view<memory_space>(good_cols), width, strict);
  auto steps = bad_steps();
  steps.push_back({{5, 17, 60}, {"'cols'", "column id 60 at position 2", "strict"}});
  steps.push_back({{42, 5, 17, 61}, {"'cols'", "column id 61 at position 3"}});
  expect_rejected_steps<ExecutionSpace>(session, t, steps);
  EXPECT_EQ(session.stats().steps, std::int64_t(steps.size()) + 1);
  EXPECT_EQ(session.stats().replans, 0); // planned for good_cols when made
  EXPECT_EQ(session.stats().tiles_compiled, std::int64_t(good_cols.size()));
}

TYPED_TEST(BadInput, operator_options_are_checked)
{
  auto const A = to_matrix<TypeParam>(band());
  for (int bad : {0, -3})
  {
    hst::OperatorOptions tile, row_block;
    tile.tile = bad;
    row_block.row_block = bad;
    auto const got = "got " + std::to_string(bad);
    expect_invalid([&] { (void)hst::Operator(A, tile); },
                   {"hst::Operator: ", "'options.tile'", got});
    expect_invalid([&] { (void)hst::Operator(A, row_block); },
                   {"hst::Operator: ", "'options.row_block'", got});
  }
}

TYPED_TEST(BadInput, arm_creation_is_checked)
{
  using memory_space = typename TypeParam::memory_space;
  hst::Operator op(to_matrix<TypeParam>(band()));
  auto const expected = to_view<memory_space>(good_cols);
  for (int bad : {0, -2})
  {
    auto const got = "got " + std::to_string(bad);
    expect_invalid([&] { (void)op.session(expected, bad); },
                   {"hst::Operator::session", "'B'", got});
    expect_invalid([&] { (void)op.baseline(bad); },
                   {"hst::Operator::baseline", "'B'", got});
    expect_invalid([&] { (void)op.scatter(bad); },
                   {"hst::Operator::scatter", "'B'", got});
    hst::SessionOptions options;
    options.retire_after = bad;
    expect_invalid([&] { (void)op.session(expected, width, options); },
                   {"hst::Operator::session", "'options.retire_after'", got});
  }
  expect_invalid(
      [&] {
        (void)op.session(to_view<memory_space>(std::vector<Ordinal>{3, -1}));
      },
      {"hst::Operator::session", "'expected_cols'", "column id -1 at position 1",
       "[0, 200)"});
  expect_invalid(
      [&] { (void)op.session(to_view<memory_space>(std::vector<Ordinal>{200})); },
      {"hst::Operator::session", "'expected_cols'", "column id 200 at position 0"});
}

TYPED_TEST(BadInput, operator_rejects_out_of_range_csr_column)
{
  for (Ordinal bad : {-1, 5})
  {
    Triplets t(3, 5);
    for (Ordinal r = 0; r < 3; ++r)
      t.add(r, r, 4.0);
    t.add(1, bad, 1.0);
    auto const A = to_matrix<TypeParam>(t);
    expect_invalid([&] { (void)hst::Operator(A); },
                   {"hst::Operator: ", "'A'",
                    "column id " + std::to_string(bad) + " in row 1", "[0, 5)"});
  }
}

} // namespace
