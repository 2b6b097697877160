"""The Python package hst against torch.sparse.mm; run by ctest (python_hst)."""

import gc
import os
import subprocess
import sys
import warnings
from typing import List

import numpy as np
import pytest
import scipy.sparse as sp
import torch

import hst

warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")

ARMS = ["scheduled", "exact_set", "scatter", "adaptive"]
STEPS = 200


def make_session(op, arm, cols0, B):
    if arm == "scheduled":
        return op.session(cols0, B=B)
    if arm == "exact_set":
        return op.baseline(B)
    if arm == "scatter":
        return op.scatter(B)
    return op.adaptive(cols0, B)


def rectangular(n_rows=700, n_cols=1100, density=0.01, seed=7, dtype=np.float64):
    """A rectangular scipy matrix with empty rows and columns and duplicates."""
    rng = np.random.default_rng(seed)
    nnz = int(n_rows * n_cols * density)
    r = rng.integers(0, n_rows - 50, nnz)  # the last 50 rows stay empty
    c = rng.integers(0, n_cols, nnz)
    v = rng.standard_normal(nnz)
    r = np.concatenate([r, r[:100]])  # duplicates, summed by HSTOperator
    c = np.concatenate([c, c[:100]])
    v = np.concatenate([v, v[:100]])
    return sp.coo_matrix((v.astype(dtype), (r, c)), shape=(n_rows, n_cols))


def relative_error(y, ref):
    scale = ref.abs().max().item()
    return (y - ref).abs().max().item() / (scale if scale > 0 else 1.0)


def full_recompute(A_csr, cols, dx):
    """torch.sparse.mm of A with x = the sum of every step's dx at its columns."""
    x = torch.zeros(A_csr.shape[1], dx.shape[2], dtype=dx.dtype)
    for s in range(cols.shape[0]):
        x.index_add_(0, cols[s].long(), dx[s])
    return torch.sparse.mm(A_csr, x)


@pytest.fixture(scope="module")
def grid():
    A = hst.suite_operator("grid2d_5pt_100x100")
    return A, hst.HSTOperator(A)


@pytest.fixture(scope="module")
def rect():
    A = rectangular()
    A_torch = torch.sparse_csr_tensor(
        torch.from_numpy(A.tocsr().indptr.astype(np.int64)),
        torch.from_numpy(A.tocsr().indices.astype(np.int64)),
        torch.from_numpy(A.tocsr().data),
        A.shape,
    )
    return A_torch, hst.HSTOperator(A, tile=4, row_block=64)


def run_steps(sess, cols, dx, n_rows, dtype=torch.float64):
    y = torch.zeros(n_rows, dx.shape[2], dtype=dtype)
    for s in range(cols.shape[0]):
        sess.apply_cols(cols[s], dx[s], y)
    return y


# ------------------------------------------------------------------ answers


@pytest.mark.parametrize("arm", ARMS)
@pytest.mark.parametrize("B", [1, 8])
@pytest.mark.parametrize("motion", ["drift", "jump"])
def test_equals_sparse_mm_after_200_steps(grid, arm, B, motion):
    A, op = grid
    cols, dx = hst.workload(A, STEPS, motion=motion, churn=0.05, B=B, seed=3)
    sess = make_session(op, arm, cols[0], B)
    y = run_steps(sess, cols, dx, op.num_rows)
    assert relative_error(y, full_recompute(A, cols, dx)) <= 1e-13
    assert sess.stats()["steps"] == STEPS


@pytest.mark.parametrize("arm", ARMS)
@pytest.mark.parametrize("B", [1, 8])
def test_rectangular_scipy_int64_cols(rect, arm, B):
    """scipy input with duplicates, empty rows/columns; int64 ids, random sets."""
    A, op = rect
    rng = np.random.default_rng(B)
    k = 40
    cols = torch.stack([torch.from_numpy(rng.permutation(op.num_cols)[:k]) for _ in range(STEPS)])
    dx = torch.from_numpy(rng.standard_normal((STEPS, k, B)))
    sess = make_session(op, arm, cols[0], B)
    y = run_steps(sess, cols, dx, op.num_rows)
    assert cols.dtype == torch.int64
    assert relative_error(y, full_recompute(A, cols, dx)) <= 1e-13


@pytest.mark.parametrize("layout", ["csr", "coo", "scipy_csr", "scipy_coo"])
def test_inputs_give_the_same_operator(grid, layout):
    A, op = grid
    if layout == "csr":
        src = A
    elif layout == "coo":
        src = A.to_sparse_coo() if hasattr(A, "to_sparse_coo") else A.to_sparse()
    else:
        csr = sp.csr_matrix(
            (A.values().numpy(), A.col_indices().numpy(), A.crow_indices().numpy()), shape=A.shape
        )
        src = csr if layout == "scipy_csr" else csr.tocoo()
    other = hst.HSTOperator(src)
    assert other.shape == op.shape and other.nnz == op.nnz
    cols, dx = hst.workload(A, 20, B=8)
    y = run_steps(other.scatter(8), cols, dx, op.num_rows)
    assert relative_error(y, full_recompute(A, cols, dx)) <= 1e-13


@pytest.mark.parametrize("arm", ARMS)
def test_float32(arm):
    A64 = rectangular(dtype=np.float32)
    op = hst.HSTOperator(A64)
    assert op.dtype == torch.float32
    rng = np.random.default_rng(5)
    cols = torch.stack([torch.from_numpy(rng.permutation(op.num_cols)[:30].astype(np.int32)) for _ in range(50)])
    dx = torch.from_numpy(rng.standard_normal((50, 30, 8)).astype(np.float32))
    sess = make_session(op, arm, cols[0], 8)
    y = run_steps(sess, cols, dx, op.num_rows, dtype=torch.float32)
    A = torch.sparse_csr_tensor(
        torch.from_numpy(A64.tocsr().indptr.astype(np.int64)),
        torch.from_numpy(A64.tocsr().indices.astype(np.int64)),
        torch.from_numpy(A64.tocsr().data.astype(np.float64)),
        A64.shape,
    )
    assert relative_error(y.double(), full_recompute(A, cols, dx.double())) <= 1e-5
    with pytest.raises(TypeError, match="'dx'"):
        sess.apply_cols(cols[0], dx[0].double(), y)


def test_y_is_written_in_place_and_returned(grid):
    A, op = grid
    cols, dx = hst.workload(A, 2, B=8)
    y = torch.ones(op.num_rows, 8, dtype=torch.float64)
    ptr, version = y.data_ptr(), y._version
    out = op.scatter(8).apply_cols(cols[0], dx[0], y)
    assert out is y and y.data_ptr() == ptr and y._version > version
    x = torch.zeros(op.num_cols, 8, dtype=torch.float64)
    x[cols[0].long()] = dx[0]
    assert relative_error(y, 1 + torch.sparse.mm(A, x)) <= 1e-15


def test_empty_set_and_lists(grid):
    A, op = grid
    y = torch.zeros(op.num_rows, 2, dtype=torch.float64)
    for arm in ARMS:
        sess = make_session(op, arm, [], 2)
        sess.apply_cols(torch.empty(0, dtype=torch.int32), torch.empty(0, 2, dtype=torch.float64), y)
        sess.apply_cols([5, 3], torch.ones(2, 2, dtype=torch.float64), y)
    x = torch.zeros(op.num_cols, 2, dtype=torch.float64)
    x[[5, 3]] = 4.0
    assert relative_error(y, torch.sparse.mm(A, x)) <= 1e-15


# --------------------------------------------------------------- bad input


def bad_cases(op):
    k, B, n = 6, 8, op.num_rows
    cols = torch.arange(k, dtype=torch.int32) * 3
    dx = torch.ones(k, B, dtype=torch.float64)
    y = torch.zeros(n, B, dtype=torch.float64)
    yield "dx", TypeError, (cols, dx.float(), y)
    yield "y", TypeError, (cols, dx, y.float())
    yield "cols", TypeError, (cols.double(), dx, y)
    yield "dx", ValueError, (cols, torch.ones(k + 1, B, dtype=torch.float64), y)
    yield "dx", ValueError, (cols, torch.ones(k, B - 1, dtype=torch.float64), y)
    yield "dx", ValueError, (cols, torch.ones(k * B, dtype=torch.float64), y)
    yield "y", ValueError, (cols, dx, torch.zeros(n - 1, B, dtype=torch.float64))
    yield "y", ValueError, (cols, dx, torch.zeros(n, B + 1, dtype=torch.float64))
    yield "y", ValueError, (cols, dx, torch.zeros(B, n, dtype=torch.float64).t())
    yield "dx", ValueError, (cols, torch.ones(B, k, dtype=torch.float64).t(), y)
    yield "cols", ValueError, (torch.arange(2 * k, dtype=torch.int32)[::2], dx, y)
    yield "cols", ValueError, (cols.reshape(2, 3), dx, y)
    yield "y", ValueError, (cols, dx, torch.zeros(n, B, dtype=torch.float64, device="meta"))
    yield "dx", ValueError, (cols, dx.to_sparse(), y)
    yield "cols", ValueError, (torch.tensor([0, 1, 2, 3, 4, op.num_cols], dtype=torch.int32), dx, y)
    yield "cols", ValueError, (torch.tensor([0, 1, 2, 3, 4, -1], dtype=torch.int64), dx, y)
    yield "cols", ValueError, (torch.tensor([0, 1, 2, 3, 4, 2**32], dtype=torch.int64), dx, y)
    yield "cols", ValueError, (torch.tensor([0, 1, 2, 3, 4, 2], dtype=torch.int32), dx, y)
    yield "y", ValueError, (cols, dx, torch.zeros(n, B, dtype=torch.float64, requires_grad=True))


@pytest.mark.parametrize("arm", ARMS)
def test_bad_input_raises_naming_the_argument_and_leaves_y(grid, arm):
    A, op = grid
    sess = make_session(op, arm, torch.arange(6) * 3, 8)
    for name, error, (cols, dx, y) in bad_cases(op):
        before = y.clone() if y.device.type == "cpu" and y.layout == torch.strided else None
        with pytest.raises(error, match="argument '%s'" % name):
            sess.apply_cols(cols, dx, y)
        if before is not None:
            assert torch.equal(y.detach(), before.detach()), (name, error)
    assert sess.stats()["steps"] == 0


def test_overlapping_y_and_dx_rejected(grid):
    A, op = grid
    buf = torch.zeros(op.num_rows + 6, 8, dtype=torch.float64)
    with pytest.raises(ValueError, match="overlaps"):
        op.scatter(8).apply_cols(torch.arange(6, dtype=torch.int32), buf[-9:-3], buf[:-6])
    op.scatter(8).apply_cols(torch.arange(6, dtype=torch.int32), buf[-6:], buf[:-6])  # adjacent: fine


def test_bad_construction(grid):
    A, op = grid
    with pytest.raises(ValueError, match="'tile'"):
        hst.HSTOperator(A, tile=0)
    with pytest.raises(ValueError, match="'row_block'"):
        hst.HSTOperator(A, row_block=-1)
    with pytest.raises(TypeError, match="'A'"):
        hst.HSTOperator(A.to_dense())
    with pytest.raises(TypeError, match="'A'"):
        hst.HSTOperator(sp.csr_matrix(np.eye(3, dtype=np.int64)))
    with pytest.raises(ValueError, match="'B'"):
        op.scatter(0)
    with pytest.raises(ValueError, match="'B'"):
        op.session([1, 2], B=-1)
    with pytest.raises(ValueError, match="'cols'"):
        op.session([op.num_cols], B=8)
    with pytest.raises(ValueError, match="'retire_after'"):
        op.session([1], B=8, retire_after=0)
    with pytest.raises(TypeError, match="'cols'"):
        op.adaptive(["a"], B=8)


def test_strict_session_refuses_new_tiles(grid):
    A, op = grid
    sess = op.session(torch.arange(8), B=1, strict=True)
    y = torch.zeros(op.num_rows, 1, dtype=torch.float64)
    with pytest.raises(ValueError, match="'cols'"):
        sess.apply_cols(torch.tensor([op.num_cols - 1], dtype=torch.int32), torch.ones(1, 1, dtype=torch.float64), y)
    assert torch.count_nonzero(y) == 0


def test_grad_mode_off_allows_leaf_requiring_grad(grid):
    A, op = grid
    y = torch.zeros(op.num_rows, 8, dtype=torch.float64, requires_grad=True)
    with torch.no_grad():
        op.scatter(8).apply_cols([1], torch.ones(1, 8, dtype=torch.float64), y)
    assert torch.count_nonzero(y.detach()) > 0


# ------------------------------------------------------------ stats, report


def test_stats_and_report(grid):
    A, op = grid
    cols, dx = hst.workload(A, 100, churn=0.05, B=8)
    sched, exact, adapt = op.session(cols[0], 8), op.baseline(8), op.adaptive(cols[0], 8)
    for s in (sched, exact, adapt):
        run_steps(s, cols, dx, op.num_rows)
    st = sched.stats()
    assert st["steps"] == 100 and 0 < st["replans"] <= 99 and st["tiles_compiled"] >= st["column_tiles"] > 0
    assert exact.stats()["compiles"] == 100 - sum(torch.equal(cols[s], cols[s + 1]) for s in range(99))
    report = adapt.report()
    assert isinstance(report, hst.AdaptiveReport)
    assert report.steps == 100 and sum(report.arm_steps.values()) == 100
    assert report.decisions and report.decisions[0].chosen in hst.ARMS
    assert report.active == adapt.active in hst.ARMS
    assert report.probe_steps > 0 and report.probe_seconds > 0
    assert report.probe_compiles >= 1  # the exact-set arm's first probe step compiles
    assert str(report).startswith("hst::AdaptiveSession:")
    ts = op.tile_stats()
    assert ts.tile == 8 and ts.tiles > 0 and ts.column_tiles == -(-op.num_cols // 8)


# -------------------------------------------------------------- TorchScript


@torch.jit.script
def scripted_ops(
    sched: torch.classes.hst.ScheduledSession,
    exact: torch.classes.hst.ExactSetSession,
    scat: torch.classes.hst.ScatterSession,
    adapt: torch.classes.hst.AdaptiveSession,
    cols: List[torch.Tensor],
    dx: List[torch.Tensor],
    ys: List[torch.Tensor],
) -> int:
    for s in range(len(cols)):
        torch.ops.hst.apply_cols_scheduled(sched, cols[s], dx[s], ys[0])
        torch.ops.hst.apply_cols_exact_set(exact, cols[s], dx[s], ys[1])
        torch.ops.hst.apply_cols_scatter(scat, cols[s], dx[s], ys[2])
        torch.ops.hst.apply_cols_adaptive(adapt, cols[s], dx[s], ys[3])
    return len(cols)


@torch.jit.script
def scripted_methods(sess: torch.classes.hst.ScheduledSession, cols: torch.Tensor, dx: torch.Tensor, y: torch.Tensor):
    for s in range(cols.size(0)):
        sess.apply_cols(cols[s], dx[s], y)
    return y


@torch.jit.script
def scripted_build(
    n_rows: int, n_cols: int, row_ptr: torch.Tensor, col_idx: torch.Tensor, values: torch.Tensor
) -> torch.classes.hst.ScatterSession:
    op = torch.classes.hst.Operator(n_rows, n_cols, row_ptr, col_idx, values, 8, 1024, True)
    return op.scatter(8)


def test_torchscript_loop(grid):
    A, op = grid
    cols, dx = hst.workload(A, STEPS, churn=0.05, B=8, seed=9)
    ref = full_recompute(A, cols, dx)
    sessions = [make_session(op, arm, cols[0], 8).script_object for arm in ARMS]
    ys = [torch.zeros(op.num_rows, 8, dtype=torch.float64) for _ in ARMS]
    assert scripted_ops(*sessions, list(cols.unbind(0)), list(dx.unbind(0)), ys) == STEPS
    for y in ys:
        assert relative_error(y, ref) <= 1e-13
    y = scripted_methods(op.session(cols[0], 8).script_object, cols, dx, torch.zeros(op.num_rows, 8, dtype=torch.float64))
    assert relative_error(y, ref) <= 1e-13
    # Errors raised inside scripted code still name the argument.
    with pytest.raises(Exception, match="argument 'dx'"):
        scripted_methods(op.session(cols[0], 8).script_object, cols, dx.float(), y)


def test_torchscript_builds_the_operator(grid):
    A, op = grid
    sess = scripted_build(op.num_rows, op.num_cols, A.crow_indices(), A.col_indices(), A.values())
    cols, dx = hst.workload(A, 30, B=8)
    y = torch.zeros(op.num_rows, 8, dtype=torch.float64)
    for s in range(30):
        torch.ops.hst.apply_cols_scatter(sess, cols[s], dx[s], y)
    assert relative_error(y, full_recompute(A, cols, dx)) <= 1e-13


# ------------------------------------------------------ refcount, lifetime


def test_sessions_outlive_their_operator():
    A = hst.suite_operator("grid2d_5pt_100x100")
    cols, dx = hst.workload(A, STEPS, B=8, seed=4)
    gc.collect()  # objects of earlier tests caught in reference cycles
    base = hst.live_objects()
    op = hst.HSTOperator(A)
    sessions = [make_session(op, arm, cols[0], 8) for arm in ARMS]
    assert hst.live_objects() == base + 1 + len(ARMS)
    del op
    gc.collect()
    ref = full_recompute(A, cols, dx)
    for sess in sessions:
        assert relative_error(run_steps(sess, cols, dx, A.shape[0]), ref) <= 1e-13
    del sessions, sess
    gc.collect()
    assert hst.live_objects() == base


def test_apply_keeps_no_reference_to_its_arguments(grid):
    A, op = grid
    cols, dx = hst.workload(A, 3, B=8)
    y = torch.zeros(op.num_rows, 8, dtype=torch.float64)
    c64 = cols[0].long()
    args = [cols[0], c64, dx[0], y]
    before = [sys.getrefcount(t) for t in args]
    for arm in ARMS:
        sess = make_session(op, arm, cols[0], 8)
        sess.apply_cols(cols[0], dx[0], y)
        sess.apply_cols(c64, dx[0], y)
        del sess
    assert [sys.getrefcount(t) for t in args] == before


LIFETIME_SCRIPT = r"""
import sys, gc, torch, hst
A = hst.suite_operator("grid2d_5pt_100x100")
op = hst.HSTOperator(A)
sess = op.adaptive([1, 2, 3], B=2)
del op
gc.collect()
y = torch.zeros(A.shape[0], 2, dtype=torch.float64)
sess.apply_cols([4, 5], torch.ones(2, 2, dtype=torch.float64), y)
if sys.argv[1] == "free":
    del sess
    gc.collect()
    assert hst.live_objects() == 0
print("ok", hst.live_objects(), torch.ops.hst.kokkos_initialized_by_hst())
"""


@pytest.mark.parametrize("mode", ["free", "keep"])
def test_process_exits_cleanly(mode):
    """Kokkos is finalized at exit when every HST object is gone and left to
    the process's end otherwise; either way the interpreter exits with 0 and
    nothing on stderr."""
    out = subprocess.run(
        [sys.executable, "-c", LIFETIME_SCRIPT, mode],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONWARNINGS="ignore"),
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] == "ok" and out.stdout.split()[2] == "True"
    assert out.stderr.strip() == ""
