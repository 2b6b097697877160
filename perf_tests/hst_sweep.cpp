// hst-sweep: every HST arm on every operator of the suite, under each motion
// and churn, at B = 8 and the default k; plus the cost growth at fixed k and
// the preparation cost. Prints progress and the summary tables, writes
// sweep.csv, growth.csv, preparation.csv and sweep.json into --out.
//
//   hst-sweep --help
//
// Timing (perf_tests/Harness.hpp): each case runs every arm over the same
// staged steps in interleaved rounds of one pass per arm, so machine noise
// hits them alike; the rounds follow a balanced order (balanced_order), so
// that no arm always runs right after the same other arm and inherits its
// leftovers. R rounds, or more for short cases (--min-time); the reported
// us/step is the median pass.
// Every pass's answer is checked against the full recompute.
// Each operator's cases run in a child process of their own (Measurer), so
// that what earlier operators left in a process (its heap, its caches) does
// not reach them; --one-process runs them all here.

#include "Harness.hpp"
#include <sys/wait.h>
#include <unistd.h>
#include <workload/Generators.hpp>
#include <workload/MatrixMarket.hpp>
#include <workload/Suite.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>

namespace
{

using namespace hst::bench;
using hst::workload::Motion;
using SuiteOperator = hst::workload::SuiteOperator<Scalar, Ordinal>;

struct Arguments
{
  bool quick = false;
  // The "microsecond steps" regime (issue 14): suite operators of 1e4 to 3e5
  // rows at the default k (0.3% of n), each pass timed from an empty arm or
  // session: making it and its first step are charged inside the run.
  bool microsecond = false;
  // The adaptive session with the cost model, its constants calibrated
  // (Operator::calibrate) once per process: on each operator, or with
  // --one-process on the first.
  bool model = false;
  bool growth = true;
  bool list = false;
  std::string out = "hst-results";
  std::vector<std::string> operators;
  std::vector<std::string> mtx;
  std::vector<Motion> motions = {Motion::drift, Motion::jump, Motion::frozen};
  std::vector<double> rhos = {0.002, 0.01, 0.05, 0.25};
  int steps = 200;
  // Passes per case (see measure_arms): at least `repeats` per rung (-1: 3
  // with --quick, 5 otherwise), more until the fastest rung's timed steps add
  // up to min_time seconds, in whole cycles of the balanced order, but no
  // more than max_repeats (or repeats, if larger).
  int repeats = -1;
  double min_time = 0.2;
  int max_repeats = 128;
  bool noise_floor = false;
  // --variant: the adaptive session again with these options changed, timed
  // in the same rounds as the one with the defaults.
  std::string variant_text;
  std::optional<hst::AdaptiveOptions> variant;
  // --variant model=0|1|op: the variant without or with the cost model (by
  // default it has the model where --model gives the session one); with
  // model=op its constants are calibrated on each operator, not the first.
  std::optional<bool> variant_model;
  bool model_per_operator = false;
  int width = 8;
  Layout layout = Layout::left;
  // Each operator's cases (and each growth point) run in a child process of
  // their own unless --one-process: a case's times then do not depend on
  // what the operators before it left in the process (its heap, its caches).
  bool one_process = false;
};

constexpr char const *usage =
    "usage: hst-sweep [--quick] [--out DIR] [--operators NAME,...] [--mtx FILE]...\n"
    "                 [--motions drift,jump,frozen] [--rho 0.002,0.01,0.05,0.25]\n"
    "                 [--steps 200] [--repeats R] [--min-time S] [--max-repeats N]\n"
    "                 [--B 8] [--layout left|right] [--noise-floor] [--no-growth]\n"
    "                 [--variant NAME=VALUE,...] [--one-process] [--list]\n"
    "  --quick       the quick suite (about 3 minutes on 2 cores), at least 3 passes\n"
    "  --microsecond the microsecond-steps regime: full-suite operators of 1e4 to\n"
    "                3e5 rows, each arm's and the session's making and first step\n"
    "                charged inside its us/step (no growth series)\n"
    "  --model       the adaptive session with its cost model (AdaptiveOptions::model),\n"
    "                calibrated once per process: on each operator, or with\n"
    "                --one-process on the first (time printed, not charged)\n"
    "  --out DIR     where sweep.csv, sweep.json, preparation.csv, growth.csv and\n"
    "                sweep-summary.txt go (default hst-results)\n"
    "  --operators   suite operators by name (see --list) instead of the suite\n"
    "  --mtx FILE    also measure a Matrix Market file (.mtx or .mtx.gz)\n"
    "  --repeats R   passes per arm and case, median reported (default 5; 3 quick);\n"
    "                the arms are interleaved in balanced orders (Williams design),\n"
    "                in whole cycles of it (4 rounds; 8 with --noise-floor)\n"
    "  --min-time S  more passes, until the fastest arm's timed steps add up to S\n"
    "                seconds (default 0.2) ...\n"
    "  --max-repeats N  ... but at most N passes (default 128)\n"
    "  --layout L    Kokkos layout of x, y and each step's k x B dx: left\n"
    "                (LayoutLeft, default) or right (LayoutRight)\n"
    "  --noise-floor also time a second copy of each arm and of the adaptive\n"
    "                session in the same rounds, and report each case's best arm\n"
    "                against its copy: the table the adaptive session's is read\n"
    "                against (about twice the time)\n"
    "  --variant NAME=VALUE,...  also time the adaptive session with these\n"
    "                AdaptiveOptions changed (warmup_steps, scheduled_extra_warmup,\n"
    "                scheduled_rise_warmup, scheduled_settle_steps, measure_steps,\n"
    "                scheduled_confirm_steps, scheduled_confirm_ratio,\n"
    "                cut_ratio, switch_margin,\n"
    "                time_shift_ratio, model_margin, defer_jump_share (2: off);\n"
    "                model=1 gives it the cost model,\n"
    "                calibrated as --model does, model=op the same calibrated on\n"
    "                each operator before its cases (time printed, not charged),\n"
    "                model=0 takes it away), in the same\n"
    "                rounds, and report it beside the default session (not with\n"
    "                --noise-floor)\n"
    "  --no-growth   skip the cost-growth series (1e4 to 1e6 rows at k = 300)\n"
    "  --one-process every operator in this process, one after the other; by\n"
    "                default each operator's cases (and each growth point) run in\n"
    "                a child process of their own, Kokkos initialized there, so\n"
    "                that no operator's times depend on those measured before it\n"
    "  --list        print the selected operators and exit\n";

[[noreturn]] void usage_error(std::string const &message)
{
  std::cerr << "hst-sweep: " << message << "\n" << usage;
  std::exit(2);
}

std::vector<std::string> split(std::string const &list)
{
  std::vector<std::string> items;
  std::stringstream in(list);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty())
      items.push_back(item);
  return items;
}

double parse_number(std::string const &flag, std::string const &text)
{
  return number_argument(flag, text, usage_error);
}

int parse_count(std::string const &flag, std::string const &text, int minimum)
{
  return count_argument(flag, text, minimum, usage_error);
}

// The cost model's constants of this process, calibrated on its first
// operator (--model, --variant model=1) or on each (--variant model=op).
std::optional<hst::CostConstants> &model_constants()
{
  static std::optional<hst::CostConstants> constants;
  return constants;
}

// AdaptiveOptions with the fields in "name=value,..." changed (--variant).
hst::AdaptiveOptions parse_variant(std::string const &flag, std::string const &text,
                                   std::optional<bool> &model, bool &per_operator)
{
  hst::AdaptiveOptions o;
  for (auto const &item : split(text))
  {
    auto const eq = item.find('=');
    std::string const name = item.substr(0, eq);
    if (eq == std::string::npos)
      usage_error("argument '" + flag + "' expects NAME=VALUE, got '" + item + "'");
    std::string const value = item.substr(eq + 1);
    if (name == "warmup_steps")
      o.warmup_steps = parse_count(flag, value, 0);
    else if (name == "scheduled_extra_warmup")
      o.scheduled_extra_warmup = parse_count(flag, value, 0);
    else if (name == "scheduled_rise_warmup")
      o.scheduled_rise_warmup = parse_count(flag, value, 0);
    else if (name == "scheduled_settle_steps")
      o.scheduled_settle_steps = parse_count(flag, value, 0);
    else if (name == "scheduled_confirm_steps")
      o.scheduled_confirm_steps = parse_count(flag, value, 0);
    else if (name == "scheduled_confirm_ratio")
      o.scheduled_confirm_ratio = parse_number(flag, value);
    else if (name == "measure_steps")
      o.measure_steps = parse_count(flag, value, 1);
    else if (name == "cut_ratio")
      o.cut_ratio = parse_number(flag, value);
    else if (name == "switch_margin")
      o.switch_margin = parse_number(flag, value);
    else if (name == "time_shift_ratio")
      o.time_shift_ratio = parse_number(flag, value);
    else if (name == "model_margin")
      o.model_margin = parse_number(flag, value);
    else if (name == "defer_jump_share")
      o.defer_jump_share = parse_number(flag, value);
    else if (name == "model")
    {
      if (value != "0" && value != "1" && value != "op")
        usage_error("argument '" + flag + "': 'model' takes 0, 1 or op, got '" + value +
                    "'");
      model = value != "0";
      per_operator = value == "op";
    }
    else
      usage_error("argument '" + flag + "': unknown or unsupported option '" + name +
                  "'");
  }
  return o;
}

Arguments parse(int argc, char *argv[])
{
  Arguments a;
  for (int i = 1; i < argc; ++i)
  {
    std::string const flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        usage_error("argument '" + flag + "' needs a value");
      return argv[++i];
    };
    if (flag.rfind("--kokkos", 0) == 0)
      continue; // Kokkos' own arguments, read by Kokkos::initialize
    else if (flag == "--help" || flag == "-h")
    {
      std::cout << usage;
      std::exit(0);
    }
    else if (flag == "--quick")
      a.quick = true;
    else if (flag == "--microsecond")
    {
      a.microsecond = true;
      a.growth = false;
    }
    else if (flag == "--model")
      a.model = true;
    else if (flag == "--no-growth")
      a.growth = false;
    else if (flag == "--noise-floor")
      a.noise_floor = true;
    else if (flag == "--variant")
    {
      a.variant_text = value();
      a.variant =
          parse_variant(flag, a.variant_text, a.variant_model, a.model_per_operator);
    }
    else if (flag == "--one-process")
      a.one_process = true;
    else if (flag == "--list")
      a.list = true;
    else if (flag == "--out")
      a.out = value();
    else if (flag == "--operators")
      a.operators = split(value());
    else if (flag == "--mtx")
      a.mtx.push_back(value());
    else if (flag == "--motions")
    {
      a.motions.clear();
      for (auto const &m : split(value()))
        if (auto const motion = hst::workload::motion_named(m))
          a.motions.push_back(*motion);
        else
          usage_error("argument '--motions': unknown motion '" + m +
                      "' (drift, jump, frozen)");
    }
    else if (flag == "--rho")
    {
      a.rhos.clear();
      for (auto const &r : split(value()))
      {
        double const rho = parse_number(flag, r);
        if (!(rho >= 0 && rho <= 1))
          usage_error("argument '--rho' must lie in [0, 1], got " + r);
        a.rhos.push_back(rho);
      }
    }
    else if (flag == "--steps")
      a.steps = parse_count(flag, value(), 2);
    else if (flag == "--repeats")
      a.repeats = parse_count(flag, value(), 1);
    else if (flag == "--min-time")
    {
      std::string const text = value();
      a.min_time = parse_number(flag, text);
      if (!(a.min_time >= 0))
        usage_error("argument '--min-time' must be >= 0, got " + text);
    }
    else if (flag == "--max-repeats")
      a.max_repeats = parse_count(flag, value(), 1);
    else if (flag == "--B")
      a.width = parse_count(flag, value(), 1);
    else if (flag == "--layout")
    {
      std::string const name = value();
      auto const layout = parse_layout(name);
      if (!layout)
        usage_error("argument '--layout' expects left or right, got '" + name + "'");
      a.layout = *layout;
    }
    else
      usage_error("unknown argument '" + flag + "'");
  }
  if (a.repeats < 0)
    a.repeats = a.quick ? 3 : 5;
  if (a.motions.empty() || a.rhos.empty())
    usage_error("'--motions' and '--rho' need at least one value");
  if (a.variant && a.noise_floor)
    usage_error("'--variant' and '--noise-floor' both time second copies: choose one");
  return a;
}

double geomean(std::vector<double> const &v)
{
  double log_sum = 0;
  for (double x : v)
    log_sum += std::log(x);
  return v.empty() ? std::nan("") : std::exp(log_sum / double(v.size()));
}

std::string fixed(double x, int digits)
{
  if (std::isnan(x))
    return "-";
  if (std::isinf(x))
    return "never";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, x);
  return buffer;
}

// A text table whose columns are as wide as their widest cell.
class Table
{
public:
  explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void print(std::ostream &out) const
  {
    std::vector<std::size_t> width(rows_[0].size(), 0);
    for (auto const &row : rows_)
      for (std::size_t c = 0; c < row.size(); ++c)
        width[c] = std::max(width[c], row[c].size());
    for (std::size_t r = 0; r < rows_.size(); ++r)
    {
      for (std::size_t c = 0; c < rows_[r].size(); ++c)
      {
        auto const &cell = rows_[r][c];
        std::string const pad(width[c] - cell.size(), ' ');
        out << (c == 0 ? cell + pad : "  " + pad + cell);
      }
      out << "\n";
      if (r == 0)
      {
        std::size_t total = 0;
        for (auto w : width)
          total += w + 2;
        out << std::string(total - 2, '-') << "\n";
      }
    }
  }

private:
  std::vector<std::vector<std::string>> rows_;
};

// Everything measured on one operator under one motion and churn.
struct Case
{
  std::string op;
  std::string family;
  Motion motion = Motion::drift;
  double rho = 0;
  int k = 0;
  double changed_nnz = 0;
  double replaced = 0;
  std::map<Rung, double> us; // median us/step per arm
  // The same of each arm's second copy (--noise-floor), or of the adaptive
  // session with the variant's options (--variant).
  std::map<Rung, double> us_again;
  std::map<Rung, double> rel_error;
  int passes = 0; // per arm

  /// The fastest of the three arms (the adaptive session is not a choice).
  Rung best() const
  {
    Rung best = arm_rungs().front();
    for (Rung arm : arm_rungs())
      if (us.at(arm) < us.at(best))
        best = arm;
    return best;
  }
};

struct OperatorInfo
{
  std::string name;
  std::string family;
  bool shuffled = false;
  std::int64_t rows = 0, cols = 0, nnz = 0;
  double generate_seconds = 0;
  double operator_seconds = 0; // hst::Operator: CSC copy + tile index
  hst::TileStats tiles;
  double full_us = 0;                   // rung (a), us/step
  std::map<Rung, double> arm_prepare_s; // making the arm + its first step
};

struct GrowthPoint
{
  std::string op;
  std::int64_t rows = 0;
  int k = 0;
  double changed_nnz = 0;
  std::map<Rung, double> us;
};

// The sweep's operators: the suite (or the named ones) plus Matrix Market files.
std::vector<SuiteOperator> select_operators(Arguments const &a)
{
  std::vector<SuiteOperator> ops;
  if (a.operators.empty())
    ops = hst::workload::operator_suite<Scalar, Ordinal>(
        a.quick ? hst::workload::SuiteScale::quick : hst::workload::SuiteScale::full);
  if (a.microsecond && a.operators.empty())
    ops.erase(std::remove_if(ops.begin(), ops.end(),
                             [](SuiteOperator const &o) {
                               return o.rows < 10000 || o.rows > 300000;
                             }),
              ops.end());
  for (auto const &name : a.operators)
  {
    try
    {
      ops.push_back(hst::workload::suite_operator<Scalar, Ordinal>(name));
    }
    catch (std::invalid_argument const &e)
    {
      usage_error(e.what());
    }
  }
  for (auto const &path : a.mtx)
  {
    SuiteOperator op;
    op.name = std::filesystem::path(path).filename().string();
    op.family = "matrix_market";
    op.rows = -1;
    op.shuffled = false;
    op.build = [path] {
      return hst::workload::read_matrix_market<Scalar, Ordinal>(path);
    };
    ops.push_back(std::move(op));
  }
  return ops;
}

// Builds A and its hst::Operator, timing both.
Matrix build(SuiteOperator const &entry, OperatorInfo &info,
             std::optional<HSTOperator> &op)
{
  auto const start = std::chrono::steady_clock::now();
  auto const A = hst::workload::to_crs<Matrix>(entry.build());
  info.generate_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  info.name = entry.name;
  info.family = entry.family;
  info.shuffled = entry.shuffled;
  info.rows = A.numRows();
  info.cols = A.numCols();
  info.nnz = std::int64_t(A.nnz());
  info.operator_seconds = time_operator_build(A, op);
  info.tiles = op->tile_stats();
  return A;
}

// What the sweep measures per case: the three arms and the adaptive session.
std::vector<Rung> const &measured_rungs()
{
  static std::vector<Rung> const rungs = {Rung::scatter, Rung::exact, Rung::scheduled,
                                          Rung::adaptive};
  return rungs;
}

// Median us/step of each measured rung over interleaved passes: `repeats`
// rounds, or more, until the shortest rung's timed steps add up to
// min_seconds (judged from round 0), rounded up to whole cycles of the
// balanced order (4 rounds for the 4 rungs), all up to max_repeats. Short
// cases (a few us per step) thus get the many passes their noise needs.
// With `again`, a second copy of each rung runs in the same rounds and its
// medians go there (--noise-floor); with a.variant as well, only the adaptive
// rung's, with the variant's options (--variant).
template <class L>
std::map<Rung, double>
measure_arms(Staged<L> const &p, HSTOperator const &op, Arguments const &a,
             std::map<Rung, double> *rel_error, std::map<Rung, double> *prepare_s,
             int *rounds_run = nullptr, std::map<Rung, double> *again = nullptr)
{
  typename Staged<L>::MultiVector y("hst::sweep::y", p.A.numRows(), p.width);
  // What each round runs: the measured rungs, then (again) a second copy of
  // each, timed and kept apart.
  std::vector<std::pair<Rung, bool>> slots;
  for (Rung r : measured_rungs())
    slots.emplace_back(r, false);
  if (again)
    for (Rung r : measured_rungs())
      if (!a.variant || r == Rung::adaptive)
        slots.emplace_back(r, true);
  // Whole cycles of the balanced order, so that each slot follows each other
  // slot equally often.
  int const cycle = int(slots.size() % 2 ? 2 * slots.size() : slots.size());
  std::map<Rung, std::vector<double>> us, prep, us_again;
  int rounds = a.repeats;
  for (int r = 0; r < rounds; ++r)
  {
    for (std::size_t i : balanced_order(slots.size(), r))
    {
      auto const [arm, copy] = slots[i];
      Pass pass;
      if (copy && a.variant)
      {
        // Swapped outside the timed pass; the cost model (--model) is shared
        // unless the variant says model=0 or model=1.
        hst::AdaptiveOptions const defaults = adaptive_options();
        adaptive_options() = *a.variant;
        adaptive_options().model = !a.variant_model   ? defaults.model
                                   : *a.variant_model ? model_constants()
                                                      : std::nullopt;
        pass = run_rung(arm, p, op, y);
        adaptive_options() = defaults;
      }
      else
        pass = run_rung(arm, p, op, y);
      if (rel_error)
        (*rel_error)[arm] = std::max((*rel_error)[arm], pass.rel_error);
      // --microsecond: the whole run, making and first step included (copies
      // alike).
      double const us_per_step =
          a.microsecond
              ? (1e6 * pass.prepare_seconds + pass.us_per_step * double(p.steps - 1)) /
                    double(p.steps)
              : pass.us_per_step;
      if (copy)
      {
        us_again[arm].push_back(us_per_step);
        continue;
      }
      us[arm].push_back(us_per_step);
      prep[arm].push_back(pass.prepare_seconds);
    }
    if (r == 0)
    {
      double shortest = std::numeric_limits<double>::infinity();
      for (auto const &[arm, v] : us)
        shortest = std::min(shortest, 1e-6 * v[0] * double(p.steps - 1));
      double const wanted = std::max(std::ceil(a.min_time / shortest), double(a.repeats));
      double const whole = std::ceil(wanted / cycle) * cycle;
      rounds = int(std::min(whole, double(std::max(a.repeats, a.max_repeats))));
    }
  }
  if (rounds_run)
    *rounds_run = rounds;
  if (again)
    for (auto const &[arm, v] : us_again)
      (*again)[arm] = median(v);
  std::map<Rung, double> result;
  for (auto const &[arm, v] : us)
    result[arm] = median(v);
  if (prepare_s)
    for (auto const &[arm, v] : prep)
      (*prepare_s)[arm] = median(v);
  return result;
}

hst::workload::WorkloadOptions workload_options(Motion m, double rho, int width,
                                                std::int64_t k = -1)
{
  hst::workload::WorkloadOptions w;
  w.motion = m;
  w.churn = rho;
  w.width = width;
  w.k = k;
  w.seed = 20261202;
  return w;
}

std::string arm_list(std::map<Rung, double> const &us)
{
  std::string s;
  for (auto const &[arm, t] : us)
    s += std::string("  ") + to_string(arm) + " " + fixed(t, 2);
  return s;
}

// Steps after which preparation has paid for itself against full recompute.
double break_even(double prepare_s, double arm_us, double full_us)
{
  return full_us > arm_us ? std::ceil(1e6 * prepare_s / (full_us - arm_us))
                          : std::numeric_limits<double>::infinity();
}

// t_best / t_other of each case, by motion and churn: `other` is the adaptive
// session (probe steps included), or the best arm's second copy.
void print_vs_best(std::ostream &out, std::vector<Case> const &cases,
                   std::vector<std::pair<Motion, double>> const &groups,
                   std::string const &title,
                   std::function<double(Case const &)> const &other_us)
{
  out << "\n" << title << "\n";
  Table t({"motion", "rho", "n", "geomean", "min", ">= 0.9"});
  std::vector<double> all;
  double frozen_min = std::numeric_limits<double>::infinity();
  for (auto const &[motion, rho] : groups)
  {
    std::vector<double> ratios;
    for (auto const &c : cases)
      if (c.motion == motion && c.rho == rho)
        ratios.push_back(c.us.at(c.best()) / other_us(c));
    if (motion == Motion::frozen)
      for (double r : ratios)
        frozen_min = std::min(frozen_min, r);
    all.insert(all.end(), ratios.begin(), ratios.end());
    auto const good =
        std::count_if(ratios.begin(), ratios.end(), [](double r) { return r >= 0.9; });
    t.add({hst::workload::to_string(motion), fixed(rho, 3), std::to_string(ratios.size()),
           fixed(geomean(ratios), 3),
           fixed(*std::min_element(ratios.begin(), ratios.end()), 3),
           std::to_string(good) + "/" + std::to_string(ratios.size())});
  }
  t.print(out);
  auto const good =
      std::count_if(all.begin(), all.end(), [](double r) { return r >= 0.9; });
  out << "  all cases: " << good << "/" << all.size() << " ("
      << fixed(100.0 * double(good) / double(all.size()), 1)
      << "%) at >= 0.9x the best arm, geomean " << fixed(geomean(all), 3) << ", min "
      << fixed(*std::min_element(all.begin(), all.end()), 3);
  if (std::isfinite(frozen_min))
    out << ", frozen min " << fixed(frozen_min, 3);
  out << "\n";
}

void print_summary(std::ostream &out, std::vector<Case> const &cases,
                   std::vector<OperatorInfo> const &infos, Arguments const &a,
                   int concurrency)
{
  std::map<std::string, double> full_us;
  for (auto const &info : infos)
    full_us[info.name] = info.full_us;
  auto const &arms = arm_rungs();

  int fewest = 0, most = 0;
  for (auto const &c : cases)
  {
    fewest = fewest == 0 ? c.passes : std::min(fewest, c.passes);
    most = std::max(most, c.passes);
  }
  out << "\nSummary: " << ExecutionSpace::name() << " with " << concurrency
      << " thread(s), B = " << a.width << ", x, y and each step's dx in Layout"
      << (a.layout == Layout::left ? "Left" : "Right") << " (--layout "
      << to_string(a.layout) << "), " << a.steps << " steps; each case's arms in "
      << fewest << " to " << most << " balanced rounds, median pass reported\n";
  out << "\nSpeedups, geomean over operators (t_right / t_left: >1 means the left arm "
         "is faster)\n";
  std::vector<std::string> header = {"motion", "rho", "n"};
  std::vector<std::pair<Rung, Rung>> pairs;
  for (std::size_t i = 0; i < arms.size(); ++i)
    for (std::size_t j = i + 1; j < arms.size(); ++j)
    {
      pairs.emplace_back(arms[j], arms[i]);
      header.push_back(std::string(to_string(arms[j])) + "/" + to_string(arms[i]));
    }
  header.push_back("best/full");
  for (Rung arm : arms)
    header.push_back(std::string("wins ") + to_string(arm));
  Table speed(header);

  std::vector<std::string> regret_header = {"motion", "rho"};
  for (Rung arm : arms)
    regret_header.push_back(to_string(arm));
  Table worst(regret_header);

  std::map<Rung, double> overall_worst;
  std::map<Rung, std::string> overall_where;
  std::vector<std::pair<Motion, double>> groups;
  for (auto const &c : cases)
    if (std::find(groups.begin(), groups.end(), std::make_pair(c.motion, c.rho)) ==
        groups.end())
      groups.emplace_back(c.motion, c.rho);
  for (auto const &[motion, rho] : groups)
  {
    std::vector<Case const *> group;
    for (auto const &c : cases)
      if (c.motion == motion && c.rho == rho)
        group.push_back(&c);
    std::vector<std::string> row = {hst::workload::to_string(motion), fixed(rho, 3),
                                    std::to_string(group.size())};
    for (auto const &[left, right] : pairs)
    {
      std::vector<double> ratios;
      for (auto const *c : group)
        ratios.push_back(c->us.at(right) / c->us.at(left));
      row.push_back(fixed(geomean(ratios), 2));
    }
    std::vector<double> best_vs_full;
    std::map<Rung, int> wins;
    std::map<Rung, double> loss;
    for (auto const *c : group)
    {
      Rung const best = c->best();
      best_vs_full.push_back(full_us.at(c->op) / c->us.at(best));
      ++wins[best];
      for (Rung arm : arms)
      {
        double const l = c->us.at(arm) / c->us.at(best);
        loss[arm] = std::max(loss[arm], l);
        if (l > overall_worst[arm])
        {
          overall_worst[arm] = l;
          overall_where[arm] =
              c->op + " " + hst::workload::to_string(motion) + " rho " + fixed(rho, 3);
        }
      }
    }
    row.push_back(fixed(geomean(best_vs_full), 1));
    for (Rung arm : arms)
      row.push_back(std::to_string(wins[arm]));
    speed.add(row);
    std::vector<std::string> wrow = {hst::workload::to_string(motion), fixed(rho, 3)};
    for (Rung arm : arms)
      wrow.push_back(fixed(loss[arm], 2) + "x");
    worst.add(wrow);
  }
  speed.print(out);
  print_vs_best(out, cases, groups,
                "Adaptive session vs the best arm of each case (t_best / t_adaptive, "
                "probing included)",
                [](Case const &c) { return c.us.at(Rung::adaptive); });
  if (a.noise_floor)
    print_vs_best(
        out, cases, groups,
        "Noise floor: the best arm of each case vs a second copy of it, timed in "
        "the same rounds (t_best / t_copy)",
        [](Case const &c) { return c.us_again.at(c.best()); });
  if (a.variant)
    print_vs_best(out, cases, groups,
                  "Adaptive session with --variant " + a.variant_text +
                      ", in the same rounds (t_best / t_variant, probing included)",
                  [](Case const &c) { return c.us_again.at(Rung::adaptive); });
  out << "\nWorst case of a fixed choice: max over operators of t_arm / t_best\n";
  worst.print(out);
  for (Rung arm : arms)
    out << "  always " << to_string(arm) << ": worst " << fixed(overall_worst[arm], 2)
        << "x slower than the best arm (" << overall_where[arm] << ")\n";
}

void print_preparation(std::ostream &out, std::vector<OperatorInfo> const &infos,
                       std::vector<Case> const &cases)
{
  out << "\nPreparation (hst::Operator build = CSC + tile index; arm = make + first "
         "step, drift rho 0.01) and break-even steps vs full recompute\n";
  std::vector<std::string> header = {"operator", "rows",        "nnz",         "tiles",
                                     "nnz/tile", "operator ms", "full us/step"};
  for (Rung arm : measured_rungs())
    header.push_back(std::string(to_string(arm)) + " ms / break-even");
  Table t(header);
  for (auto const &info : infos)
  {
    Case const *ref = nullptr;
    for (auto const &c : cases)
      if (c.op == info.name && (!ref || (c.motion == Motion::drift && c.rho == 0.01)))
        ref = &c;
    std::vector<std::string> row = {info.name,
                                    std::to_string(info.rows),
                                    std::to_string(info.nnz),
                                    std::to_string(info.tiles.tiles),
                                    fixed(info.tiles.mean_tile_nnz, 1),
                                    fixed(1e3 * info.operator_seconds, 1),
                                    fixed(info.full_us, 1)};
    for (Rung arm : measured_rungs())
    {
      if (!ref || !info.arm_prepare_s.count(arm))
      {
        row.push_back("-");
        continue;
      }
      double const prep = info.operator_seconds + info.arm_prepare_s.at(arm);
      row.push_back(fixed(1e3 * info.arm_prepare_s.at(arm), 2) + " / " +
                    fixed(break_even(prep, ref->us.at(arm), info.full_us), 0));
    }
    t.add(row);
  }
  t.print(out);
}

// Least-squares slope of log(us) against log(rows).
double log_slope(std::vector<GrowthPoint> const &points, Rung arm)
{
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  double const n = double(points.size());
  for (auto const &p : points)
  {
    double const x = std::log(double(p.rows)), y = std::log(p.us.at(arm));
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

void print_growth(std::ostream &out, std::vector<GrowthPoint> const &points)
{
  if (points.size() < 2)
    return;
  out << "\nCost growth at fixed k = " << points.front().k
      << " (drift, rho 0.01): us/step vs rows\n";
  std::vector<std::string> header = {"operator", "rows", "nnz(A[:,S])"};
  for (Rung arm : measured_rungs())
    header.push_back(to_string(arm));
  Table t(header);
  for (auto const &p : points)
  {
    std::vector<std::string> row = {p.op, std::to_string(p.rows),
                                    fixed(p.changed_nnz, 0)};
    for (Rung arm : measured_rungs())
      row.push_back(fixed(p.us.at(arm), 2));
    t.add(row);
  }
  std::vector<std::string> slope = {"log-log slope", "", ""};
  std::vector<std::string> spread = {"max/min", "", ""};
  for (Rung arm : measured_rungs())
  {
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (auto const &p : points)
    {
      lo = std::min(lo, p.us.at(arm));
      hi = std::max(hi, p.us.at(arm));
    }
    slope.push_back(fixed(log_slope(points, arm), 3));
    spread.push_back(fixed(hi / lo, 2));
  }
  t.add(slope);
  t.add(spread);
  t.print(out);
}

std::string json_string(std::string const &s)
{
  std::string out = "\"";
  for (char c : s)
  {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string json_number(double x)
{
  if (!std::isfinite(x))
    return "null";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.6g", x);
  return buffer;
}

// {"scatter": 1.5, ...}: one value per rung.
std::string json_object(std::map<Rung, double> const &values)
{
  std::string out = "{";
  for (auto const &[rung, value] : values)
    out += (out.size() > 1 ? ", " : "") + json_string(to_string(rung)) + ": " +
           json_number(value);
  return out + "}";
}

void write_outputs(Arguments const &a, std::vector<OperatorInfo> const &infos,
                   std::vector<Case> const &cases, std::vector<GrowthPoint> const &growth,
                   int concurrency)
{
  namespace fs = std::filesystem;
  fs::create_directories(a.out);
  std::ofstream csv(fs::path(a.out) / "sweep.csv");
  char const *const layout = to_string(a.layout);
  csv << "operator,family,motion,rho,k,changed_nnz,replaced_per_step,arm,us_per_step,"
         "rel_error,layout,passes\n";
  for (auto const &c : cases)
    for (auto const *us_of : {&c.us, &c.us_again})
      for (auto const &[arm, us] : *us_of)
        csv << c.op << ',' << c.family << ',' << hst::workload::to_string(c.motion) << ','
            << c.rho << ',' << c.k << ',' << c.changed_nnz << ',' << c.replaced << ','
            << to_string(arm)
            << (us_of == &c.us ? ""
                : a.variant    ? "_variant"
                               : "_again")
            << ',' << us << ',' << c.rel_error.at(arm) << ',' << layout << ',' << c.passes
            << '\n';

  std::ofstream prep(fs::path(a.out) / "preparation.csv");
  prep << "operator,family,shuffled,rows,cols,nnz,tiles,mean_tile_nnz,generate_s,"
          "operator_s,full_us_per_step";
  for (Rung arm : measured_rungs())
    prep << ',' << to_string(arm) << "_prepare_s";
  prep << ",layout\n";
  for (auto const &i : infos)
  {
    prep << i.name << ',' << i.family << ',' << i.shuffled << ',' << i.rows << ','
         << i.cols << ',' << i.nnz << ',' << i.tiles.tiles << ',' << i.tiles.mean_tile_nnz
         << ',' << i.generate_seconds << ',' << i.operator_seconds << ',' << i.full_us;
    for (Rung arm : measured_rungs())
      prep << ','
           << (i.arm_prepare_s.count(arm) ? i.arm_prepare_s.at(arm) : std::nan(""));
    prep << ',' << layout << '\n';
  }

  std::ofstream gcsv(fs::path(a.out) / "growth.csv");
  gcsv << "operator,rows,k,changed_nnz,arm,us_per_step,layout\n";
  for (auto const &g : growth)
    for (auto const &[arm, us] : g.us)
      gcsv << g.op << ',' << g.rows << ',' << g.k << ',' << g.changed_nnz << ','
           << to_string(arm) << ',' << us << ',' << layout << '\n';

  std::ofstream json(fs::path(a.out) / "sweep.json");
  json << "{\n  \"context\": {\"kokkos_version\": " << KOKKOS_VERSION
       << ", \"execution_space\": " << json_string(ExecutionSpace::name())
       << ", \"concurrency\": " << concurrency << ", \"B\": " << a.width
       << ", \"layout\": " << json_string(layout) << ", \"steps\": " << a.steps
       << ", \"repeats\": " << a.repeats
       << ", \"min_time_s\": " << json_number(a.min_time)
       << ", \"max_repeats\": " << a.max_repeats
       << ", \"quick\": " << (a.quick ? "true" : "false")
       << ", \"one_process\": " << (a.one_process ? "true" : "false")
       << "},\n  \"operators\": [";
  for (std::size_t i = 0; i < infos.size(); ++i)
  {
    auto const &o = infos[i];
    json << (i ? "," : "") << "\n    {\"name\": " << json_string(o.name)
         << ", \"family\": " << json_string(o.family)
         << ", \"shuffled\": " << (o.shuffled ? "true" : "false")
         << ", \"rows\": " << o.rows << ", \"cols\": " << o.cols << ", \"nnz\": " << o.nnz
         << ", \"tiles\": " << o.tiles.tiles
         << ", \"operator_s\": " << json_number(o.operator_seconds)
         << ", \"full_us_per_step\": " << json_number(o.full_us) << ", \"prepare_s\": ";
    json << json_object(o.arm_prepare_s) << "}";
  }
  json << "\n  ],\n  \"cases\": [";
  for (std::size_t i = 0; i < cases.size(); ++i)
  {
    auto const &c = cases[i];
    json << (i ? "," : "") << "\n    {\"operator\": " << json_string(c.op)
         << ", \"family\": " << json_string(c.family)
         << ", \"motion\": " << json_string(hst::workload::to_string(c.motion))
         << ", \"rho\": " << json_number(c.rho) << ", \"k\": " << c.k
         << ", \"changed_nnz\": " << json_number(c.changed_nnz)
         << ", \"best\": " << json_string(to_string(c.best()))
         << ", \"passes\": " << c.passes << ", \"us_per_step\": " << json_object(c.us);
    if (!c.us_again.empty())
      json << ", \"us_per_step_again\": " << json_object(c.us_again);
    json << "}";
  }
  json << "\n  ],\n  \"growth\": [";
  for (std::size_t i = 0; i < growth.size(); ++i)
  {
    auto const &g = growth[i];
    json << (i ? "," : "") << "\n    {\"operator\": " << json_string(g.op)
         << ", \"rows\": " << g.rows << ", \"k\": " << g.k
         << ", \"changed_nnz\": " << json_number(g.changed_nnz) << ", \"us_per_step\": ";
    json << json_object(g.us) << "}";
  }
  json << "\n  ]\n}\n";
}

// What one operator's (or growth point's) measurement sends back to the
// sweep: a record of whitespace-separated fields, numbers exact (%.17g, read
// back with strtod, inf and nan included), strings as LENGTH:TEXT. The same
// path with --one-process and without, so both modes report alike.
class RecordWriter
{
public:
  RecordWriter &operator<<(double x)
  {
    char buffer[40];
    std::snprintf(buffer, sizeof buffer, "%.17g ", x);
    text_ += buffer;
    return *this;
  }
  RecordWriter &operator<<(std::int64_t x)
  {
    text_ += std::to_string(x) + ' ';
    return *this;
  }
  RecordWriter &operator<<(int x) { return *this << std::int64_t(x); }
  RecordWriter &operator<<(std::string const &s)
  {
    text_ += std::to_string(s.size()) + ':' + s + ' ';
    return *this;
  }
  RecordWriter &operator<<(std::map<Rung, double> const &values)
  {
    *this << std::int64_t(values.size());
    for (auto const &[rung, value] : values)
      *this << std::string(to_string(rung)) << value;
    return *this;
  }
  std::string const &text() const { return text_; }

private:
  std::string text_;
};

class RecordReader
{
public:
  // `what`: the measured operator, named in errors.
  RecordReader(std::string what, std::string text)
      : what_(std::move(what))
      , in_(std::move(text))
  {}
  RecordReader &operator>>(double &x)
  {
    std::string const token = next();
    char *end = nullptr;
    x = std::strtod(token.c_str(), &end);
    if (end != token.c_str() + token.size())
      fail("a number", token);
    return *this;
  }
  // std::int64_t, int and bool (written as 0 or 1).
  template <class Integer, std::enable_if_t<std::is_integral_v<Integer>, int> = 0>
  RecordReader &operator>>(Integer &x)
  {
    std::string const token = next();
    std::size_t used = 0;
    long long value = 0;
    try
    {
      value = std::stoll(token, &used);
    }
    catch (std::exception const &)
    {
      used = 0;
    }
    if (token.empty() || used != token.size())
      fail("an integer", token);
    x = static_cast<Integer>(value);
    return *this;
  }
  RecordReader &operator>>(std::string &s)
  {
    std::int64_t length = -1;
    char colon = 0;
    in_ >> length >> std::noskipws >> colon >> std::skipws;
    if (!in_ || length < 0 || colon != ':')
      fail("a LENGTH:TEXT string", "");
    s.assign(std::size_t(length), '\0');
    if (!in_.read(s.data(), length))
      fail("a string of " + std::to_string(length) + " characters", "");
    return *this;
  }
  RecordReader &operator>>(std::map<Rung, double> &values)
  {
    std::int64_t n = 0;
    *this >> n;
    for (std::int64_t i = 0; i < n; ++i)
    {
      std::string name;
      double value = 0;
      *this >> name >> value;
      auto const &rungs = all_rungs();
      auto const rung = std::find_if(rungs.begin(), rungs.end(),
                                     [&](Rung r) { return name == to_string(r); });
      if (rung == rungs.end())
        fail("an arm's name", name);
      values[*rung] = value;
    }
    return *this;
  }
  RecordReader &operator>>(Motion &m)
  {
    std::string name;
    *this >> name;
    auto const motion = hst::workload::motion_named(name);
    if (!motion)
      fail("a motion", name);
    m = *motion;
    return *this;
  }

private:
  std::string next()
  {
    std::string token;
    if (!(in_ >> token))
      fail("a field", "the record's end");
    return token;
  }
  [[noreturn]] void fail(std::string const &expected, std::string const &got) const
  {
    throw std::runtime_error("the record of " + what_ +
                             "'s measurement is damaged: expected " + expected +
                             (got.empty() ? "" : ", got '" + got + "'"));
  }
  std::string what_;
  std::istringstream in_;
};

RecordWriter &operator<<(RecordWriter &w, OperatorInfo const &i)
{
  return w << i.name << i.family << int(i.shuffled) << i.rows << i.cols << i.nnz
           << i.generate_seconds << i.operator_seconds << i.tiles.column_tiles
           << i.tiles.row_blocks << i.tiles.tiles << i.tiles.empty_segments
           << i.tiles.mean_tile_nnz << i.full_us << i.arm_prepare_s;
}

RecordReader &operator>>(RecordReader &r, OperatorInfo &i)
{
  return r >> i.name >> i.family >> i.shuffled >> i.rows >> i.cols >> i.nnz >>
         i.generate_seconds >> i.operator_seconds >> i.tiles.column_tiles >>
         i.tiles.row_blocks >> i.tiles.tiles >> i.tiles.empty_segments >>
         i.tiles.mean_tile_nnz >> i.full_us >> i.arm_prepare_s;
}

RecordWriter &operator<<(RecordWriter &w, Case const &c)
{
  return w << c.op << c.family << std::string(hst::workload::to_string(c.motion)) << c.rho
           << c.k << c.changed_nnz << c.replaced << c.us << c.us_again << c.rel_error
           << c.passes;
}

RecordReader &operator>>(RecordReader &r, Case &c)
{
  return r >> c.op >> c.family >> c.motion >> c.rho >> c.k >> c.changed_nnz >>
         c.replaced >> c.us >> c.us_again >> c.rel_error >> c.passes;
}

RecordWriter &operator<<(RecordWriter &w, GrowthPoint const &g)
{
  return w << g.op << g.rows << g.k << g.changed_nnz << g.us;
}

RecordReader &operator>>(RecordReader &r, GrowthPoint &g)
{
  return r >> g.op >> g.rows >> g.k >> g.changed_nnz >> g.us;
}

// Runs `measure` with Kokkos initialized and returns the record it wrote:
// here (--one-process, Kokkos already initialized by main), or in a child
// process forked for it, which initializes and finalizes Kokkos itself (this
// process never does) and sends the record back through a pipe. `what` names
// the measurement in errors.
class Measurer
{
public:
  Measurer(bool one_process, int argc, char **argv)
      : one_process_(one_process)
      , argc_(argc)
      , argv_(argv)
  {}

  RecordReader operator()(std::string const &what,
                          std::function<void(RecordWriter &)> const &measure) const
  {
    if (one_process_)
    {
      RecordWriter record;
      measure(record);
      return RecordReader(what, record.text());
    }
    return RecordReader(what, in_child(what, measure));
  }

private:
  std::string in_child(std::string const &what,
                       std::function<void(RecordWriter &)> const &measure) const
  {
    auto const system_error = [&](char const *call) {
      return std::system_error(errno, std::generic_category(),
                               std::string(call) + " for " + what);
    };
    std::cout.flush(); // or the child would print this process's buffer again
    std::cerr.flush();
    int pipe_ends[2];
    if (::pipe(pipe_ends) != 0)
      throw system_error("pipe");
    pid_t const child = ::fork();
    if (child < 0)
    {
      ::close(pipe_ends[0]);
      ::close(pipe_ends[1]);
      throw system_error("fork");
    }
    if (child == 0)
    {
      ::close(pipe_ends[0]);
      int status = 0;
      try
      {
        RecordWriter record;
        {
          int argc = argc_;
          Kokkos::ScopeGuard kokkos(argc, argv_);
          measure(record);
        }
        std::string const &text = record.text();
        for (std::size_t sent = 0; sent < text.size();)
        {
          ssize_t const n = ::write(pipe_ends[1], text.data() + sent, text.size() - sent);
          if (n < 0 && errno != EINTR)
            throw std::system_error(errno, std::generic_category(), "write");
          sent += n > 0 ? std::size_t(n) : 0;
        }
      }
      catch (std::exception const &e)
      {
        std::cerr << "hst-sweep: " << what << ": " << e.what() << "\n";
        status = 1;
      }
      std::cout.flush();
      std::cerr.flush();
      ::_exit(status); // no atexit handlers: they are this process's parent's
    }
    ::close(pipe_ends[1]);
    std::string text;
    char buffer[1 << 16];
    int read_error = 0;
    for (;;)
    {
      ssize_t const n = ::read(pipe_ends[0], buffer, sizeof buffer);
      if (n > 0)
        text.append(buffer, std::size_t(n));
      else if (n == 0 || errno != EINTR)
      {
        read_error = n < 0 ? errno : 0;
        break;
      }
    }
    ::close(pipe_ends[0]); // a child still writing gets SIGPIPE, then is waited for
    int status = 0;
    while (::waitpid(child, &status, 0) < 0)
      if (errno != EINTR)
        throw system_error("waitpid");
    if (read_error != 0)
    {
      errno = read_error;
      throw system_error("read");
    }
    if (WIFSIGNALED(status))
      throw std::runtime_error("the process measuring " + what +
                               " was killed by signal " +
                               std::to_string(WTERMSIG(status)));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      throw std::runtime_error("the process measuring " + what + " failed (exit status " +
                               std::to_string(WEXITSTATUS(status)) + ")");
    return text;
  }

  bool one_process_;
  int argc_;
  char **argv_;
};

// One operator's cases, its preparation and its full recompute, measured
// (with Kokkos initialized) and written to `record` after the execution
// space's concurrency. `progress` leads its first printed line.
template <class L>
void measure_operator(Arguments const &a, SuiteOperator const &entry,
                      std::string const &progress, RecordWriter &record)
{
  OperatorInfo info;
  std::optional<HSTOperator> op;
  auto const A = build(entry, info, op);
  std::cout << progress << " " << info.name << ": " << info.rows << " x " << info.cols
            << ", " << info.nnz << " nnz, " << info.tiles.tiles << " tiles ("
            << fixed(info.tiles.mean_tile_nnz, 1) << " nnz/tile), operator built in "
            << fixed(1e3 * info.operator_seconds, 1) << " ms\n";
  if ((a.model || a.variant_model.value_or(false)) &&
      (!model_constants() || a.model_per_operator))
  {
    auto const t0 = std::chrono::steady_clock::now();
    model_constants() = op->calibrate(ExecutionSpace{}, a.width);
    double const ms =
        1e3 *
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (a.model)
      adaptive_options().model = model_constants();
    std::ostringstream constants;
    model_constants()->save(constants);
    std::cout << "    cost model calibrated in " << fixed(ms, 1)
              << " ms: " << constants.str();
  }
  {
    auto const p = stage<L>(A, workload_options(Motion::drift, 0.01, a.width), a.steps);
    typename Staged<L>::MultiVector y("hst::sweep::y", A.numRows(), a.width);
    info.full_us = run_rung(Rung::full, p, *op, y).us_per_step;
    std::cout << "    full recompute " << fixed(info.full_us, 1) << " us/step\n";
  }
  std::vector<Case> cases;
  for (Motion motion : a.motions)
    for (double rho : a.rhos)
    {
      auto const p = stage<L>(A, workload_options(motion, rho, a.width), a.steps);
      Case c;
      c.op = info.name;
      c.family = info.family;
      c.motion = motion;
      c.rho = rho;
      c.k = p.k;
      c.changed_nnz = p.changed_nnz;
      c.replaced = p.replaced;
      bool const reference = motion == Motion::drift && rho == 0.01;
      c.us = measure_arms(p, *op, a, &c.rel_error,
                          reference || info.arm_prepare_s.empty() ? &info.arm_prepare_s
                                                                  : nullptr,
                          &c.passes, a.noise_floor || a.variant ? &c.us_again : nullptr);
      std::cout << "    " << hst::workload::to_string(motion) << " rho " << fixed(rho, 3)
                << " k " << c.k << ":" << arm_list(c.us) << "  us/step, best "
                << to_string(c.best()) << ", " << c.passes << " passes" << std::endl;
      cases.push_back(std::move(c));
    }
  record << hst::kokkos_ext::concurrency(ExecutionSpace{}) << info
         << std::int64_t(cases.size());
  for (auto const &c : cases)
    record << c;
}

// One point of the cost-growth series (drift, rho 0.01, k = 300).
template <class L>
void measure_growth_point(Arguments const &a, SuiteOperator const &entry,
                          RecordWriter &record)
{
  OperatorInfo info;
  std::optional<HSTOperator> op;
  auto const A = build(entry, info, op);
  auto const p =
      stage<L>(A, workload_options(Motion::drift, 0.01, a.width, 300), a.steps);
  GrowthPoint g{entry.name, info.rows, p.k, p.changed_nnz, {}};
  g.us = measure_arms(p, *op, a, nullptr, nullptr);
  std::cout << "    " << g.op << " (" << g.rows << " rows):" << arm_list(g.us)
            << "  us/step" << std::endl;
  record << g;
}

template <class L>
int run(Arguments const &a, Measurer const &measure)
{
  auto const operators = select_operators(a);
  if (a.list)
  {
    for (auto const &op : operators)
      std::cout << op.name << "  " << op.family << "  " << op.rows << " rows"
                << (op.shuffled ? "  shuffled" : "") << "\n";
    return 0;
  }
  auto const start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
        .count();
  };
  std::cout << "hst-sweep: " << operators.size() << " operators x " << a.motions.size()
            << " motions x " << a.rhos.size() << " churn values, B = " << a.width << ", "
            << a.steps << " steps, median of " << a.repeats << " passes or more (until "
            << a.min_time << " s of the fastest arm's steps, at most "
            << std::max(a.repeats, a.max_repeats) << "), " << ExecutionSpace::name()
            << ", layout " << to_string(a.layout)
            << (a.one_process ? ", one process"
                              : ", each operator in a process of its own")
            << (a.microsecond ? ", microsecond regime: making and first step charged"
                              : "")
            << "\n";

  int concurrency = 0;
  std::vector<OperatorInfo> infos;
  std::vector<Case> cases;
  for (std::size_t i = 0; i < operators.size(); ++i)
  {
    std::string const progress = "[" + std::to_string(i + 1) + "/" +
                                 std::to_string(operators.size()) + " " +
                                 fixed(elapsed(), 0) + " s]";
    auto record = measure(operators[i].name, [&](RecordWriter &w) {
      measure_operator<L>(a, operators[i], progress, w);
    });
    OperatorInfo info;
    std::int64_t n_cases = 0;
    record >> concurrency >> info >> n_cases;
    for (std::int64_t c = 0; c < n_cases; ++c)
      record >> cases.emplace_back();
    infos.push_back(std::move(info));
  }

  std::vector<GrowthPoint> growth;
  if (a.growth && a.operators.empty() && a.mtx.empty())
  {
    std::cout << "cost growth at fixed k = 300:\n";
    for (auto const &entry : hst::workload::growth_series<Scalar, Ordinal>())
    {
      auto record = measure(
          entry.name, [&](RecordWriter &w) { measure_growth_point<L>(a, entry, w); });
      record >> growth.emplace_back();
    }
  }

  std::ostringstream summary;
  print_summary(summary, cases, infos, a, concurrency);
  print_preparation(summary, infos, cases);
  print_growth(summary, growth);
  std::cout << summary.str();
  write_outputs(a, infos, cases, growth, concurrency);
  std::ofstream(std::filesystem::path(a.out) / "sweep-summary.txt") << summary.str();
  std::cout << "\nwrote " << a.out << "/{sweep.csv,sweep.json,preparation.csv,growth.csv,"
            << "sweep-summary.txt} in " << fixed(elapsed(), 0) << " s\n";
  return 0;
}

} // namespace

int main(int argc, char *argv[])
{
  auto const arguments = parse(argc, argv); // before Kokkos, which answers --help itself
  // With --one-process, Kokkos lives here; otherwise only in the children.
  std::optional<Kokkos::ScopeGuard> kokkos;
  if (arguments.one_process)
    kokkos.emplace(argc, argv);
  Measurer const measure(arguments.one_process, argc, argv);
  try
  {
    int status = 0;
    with_layout(arguments.layout,
                [&](auto layout) { status = run<decltype(layout)>(arguments, measure); });
    return status;
  }
  catch (std::exception const &e)
  {
    std::cerr << "hst-sweep: " << e.what() << "\n";
    return 1;
  }
}
