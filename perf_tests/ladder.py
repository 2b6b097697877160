#!/usr/bin/python3
"""The seed note's ladder from Python, one process, same inputs for every rung.

Per operator of the project's suite (the operator and the workload come from
the C++ generators through the extension, so they are bench_ladder's), B = 8,
drift, churn 0.01, default k, 200 steps:

  (a) torch full recompute: x[cols] += dx, then y = torch.sparse.mm(A, x)
  (b) torch slice: only the changed columns, multiplied with torch ops
  (c) HST scatter, (d) exact set, (e) scheduled, (f) adaptive, through the
      Python package (sess.apply_cols(cols, dx, y), y in place)

A pass makes the rung, runs step 0 untimed (preparation, as bench_ladder) and
times steps 1..S-1 with time.perf_counter; us/step is their mean. Passes run in
rounds (each round runs every rung once, in a rotated order, each HST rung
followed by the same arm run from C++); a rung's figure is the median over its
passes. Every pass's y is checked against a full recompute.

(a) and (b) each try several formulations on a short pass first and keep the
fastest (printed): (a) CSR or COO A; (b) a CSC-like column store made once,
then per step either gather + index_add_ (no n_rows-sized temporary), gather
into a sparse COO slice + torch.sparse.mm, or index_select on a COO A^T +
torch.sparse.mm. The extension's call cost is each HST rung's us/step minus
the same arm's us/step when the same steps run from C++ (the core's own
apply_cols on unmanaged Views, timed inside the extension: time_steps).

    /usr/bin/python3 perf_tests/ladder.py [--operators a,b,...] [--passes 7]
        [--steps 200] [--torch-threads 1]   (PYTHONPATH=<build>/python)
"""

import argparse
import math
import statistics
import sys
import time
import warnings

import torch

import hst

warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")

DEFAULT_OPERATORS = [
    "grid2d_5pt_316x316",
    "grid3d_7pt_32x32x32",
    "mesh_geometric_30000",
    "circuit_30000",
    "road_173x173",
]
RUNGS = ["full", "slice", "scatter", "exact_set", "scheduled", "adaptive"]
LABELS = {
    "full": "(a) torch.sparse.mm full recompute",
    "slice": "(b) torch slice of the changed columns",
    "scatter": "(c) HST scatter",
    "exact_set": "(d) HST exact set",
    "scheduled": "(e) HST scheduled",
    "adaptive": "(f) HST adaptive (probing included)",
}
HST_RUNGS = ["scatter", "exact_set", "scheduled", "adaptive"]


# ----------------------------------------------------------------- rungs


class Full:
    """(a): what torch code without HST does each step."""

    def __init__(self, p, fmt):
        self.A = p.A_csr if fmt == "csr" else p.A_coo
        self.x = torch.zeros(p.n_cols, p.B, dtype=torch.float64)
        self.y = None

    def step(self, c, d, y):
        self.x.index_add_(0, c, d)
        self.y = torch.sparse.mm(self.A, self.x)

    def result(self, y):
        return self.y


class SliceGather:
    """(b) gather + index_add_: the changed columns' entries are gathered from
    a column store made once (col_ptr, row, val) and added into y in place."""

    def __init__(self, p, fmt):
        self.col_ptr, self.row, self.val = p.csc
        self.fmt = fmt
        self.n_rows = p.n_rows
        if fmt == "index_select":
            self.At = p.At_coo

    def step(self, c, d, y):
        if self.fmt == "index_select":
            S = self.At.index_select(0, c)  # k x n_rows, sparse
            y.add_(torch.sparse.mm(S.t(), d))
            return
        start = self.col_ptr[c]
        length = self.col_ptr[c + 1] - start
        total = int(length.sum())
        # Entry e of the slice: column position pos[e], index start[pos] + offset.
        pos = torch.repeat_interleave(torch.arange(c.numel()), length)
        first = torch.cumsum(length, 0) - length
        idx = torch.arange(total) + (start - first)[pos]
        rows = self.row[idx]
        vals = self.val[idx]
        if self.fmt == "index_add":
            y.index_add_(0, rows, vals.unsqueeze(1) * d[pos])
        else:  # "coo_mm"
            S = torch.sparse_coo_tensor(torch.stack([rows, pos]), vals, (self.n_rows, c.numel()))
            y.add_(torch.sparse.mm(S, d))

    def result(self, y):
        return y


class Arm:
    """(c)-(f): an HST session through the Python package."""

    def __init__(self, p, kind):
        op, c0 = p.op, p.cols32[0]
        self.sess = {
            "scatter": lambda: op.scatter(p.B),
            "exact_set": lambda: op.baseline(p.B),
            "scheduled": lambda: op.session(c0, B=p.B),
            "adaptive": lambda: op.adaptive(c0, B=p.B),
        }[kind]()
        self.step = self.sess.apply_cols

    def result(self, y):
        return y


# --------------------------------------------------------------- problem


class Problem:
    def __init__(self, name, steps, B, churn, seed):
        self.name = name
        self.A_csr = hst.suite_operator(name)
        self.n_rows, self.n_cols = self.A_csr.shape
        self.B = B
        self.A_coo = self.A_csr.to_sparse_coo() if hasattr(self.A_csr, "to_sparse_coo") else self.A_csr.to_sparse()
        self.A_coo = self.A_coo.coalesce()
        t0 = time.perf_counter()
        self.op = hst.HSTOperator(self.A_csr)
        self.operator_ms = 1e3 * (time.perf_counter() - t0)
        self.cols32, self.dx = hst.workload(self.A_csr, steps, motion="drift", churn=churn, B=B, seed=seed)
        self.cols64 = self.cols32.long()
        self.k = self.cols32.shape[1]
        # A by columns, made once for (b): (col_ptr, row, val), and A^T as COO.
        At = self.A_coo.t().coalesce()
        col, row = At.indices()
        counts = torch.bincount(col, minlength=self.n_cols)
        col_ptr = torch.zeros(self.n_cols + 1, dtype=torch.int64)
        torch.cumsum(counts, 0, out=col_ptr[1:])
        self.csc = (col_ptr, row.contiguous(), At.values().contiguous())
        self.At_coo = At
        x = torch.zeros(self.n_cols, B, dtype=torch.float64)
        for s in range(steps):
            x.index_add_(0, self.cols64[s], self.dx[s])
        self.y_ref = torch.sparse.mm(self.A_csr, x)
        self.changed_nnz = float((col_ptr[self.cols64 + 1] - col_ptr[self.cols64]).sum(1).double().mean())

    def steps_for(self, rung):
        cols = self.cols32 if rung in HST_RUNGS else self.cols64
        return [(cols[s], self.dx[s]) for s in range(cols.shape[0])]


def make(p, rung, variant):
    if rung == "full":
        return Full(p, variant)
    if rung == "slice":
        return SliceGather(p, variant)
    return Arm(p, rung)


def relative_error(y, ref):
    scale = ref.abs().max().item()
    return (y - ref).abs().max().item() / (scale if scale > 0 else 1.0)


def timed_pass(p, rung, variant, steps, check=True):
    """(us/step of steps 1.., preparation ms); checks y against the reference."""
    y = torch.zeros(p.n_rows, p.B, dtype=torch.float64)
    t0 = time.perf_counter()
    r = make(p, rung, variant)
    step = r.step
    c, d = steps[0]
    step(c, d, y)
    prepare = time.perf_counter() - t0
    t0 = time.perf_counter()
    for c, d in steps[1:]:
        step(c, d, y)
    elapsed = time.perf_counter() - t0
    if check:
        err = relative_error(r.result(y), p.y_ref)
        if not err <= 1e-12:
            raise RuntimeError("%s %s/%s: answer differs from the full recompute by %g" % (p.name, rung, variant, err))
    return 1e6 * elapsed / (len(steps) - 1), 1e3 * prepare


def cxx_pass(p, rung):
    """us/step of the same arm on the same steps, from C++ (time_steps)."""
    y = torch.zeros(p.n_rows, p.B, dtype=torch.float64)
    r = Arm(p, rung)
    seconds = r.sess.script_object.time_steps(p.cols32, p.dx, y, 1)
    err = relative_error(y, p.y_ref)
    if not err <= 1e-12:
        raise RuntimeError("%s %s (C++): answer differs by %g" % (p.name, rung, err))
    return 1e6 * seconds


def choose(p, rung, variants, steps):
    """The fastest formulation on a short pass (every step is checked later)."""
    short = steps[: min(len(steps), 41)]
    best = None
    for v in variants:
        times = [timed_pass(p, rung, v, short, check=False)[0] for _ in range(2)]
        t = min(times)
        if best is None or t < best[1]:
            best = (v, t)
    return best[0]


def geomean(xs):
    xs = [x for x in xs if x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--operators", default=",".join(DEFAULT_OPERATORS))
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--passes", type=int, default=7)
    ap.add_argument("--churn", type=float, default=0.01)
    ap.add_argument("--B", type=int, default=8)
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--torch-threads", type=int, default=1, help="torch intra-op threads (HST runs on one: Serial Kokkos)")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.torch_threads)
    print(
        "HST ladder from Python: torch %s (%d thread%s), B = %d, drift, churn %g, default k, %d steps, "
        "median of %d passes (step 0 untimed)"
        % (
            torch.__version__,
            torch.get_num_threads(),
            "" if torch.get_num_threads() == 1 else "s",
            args.B,
            args.churn,
            args.steps,
            args.passes,
        )
    )
    summary = {r: {"x_above": [], "x_full": []} for r in RUNGS}
    overheads = {r: [] for r in HST_RUNGS}
    for name in args.operators.split(","):
        p = Problem(name, args.steps, args.B, args.churn, args.seed)
        steps = {r: p.steps_for(r) for r in RUNGS}
        variant = {
            "full": choose(p, "full", ["csr", "coo"], steps["full"]),
            "slice": choose(p, "slice", ["index_add", "coo_mm", "index_select"], steps["slice"]),
        }
        us = {r: [] for r in RUNGS}
        prep = {r: [] for r in RUNGS}
        cxx = {r: [] for r in HST_RUNGS}
        for round_ in range(args.passes):
            order = RUNGS[round_ % len(RUNGS) :] + RUNGS[: round_ % len(RUNGS)]
            for r in order:
                t, pr = timed_pass(p, r, variant.get(r), steps[r])
                us[r].append(t)
                prep[r].append(pr)
                if r in cxx:  # the same arm from C++, right after
                    cxx[r].append(cxx_pass(p, r))
        print(
            "\n%s: %d rows, %d nnz, k = %d, mean nnz(A[:,S]) = %.0f; hst.HSTOperator %.1f ms; "
            "(a) uses %s A, (b) uses %s"
            % (name, p.n_rows, p.A_csr.values().numel(), p.k, p.changed_nnz, p.operator_ms, variant["full"], variant["slice"])
        )
        print(
            "%-40s %10s %9s %9s %11s %11s %13s"
            % ("rung", "us/step", "x above", "x (a)", "prepare ms", "C++ us/step", "call cost us")
        )
        full = statistics.median(us["full"])
        above = None
        for r in RUNGS:
            t = statistics.median(us[r])
            x_above = above / t if above else float("nan")
            extra = ("%11.2f %13.2f" % (statistics.median(cxx[r]), t - statistics.median(cxx[r]))) if r in cxx else "%11s %13s" % ("-", "-")
            print(
                "%-40s %10.2f %9s %9.2f %11.2f %s"
                % (LABELS[r], t, "-" if above is None else "%.2f" % x_above, full / t, statistics.median(prep[r]), extra)
            )
            if above is not None:
                summary[r]["x_above"].append(x_above)
            summary[r]["x_full"].append(full / t)
            if r in cxx:
                overheads[r].append(t - statistics.median(cxx[r]))
            above = t
    print("\nGeomean over the operators (as the seed note reports its ladder):")
    print("%-40s %9s %9s %16s" % ("rung", "x above", "x (a)", "call cost us"))
    for r in RUNGS:
        xa = geomean(summary[r]["x_above"]) if summary[r]["x_above"] else float("nan")
        cost = ("%16s" % ("%.2f-%.2f" % (min(overheads[r]), max(overheads[r])))) if r in overheads else "%16s" % "-"
        print(
            "%-40s %9s %9.2f %s"
            % (LABELS[r], "-" if math.isnan(xa) else "%.2f" % xa, geomean(summary[r]["x_full"]), cost)
        )
    print(
        "\ncall cost: the rung's us/step minus the same arm's us/step on the same steps run from C++ "
        "(min-max over the operators)."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
