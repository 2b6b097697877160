// bench_distributed: the distributed arms per step against the two ways a
// good engineer would write a distributed delta step without HST, on
// row-block partitioned operators, under MPI (run it with mpiexec -n 1, 2, ...).
//
// Rungs, all on the same steps, y and dx in LayoutLeft (as Tpetra's):
//   full_halo      x += dx on the owners, then a halo exchange of every ghost
//                  entry of x along the neighbour lists (what a Tpetra import
//                  sends), then KokkosSparse::spmv of the local block: y = A x
//                  (what Tpetra's CrsMatrix::apply does each step);
//   allgather      every rank's changes to every rank (MPI_Allgather of the
//                  counts, MPI_Allgatherv of ids and rows of dx), each rank
//                  keeps those its rows touch (a global-to-local table) and
//                  scatters them with HST's local scatter arm;
//   scatter, exact_set, scheduled, adaptive: HST's distributed arms.
// A step is timed on every rank after a barrier (fence, clock, step, fence,
// clock); its time is the slowest rank's (MPI_Allreduce MAX, untimed); a
// rung's us/step is the median over its steps and rounds. Step 0 of a pass
// is not in it (first compiles); arms are made fresh for each pass. "run
// us/step" is what a caller pays per step over a pass: the arm's making
// (timed the same way) and every step, step 0 included, over the steps;
// the median over rounds (full_halo and allgather make nothing per pass).
// After every pass, y must equal A x (x: the sum of all dx) to 1e-12
// relative. The rungs run in a new order each round, the same on every rank
// (from rank 0's random seed, printed; --seed=N repeats one). --motions picks
// the set motions (drift,jump by default; frozen: a set that stands) and
// --churn=X the share of the set replaced per step (0.01 by default);
// --variant=NAME=VALUE,... adds a rung "variant": the adaptive session with
// those DistributedAdaptiveOptions changed (arms, as names separated by
// ':'; defer_scheduled, warmup_steps, measure_steps, scheduled_settle_steps, cut_ratio,
// switch_margin, sample_period, time_shift_ratio, model_margin,
// defer_jump_share; inf where
// a ratio takes infinity; model=1 gives it the cost model, each rank's
// constants calibrated once, on the first operator's local operator, and
// not charged to any rung), in the same rounds as the others
// (this machine's timings move more between runs than most options'
// effects). Bytes and messages are those received per rank per step,
// averaged over ranks; "crossing" is the changed columns whose change
// another rank needs.

#include <hst/HST.hpp>

#include <KokkosSparse_spmv.hpp>
#include <Kokkos_Core.hpp>

#include <mpi.h>

#include <workload/Generators.hpp>
#include <workload/Workload.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace
{

using Scalar = double;
using Ordinal = int;
using ExecutionSpace = Kokkos::DefaultExecutionSpace;
using MemorySpace = ExecutionSpace::memory_space;
using Matrix = KokkosSparse::CrsMatrix<Scalar, Ordinal, ExecutionSpace>;
using Triplets = hst::workload::Triplets<Scalar, Ordinal>;
using Multivector = Kokkos::View<Scalar **, Kokkos::LayoutLeft, MemorySpace>;
using Ids = Kokkos::View<Ordinal *, MemorySpace>;
using DOperator = hst::DistributedOperator<Scalar, Ordinal, MemorySpace>;

int rank_of(MPI_Comm comm)
{
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}
int size_of(MPI_Comm comm)
{
  int s = 0;
  MPI_Comm_size(comm, &s);
  return s;
}

double median(std::vector<double> v)
{
  if (v.empty())
    return std::nan("");
  std::sort(v.begin(), v.end());
  auto const n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double max_over_ranks(double v)
{
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return v;
}
double sum_over_ranks(double v)
{
  MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return v;
}

Matrix to_crs(Triplets const &t) { return hst::workload::to_crs<Matrix>(t); }

// This rank's rows of A, global column ids.
Matrix local_rows(Triplets const &A, hst::BlockPartition const &rows, int rank)
{
  Triplets local(Ordinal(rows.local_size(rank)), A.n_cols);
  for (auto r = rows.begin(rank); r < rows.end(rank); ++r)
    local.rows[std::size_t(r - rows.begin(rank))] = A.rows[std::size_t(r)];
  return to_crs(local);
}

// One step's changes owned by this rank: ids, rows of dx (row-major).
struct Step
{
  std::vector<Ordinal> cols;
  std::vector<Scalar> dx;
  std::int64_t crossing = 0; // of these, columns another rank needs
};

// Device copies of one step, ready to pass.
struct StagedStep
{
  Ids cols;
  Multivector dx;
};

int const width = 8;

// full_halo: Tpetra's apply, written out.
class FullHalo
{
public:
  FullHalo(DOperator const &op, Matrix const &A_local)
      : plan_(op.exchange_plan())
      , n_owned_(op.num_owned_cols())
      , col_begin_(op.col_partition().begin(op.rank()))
  {
    // The local block in local column numbering (owned, then ghosts).
    auto const &ghosts = op.ghost_cols();
    auto const begin = op.col_partition().begin(op.rank());
    auto entries =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, A_local.graph.entries);
    Kokkos::View<Ordinal *, MemorySpace> local_entries("full_halo::entries",
                                                       entries.extent(0));
    auto host = Kokkos::create_mirror_view(local_entries);
    for (std::size_t p = 0; p < entries.extent(0); ++p)
    {
      std::int64_t const g = entries(p);
      std::int64_t const c = g - begin;
      host(p) =
          c >= 0 && c < n_owned_
              ? Ordinal(c)
              : Ordinal(n_owned_ + (std::lower_bound(ghosts.begin(), ghosts.end(), g) -
                                    ghosts.begin()));
    }
    Kokkos::deep_copy(local_entries, host);
    A_ = Matrix("full_halo::A", A_local.numRows(), Ordinal(n_owned_ + ghosts.size()),
                A_local.nnz(), A_local.values, A_local.graph.row_map, local_entries);
    x_ = Multivector("full_halo::x", std::size_t(n_owned_ + ghosts.size()), width);
    send_list_.resize(std::size_t(plan_.send_slots()));
    for (Ordinal c = 0; c < n_owned_; ++c)
      for (auto p = plan_.dest_ptr[c]; p < plan_.dest_ptr[c + 1]; ++p)
        send_list_[std::size_t(plan_.send_offsets[plan_.dest[p].neighbour] +
                               plan_.dest[p].slot)] = c;
    send_.resize(std::size_t(plan_.send_slots()) * width);
    recv_.resize(std::size_t(plan_.recv_slots()) * width);
    requests_.resize(plan_.send_ranks.size() + plan_.recv_ranks.size());
  }

  void reset() { Kokkos::deep_copy(x_, 0.0); }

  void step(StagedStep const &s, Multivector const &y)
  {
    auto const x = x_;
    auto const cols = s.cols;
    auto const dx = s.dx;
    auto const begin = Ordinal(col_begin_); // global id -> owned local id
    Kokkos::parallel_for(
        "bench::full_halo::update_x",
        Kokkos::RangePolicy<ExecutionSpace>(0, cols.extent(0)), KOKKOS_LAMBDA(int i) {
          for (int b = 0; b < width; ++b)
            x(cols(i) - begin, b) += dx(i, b);
        });
    ExecutionSpace().fence(); // the host packs x next
    auto const &p = plan_;
    for (std::size_t q = 0; q < p.recv_ranks.size(); ++q)
      MPI_Irecv(recv_.data() + p.recv_offsets[q] * width,
                int((p.recv_offsets[q + 1] - p.recv_offsets[q]) * width), MPI_DOUBLE,
                p.recv_ranks[q], 7, MPI_COMM_WORLD, &requests_[q]);
    for (std::size_t i = 0; i < send_list_.size(); ++i)
      for (int b = 0; b < width; ++b)
        send_[i * width + b] = x(send_list_[i], b);
    for (std::size_t n = 0; n < p.send_ranks.size(); ++n)
      MPI_Isend(send_.data() + p.send_offsets[n] * width,
                int((p.send_offsets[n + 1] - p.send_offsets[n]) * width), MPI_DOUBLE,
                p.send_ranks[n], 7, MPI_COMM_WORLD, &requests_[p.recv_ranks.size() + n]);
    MPI_Waitall(int(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    for (std::size_t g = 0; g < recv_.size() / width; ++g)
      for (int b = 0; b < width; ++b)
        x(n_owned_ + Ordinal(g), b) = recv_[g * width + b];
    KokkosSparse::spmv("N", 1.0, A_, x_, 0.0, y);
  }

  double bytes_received() const { return double(recv_.size() * sizeof(Scalar)); }
  double messages_received() const { return double(plan_.recv_ranks.size()); }

private:
  hst::detail::ExchangePlan const &plan_;
  Ordinal n_owned_;
  std::int64_t col_begin_;
  Matrix A_;
  Multivector x_;
  std::vector<Ordinal> send_list_;
  std::vector<Scalar> send_, recv_;
  std::vector<MPI_Request> requests_;
};

// allgather: everybody's changes to everybody.
class Allgather
{
public:
  Allgather(DOperator const &op, std::int64_t k_max_total)
      : scatter_(op.local_operator().scatter(width))
      , col_begin_(op.col_partition().begin(op.rank()))
      , local_of_(std::size_t(op.col_partition().size()), -1)
      , counts_(std::size_t(size_of(MPI_COMM_WORLD)))
      , displs_(counts_.size())
      , value_counts_(counts_.size())
      , value_displs_(counts_.size())
      , all_ids_(std::size_t(k_max_total))
      , all_dx_(std::size_t(k_max_total) * width)
      , ids_("allgather::ids", std::size_t(k_max_total))
      , dx_("allgather::dx", std::size_t(k_max_total), width)
  {
    // Which global columns this rank's rows touch: an n-long table.
    for (Ordinal c = 0; c < op.num_owned_cols(); ++c)
      local_of_[std::size_t(col_begin_ + c)] = c;
    auto const &ghosts = op.ghost_cols();
    for (std::size_t g = 0; g < ghosts.size(); ++g)
      local_of_[std::size_t(ghosts[g])] = Ordinal(op.num_owned_cols() + g);
  }

  void step(Step const &s, Multivector const &y)
  {
    int const k = int(s.cols.size());
    MPI_Allgather(&k, 1, MPI_INT, counts_.data(), 1, MPI_INT, MPI_COMM_WORLD);
    int total = 0;
    for (std::size_t r = 0; r < counts_.size(); ++r)
    {
      displs_[r] = total;
      value_counts_[r] = counts_[r] * width;
      value_displs_[r] = total * width;
      total += counts_[r];
    }
    MPI_Allgatherv(s.cols.data(), k, MPI_INT, all_ids_.data(), counts_.data(),
                   displs_.data(), MPI_INT, MPI_COMM_WORLD);
    MPI_Allgatherv(s.dx.data(), k * width, MPI_DOUBLE, all_dx_.data(),
                   value_counts_.data(), value_displs_.data(), MPI_DOUBLE,
                   MPI_COMM_WORLD);
    auto ids = Kokkos::create_mirror_view(ids_);
    auto dx = Kokkos::create_mirror_view(dx_);
    std::size_t kept = 0;
    for (int i = 0; i < total; ++i)
    {
      Ordinal const c = local_of_[std::size_t(all_ids_[i])];
      if (c < 0)
        continue;
      ids(kept) = c;
      for (int b = 0; b < width; ++b)
        dx(kept, b) = all_dx_[std::size_t(i) * width + b];
      ++kept;
    }
    Kokkos::deep_copy(ids_, ids);
    Kokkos::deep_copy(dx_, dx);
    auto const range = std::make_pair(std::size_t(0), kept);
    scatter_.apply_cols(Kokkos::subview(ids_, range),
                        Kokkos::subview(dx_, range, Kokkos::ALL), y);
    received_ += double(total - k);
  }

  void reset_traffic() { received_ = 0; }
  /// Bytes received since reset_traffic().
  double bytes_received() const
  {
    return received_ * double(sizeof(Ordinal) + width * sizeof(Scalar));
  }
  double messages_received() const { return 3.0 * (counts_.size() - 1); }

private:
  hst::ScatterArm<Scalar, Ordinal, MemorySpace> scatter_;
  std::int64_t col_begin_;
  std::vector<Ordinal> local_of_;
  std::vector<int> counts_, displs_, value_counts_, value_displs_;
  std::vector<Ordinal> all_ids_;
  std::vector<Scalar> all_dx_;
  Ids ids_;
  Multivector dx_;
  double received_ = 0;
};

struct Options
{
  bool quick = false;
  int steps = 60;
  int rounds = 3;
  double churn = 0.01; // --churn: expected share of the set replaced per step
  std::vector<hst::workload::Motion> motions = {hst::workload::Motion::drift,
                                                hst::workload::Motion::jump};
  std::optional<unsigned> seed; // of the rungs' order (--seed)
  std::string variant_text;     // --variant: "name=value,..."
  std::optional<hst::DistributedAdaptiveOptions> variant;
  std::string out;      // TSV of this run's medians
  std::string baseline; // TSV of a 1-rank run: prints speed-up over it
};

struct OperatorCase
{
  std::string name;
  std::function<Triplets()> build;
};

struct Row
{
  std::string key; // operator motion k
  std::string rung;
  double us = 0;
};

std::map<std::string, double> read_baseline(std::string const &path)
{
  std::map<std::string, double> out;
  if (path.empty())
    return out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line))
  {
    std::istringstream s(line);
    std::string op, motion, k, rung;
    double us = 0;
    if (s >> op >> motion >> k >> rung >> us)
      out[op + ' ' + motion + ' ' + k + ' ' + rung] = us;
  }
  return out;
}

// Ping-pong between ranks 0 and 1: seconds for one message of `bytes`.
double ping_pong(std::size_t bytes)
{
  int const rank = rank_of(MPI_COMM_WORLD);
  std::vector<char> buffer(std::max<std::size_t>(bytes, 1));
  int const reps = bytes > 100000 ? 50 : 2000;
  MPI_Barrier(MPI_COMM_WORLD);
  double const start = MPI_Wtime();
  for (int i = 0; i < reps; ++i)
    if (rank == 0)
    {
      MPI_Send(buffer.data(), int(bytes), MPI_BYTE, 1, 9, MPI_COMM_WORLD);
      MPI_Recv(buffer.data(), int(bytes), MPI_BYTE, 1, 9, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
    }
    else if (rank == 1)
    {
      MPI_Recv(buffer.data(), int(bytes), MPI_BYTE, 0, 9, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      MPI_Send(buffer.data(), int(bytes), MPI_BYTE, 0, 9, MPI_COMM_WORLD);
    }
  double t = (MPI_Wtime() - start) / (2.0 * reps);
  MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  return t;
}

// The pieces of "a,b,c" (an empty text: one empty piece).
std::vector<std::string> split_commas(std::string const &text)
{
  std::vector<std::string> pieces;
  std::size_t from = 0;
  for (std::size_t comma; (comma = text.find(',', from)) != std::string::npos;
       from = comma + 1)
    pieces.push_back(text.substr(from, comma - from));
  pieces.push_back(text.substr(from));
  return pieces;
}

// DistributedAdaptiveOptions with the fields in "name=value,..." changed
// (--variant); throws std::invalid_argument naming what it cannot take.
hst::DistributedAdaptiveOptions parse_variant(std::string const &text)
{
  hst::DistributedAdaptiveOptions o;
  for (std::string const &item : split_commas(text))
  {
    auto const eq = item.find('=');
    if (eq == std::string::npos)
      throw std::invalid_argument("expects NAME=VALUE, got '" + item + "'");
    std::string const name = item.substr(0, eq);
    std::string const number = item.substr(eq + 1);
    if (name == "arms") // arm names in probe order, separated by ':'
    {
      o.arms.clear();
      std::size_t from = 0;
      while (from <= number.size())
      {
        std::size_t const to = std::min(number.find(':', from), number.size());
        std::string const arm = number.substr(from, to - from);
        std::size_t a = 0;
        while (a < hst::distributed_arm_count && arm != hst::to_string(hst::Arm(a)))
          ++a;
        if (a == hst::distributed_arm_count)
          throw std::invalid_argument("'arms' takes scheduled, exact_set, scatter "
                                      "separated by ':', got '" +
                                      number + "'");
        o.arms.push_back(hst::Arm(a));
        from = to + 1;
      }
      continue;
    }
    char *end = nullptr;
    double const v = std::strtod(number.c_str(), &end); // takes "inf"
    if (number.empty() || *end != '\0' || std::isnan(v))
      throw std::invalid_argument("'" + name + "' needs a number, got '" + number + "'");
    // Counts take whole numbers (a cast would truncate 1.5 to 1 unseen);
    // their signs are the library's check_options' to judge.
    auto whole = [&](double limit) {
      if (!(v == std::floor(v) && std::fabs(v) <= limit))
        throw std::invalid_argument("'" + name + "' needs a whole number, got '" +
                                    number + "'");
      return v;
    };
    if (name == "defer_scheduled")
    {
      if (v != 0 && v != 1)
        throw std::invalid_argument("'defer_scheduled' takes 0 or 1, got '" + number +
                                    "'");
      o.defer_scheduled = v != 0;
    }
    else if (name == "warmup_steps")
      o.warmup_steps = int(whole(std::numeric_limits<int>::max()));
    else if (name == "measure_steps")
      o.measure_steps = int(whole(std::numeric_limits<int>::max()));
    else if (name == "scheduled_settle_steps")
      o.scheduled_settle_steps = int(whole(std::numeric_limits<int>::max()));
    else if (name == "cut_ratio")
      o.cut_ratio = v;
    else if (name == "switch_margin")
      o.switch_margin = v;
    else if (name == "sample_period")
      o.sample_period = std::int64_t(whole(1e15));
    else if (name == "time_shift_ratio")
      o.time_shift_ratio = v;
    else if (name == "model_margin")
      o.model_margin = v;
    else if (name == "defer_jump_share")
      o.defer_jump_share = v;
    else if (name == "model")
    {
      if (v != 0 && v != 1)
        throw std::invalid_argument("'model' takes 0 or 1, got '" + number + "'");
      if (v != 0)
        o.model.emplace(); // calibrated at the first operator
      else
        o.model.reset();
    }
    else
      throw std::invalid_argument("unknown or unsupported option '" + name + "'");
  }
  hst::detail::check_options(o); // the library's own checks, by name
  return o;
}

int run(Options const &o)
{
  int const rank = rank_of(MPI_COMM_WORLD), size = size_of(MPI_COMM_WORLD);
  bool const root = rank == 0;
  ExecutionSpace space;
  auto const baseline = read_baseline(o.baseline);
  std::ofstream out;
  if (root && !o.out.empty())
    out.open(o.out);

  Ordinal const side = o.quick ? 200 : 1000;
  Ordinal const n = side * side;
  std::vector<OperatorCase> operators = {
      {"grid2d_5pt_" + std::to_string(side) + "x" + std::to_string(side),
       [=] { return hst::workload::grid_2d<Scalar, Ordinal>(side, side); }},
      {"mesh_geometric_" + std::to_string(n),
       [=] { return hst::workload::geometric_mesh<Scalar, Ordinal>(n, 8.0, 11); }},
      {"circuit_" + std::to_string(n),
       [=] { return hst::workload::circuit<Scalar, Ordinal>(n, 13); }},
  };
  std::vector<std::string> rungs = {"full_halo", "allgather", "scatter",
                                    "exact_set", "scheduled", "adaptive"};
  if (o.variant)
    rungs.push_back("variant");
  // The rungs' order in each round comes from this seed (rank 0's, unless
  // --seed gives one), so that runs differ in order and can be repeated.
  unsigned seed = o.seed ? *o.seed : std::random_device{}();
  MPI_Bcast(&seed, 1, MPI_UNSIGNED, 0, MPI_COMM_WORLD);
  std::mt19937 order_random(seed);
  if (root)
  {
    std::printf(
        "bench_distributed: %d rank(s), %s, B = %d, %d timed steps x %d rounds per "
        "rung, churn %g, rung order seed %u\n",
        size, ExecutionSpace::name(), width, o.steps - 1, o.rounds, o.churn, seed);
    std::printf("us/step: median over steps of the slowest rank's step; bytes, messages: "
                "received per rank per step (mean over ranks)\n");
  }
  int failures = 0;
  auto variant = o.variant;
  bool calibrated = false;
  for (auto const &oc : operators)
  {
    Triplets const A = oc.build();
    auto const rows = hst::BlockPartition::uniform(A.n_rows, MPI_COMM_WORLD);
    auto const cols = hst::BlockPartition::uniform(A.n_cols, MPI_COMM_WORLD);
    Matrix const A_local = local_rows(A, rows, rank);
    MPI_Barrier(MPI_COMM_WORLD);
    double const t0 = MPI_Wtime();
    DOperator const op(MPI_COMM_WORLD, A_local, rows, cols);
    double const prep = max_over_ranks(MPI_Wtime() - t0);
    Matrix const global = to_crs(A);
    auto const n_local = std::size_t(rows.local_size(rank));
    if (root)
      std::printf(
          "\n%s: %d rows, %zu nnz; DistributedOperator made in %.3f s (slowest rank); "
          "rank 0: %d owned + %d ghost columns, %zu neighbours\n",
          oc.name.c_str(), A.n_rows, std::size_t(global.nnz()), prep, op.num_owned_cols(),
          op.num_ghost_cols(), op.send_neighbours().size());
    if (variant && variant->model && !calibrated)
    {
      double const start = MPI_Wtime();
      variant->model = op.local_operator().calibrate(space, width);
      double const seconds = max_over_ranks(MPI_Wtime() - start);
      calibrated = true;
      if (root)
      {
        std::ostringstream text;
        variant->model->save(text);
        std::printf("cost model calibrated in %.1f ms (slowest rank); rank 0: %s",
                    1e3 * seconds, text.str().c_str());
      }
    }
    FullHalo full(op, A_local);

    for (auto motion : o.motions)
      for (double fraction : {0.003, 0.03})
      {
        hst::workload::WorkloadOptions w;
        w.motion = motion;
        w.churn = o.churn;
        w.k = std::llround(fraction * A.n_cols);
        w.width = width;
        w.seed = 17;
        hst::workload::Workload<Scalar, Ordinal> workload(global, w);
        std::vector<Step> steps(std::size_t(o.steps));
        std::vector<StagedStep> staged(steps.size());
        std::size_t k_max = 0;
        double crossing = 0;
        for (auto &s : steps)
        {
          auto const &all = workload.columns();
          auto const &dx = workload.dx();
          for (std::size_t i = 0; i < all.size(); ++i)
            if (all[i] >= cols.begin(rank) && all[i] < cols.end(rank))
            {
              s.cols.push_back(all[i]);
              s.dx.insert(s.dx.end(), dx.begin() + std::ptrdiff_t(i * width),
                          dx.begin() + std::ptrdiff_t((i + 1) * width));
              s.crossing += op.crosses_boundary(all[i]);
            }
          k_max = std::max(k_max, all.size());
          crossing += double(s.crossing);
          workload.advance();
        }
        for (std::size_t t = 0; t < steps.size(); ++t)
        {
          auto const k = steps[t].cols.size();
          staged[t].cols = Ids("bench::cols", k);
          staged[t].dx = Multivector("bench::dx", k, width);
          auto h_cols = Kokkos::create_mirror_view(staged[t].cols);
          auto h_dx = Kokkos::create_mirror_view(staged[t].dx);
          for (std::size_t i = 0; i < k; ++i)
          {
            h_cols(i) = steps[t].cols[i];
            for (int b = 0; b < width; ++b)
              h_dx(i, b) = steps[t].dx[i * width + b];
          }
          Kokkos::deep_copy(staged[t].cols, h_cols);
          Kokkos::deep_copy(staged[t].dx, h_dx);
        }
        crossing = sum_over_ranks(crossing) / double(steps.size()) / size;
        Allgather gather(op, std::int64_t(k_max));

        std::vector<std::vector<double>> times(rungs.size());
        // Per pass: the arm's making and every step, step 0 included, over
        // the steps (a run's cost per step, as a caller pays it).
        std::vector<std::vector<double>> run_times(rungs.size());
        std::string adaptive_report, variant_report;
        std::vector<double> bytes(rungs.size(), 0), messages(rungs.size(), 0),
            error(rungs.size(), 0);
        Multivector y("bench::y", n_local, width),
            y_full("bench::y_full", n_local, width);
        // The answer: y = A x for x the sum of every step's dx.
        full.reset();
        for (auto const &s : staged)
          full.step(s, y_full);
        std::vector<std::size_t> order(rungs.size());
        for (int round = 0; round < o.rounds; ++round)
        {
          // A new order each round, the same on every rank (one seed): no
          // rung always follows the same one (the one before leaves its freed
          // memory and caches to the next one's making and first steps).
          std::iota(order.begin(), order.end(), std::size_t(0));
          std::shuffle(order.begin(), order.end(), order_random);
          for (std::size_t const r : order)
          {
            std::string const &rung = rungs[r];
            Kokkos::deep_copy(y, 0.0);
            full.reset();
            // Per-step traffic of the pass (received per rank per step).
            double received = 0, messages_in = 0;
            // Barrier, fence, clock; then fence, and the slowest rank's time.
            auto start_clock = [&] {
              MPI_Barrier(MPI_COMM_WORLD);
              space.fence();
              return MPI_Wtime();
            };
            auto stop_clock = [&](double start) {
              space.fence();
              return max_over_ranks(MPI_Wtime() - start);
            };
            double making = 0; // the arm's, where the rung makes one
            auto time_pass = [&](auto &&apply) {
              double run = making;
              for (std::size_t t = 0; t < steps.size(); ++t)
              {
                double const start = start_clock();
                apply(t);
                double const seconds = stop_clock(start);
                if (t > 0)
                  times[r].push_back(seconds);
                run += seconds;
              }
              run_times[r].push_back(run / double(steps.size()));
            };
            double const record = double(sizeof(std::int32_t) + width * sizeof(Scalar));
            auto arm_traffic = [&](std::int64_t changes_received) {
              received = double(changes_received) * record / double(steps.size());
              messages_in = double(op.recv_neighbours().size());
            };
            auto session_ids = Ids("bench::expected", steps[0].cols.size());
            Kokkos::deep_copy(session_ids, staged[0].cols);
            if (rung == "full_halo")
            {
              time_pass([&](std::size_t t) { full.step(staged[t], y); });
              received = full.bytes_received();
              messages_in = full.messages_received();
            }
            else if (rung == "allgather")
            {
              gather.reset_traffic();
              time_pass([&](std::size_t t) { gather.step(steps[t], y); });
              received = gather.bytes_received() / double(steps.size());
              messages_in = gather.messages_received();
            }
            else if (rung == "scatter")
            {
              double const start = start_clock();
              auto arm = op.scatter(width);
              making = stop_clock(start);
              time_pass([&](std::size_t t) {
                arm.apply_cols(space, staged[t].cols, staged[t].dx, y);
              });
              arm_traffic(arm.stats().changes_received);
            }
            else if (rung == "exact_set")
            {
              double const start = start_clock();
              auto arm = op.baseline(width);
              making = stop_clock(start);
              time_pass([&](std::size_t t) {
                arm.apply_cols(space, staged[t].cols, staged[t].dx, y);
              });
              arm_traffic(arm.stats().changes_received);
            }
            else if (rung == "scheduled")
            {
              double const start = start_clock();
              auto arm = op.session(space, session_ids, width);
              making = stop_clock(start);
              time_pass([&](std::size_t t) {
                arm.apply_cols(space, staged[t].cols, staged[t].dx, y);
              });
              arm_traffic(arm.stats().changes_received);
            }
            else
            {
              auto const options =
                  rung == "variant" ? *variant : hst::DistributedAdaptiveOptions{};
              double const start = start_clock();
              auto session = op.adaptive(space, session_ids, width, options);
              making = stop_clock(start);
              time_pass([&](std::size_t t) {
                session.apply_cols(space, staged[t].cols, staged[t].dx, y);
              });
              auto received = [](auto const *arm) {
                return arm ? arm->stats().changes_received : 0; // never run
              };
              arm_traffic(received(session.scatter()) + received(session.exact_set()) +
                          received(session.scheduled()));
              if (round == o.rounds - 1)
              {
                std::ostringstream text;
                text << session.report();
                (rung == "variant" ? variant_report : adaptive_report) = text.str();
              }
            }
            bytes[r] += received / o.rounds;
            messages[r] += messages_in / o.rounds;
            // Every rung's y must equal A x (the untimed full pass above).
            {
              auto const a = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y);
              auto const b =
                  Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, y_full);
              double diff = 0, scale = 0;
              for (std::size_t i = 0; i < n_local; ++i)
                for (int c = 0; c < width; ++c)
                {
                  diff = std::max(diff, std::abs(a(i, c) - b(i, c)));
                  scale = std::max(scale, std::abs(b(i, c)));
                }
              diff = max_over_ranks(diff);
              scale = max_over_ranks(scale);
              error[r] = std::max(error[r], scale > 0 ? diff / scale : diff);
            }
          }
        }
        for (std::size_t r = 0; r < rungs.size(); ++r)
        {
          bytes[r] = sum_over_ranks(bytes[r]) / size;
          messages[r] = sum_over_ranks(messages[r]) / size;
        }
        if (!root)
          continue;
        std::string const key =
            oc.name + ' ' + hst::workload::to_string(motion) + ' ' + std::to_string(w.k);
        std::printf("\n%s %s, k = %lld (%.1f%% of n), crossing %.1f changes/step/rank\n",
                    oc.name.c_str(), hst::workload::to_string(motion), (long long)w.k,
                    100 * fraction, crossing);
        std::printf("  %-10s %12s %10s %10s %12s %12s %10s %10s%s\n", "rung", "us/step",
                    "vs full", "vs above", "run us/step", "bytes/step", "msgs/step",
                    "max rel err", baseline.empty() ? "" : "  vs 1 rank");
        double const us_full = 1e6 * median(times[0]);
        double above = us_full;
        for (std::size_t r = 0; r < rungs.size(); ++r)
        {
          double const us = 1e6 * median(times[r]);
          std::printf("  %-10s %12.2f %9.2fx %9.2fx %12.2f %12.0f %10.1f %10.1e",
                      rungs[r].c_str(), us, us_full / us, above / us,
                      1e6 * median(run_times[r]), bytes[r], messages[r], error[r]);
          auto const it = baseline.find(key + ' ' + rungs[r]);
          if (it != baseline.end())
            std::printf("  %9.2fx", it->second / us);
          std::printf("\n");
          above = us;
          if (out)
            out << key << ' ' << rungs[r] << ' ' << us << '\n';
          if (!(error[r] <= 1e-12))
            ++failures;
        }
        std::printf("  adaptive, last round: %s", adaptive_report.c_str());
        if (o.variant)
          std::printf("  variant (%s), last round: %s", o.variant_text.c_str(),
                      variant_report.c_str());
        // The best fixed arm here against the best fixed arm of the 1-rank run.
        std::size_t best = 2;
        for (std::size_t r = 3; r < 5; ++r)
          if (median(times[r]) < median(times[best]))
            best = r;
        double one_rank = std::numeric_limits<double>::infinity();
        std::string one_rank_arm;
        for (std::size_t r = 2; r < 5; ++r)
        {
          auto const it = baseline.find(key + ' ' + rungs[r]);
          if (it != baseline.end() && it->second < one_rank)
            one_rank = it->second, one_rank_arm = rungs[r];
        }
        if (!one_rank_arm.empty())
          std::printf(
              "  best arm: %s %.2f us/step here, %s %.2f us/step on 1 rank: %.2fx\n",
              rungs[best].c_str(), 1e6 * median(times[best]), one_rank_arm.c_str(),
              one_rank, one_rank / (1e6 * median(times[best])));
      }
  }
  if (size >= 2)
  {
    double const alpha = ping_pong(8);
    double const beta = (ping_pong(1 << 20) - alpha) / double(1 << 20);
    if (root)
    {
      std::printf(
          "\nmeasured between ranks 0 and 1: latency %.2f us per message, %.3f ns "
          "per byte\n",
          1e6 * alpha, 1e9 * beta);
      std::printf("MODEL (not a measurement): communication per step per rank, weak "
                  "scaling with 1e6 rows per rank of a 2D 5-point grid cut in row-block "
                  "strips, k = 0.3%% of n spread uniformly (jump), B = 8, these latency "
                  "and byte costs, log2(P) latencies per allreduce/allgather stage:\n");
      std::printf("  %8s %14s %14s %14s\n", "ranks", "HST arms us", "full_halo us",
                  "allgather us");
      for (double P : {1e3, 1e4})
      {
        double const n_global = 1e6 * P;
        double const nx = std::sqrt(n_global);
        double const k_total = 0.003 * n_global;
        double const record = 4 + 8 * width;
        double const crossing_per_rank = 0.003 * 2 * nx; // changed boundary columns
        double const hst = alpha * (std::log2(P) + 2) + beta * crossing_per_rank * record;
        double const halo = 2 * alpha + beta * 2 * nx * width * 8;
        double const gather = 3 * alpha * std::log2(P) + beta * k_total * record;
        std::printf("  %8.0f %14.1f %14.1f %14.1f\n", P, 1e6 * hst, 1e6 * halo,
                    1e6 * gather);
      }
    }
  }
  if (root && failures)
    std::printf("bench_distributed: %d rung(s) disagreed with the full recompute\n",
                failures);
  return failures ? 1 : 0;
}

} // namespace

int main(int argc, char *argv[])
{
  MPI_Init(&argc, &argv);
  int status = 0;
  {
    Kokkos::ScopeGuard kokkos(argc, argv);
    Options o;
    // Bad arguments throw std::invalid_argument with what is wrong.
    auto whole_number = [](std::string const &flag, std::string const &text,
                           long long max) {
      std::istringstream in(text);
      long long v = 0;
      if (!(in >> v) || !in.eof() || v < 0 || v > max)
        throw std::invalid_argument(flag + " needs a whole number in [0, " +
                                    std::to_string(max) + "], got '" + text + "'");
      return v;
    };
    long long const int_max = std::numeric_limits<int>::max();
    try
    {
      for (int i = 1; i < argc; ++i)
      {
        std::string const a = argv[i];
        auto value = [&](char const *name) -> std::string {
          std::string const prefix = std::string(name) + "=";
          return a.rfind(prefix, 0) == 0 ? a.substr(prefix.size()) : std::string();
        };
        if (a == "--quick")
          o.quick = true;
        else if (!value("--steps").empty())
          o.steps = int(whole_number("--steps", value("--steps"), int_max));
        else if (!value("--churn").empty())
        {
          char *end = nullptr;
          std::string const text = value("--churn");
          o.churn = std::strtod(text.c_str(), &end);
          if (*end != '\0' || !(o.churn > 0 && o.churn <= 1))
            throw std::invalid_argument("--churn takes a number in (0, 1], got " + text);
        }
        else if (!value("--rounds").empty())
          o.rounds = int(whole_number("--rounds", value("--rounds"), int_max));
        else if (!value("--out").empty())
          o.out = value("--out");
        else if (!value("--baseline").empty())
          o.baseline = value("--baseline");
        else if (!value("--seed").empty())
          o.seed = unsigned(whole_number("--seed", value("--seed"),
                                         std::numeric_limits<unsigned>::max()));
        else if (!value("--variant").empty())
        {
          o.variant_text = value("--variant");
          try
          {
            o.variant = parse_variant(o.variant_text);
          }
          catch (std::invalid_argument const &e)
          {
            throw std::invalid_argument(std::string("--variant: ") + e.what());
          }
        }
        else if (!value("--motions").empty())
        {
          o.motions.clear();
          for (std::string const &name : split_commas(value("--motions")))
          {
            auto const motion = hst::workload::motion_named(name);
            if (!motion)
              throw std::invalid_argument(
                  "--motions takes drift, jump, frozen, separated by commas; got " + a);
            o.motions.push_back(*motion);
          }
        }
        else
          throw std::invalid_argument("unknown argument: " + a);
      }
    }
    catch (std::invalid_argument const &e)
    {
      if (rank_of(MPI_COMM_WORLD) == 0)
        std::fprintf(
            stderr,
            "usage: bench_distributed [--quick] [--steps=N] [--rounds=N] [--churn=X] "
            "[--motions=drift,jump,frozen] [--variant=NAME=VALUE,...] [--seed=N] "
            "[--out=FILE.tsv] [--baseline=FILE.tsv]\n  %s\n",
            e.what());
      status = 2;
    }
    if (status == 0 && (o.steps < 2 || o.rounds < 1))
    {
      if (rank_of(MPI_COMM_WORLD) == 0)
        std::fprintf(stderr, "bench_distributed: --steps must be >= 2, --rounds >= 1\n");
      status = 2;
    }
    if (status == 0)
      status = run(o);
  }
  MPI_Finalize();
  return status;
}
