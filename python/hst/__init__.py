"""HST for PyTorch: ``y += A[:, cols] @ dx`` in place, for a fixed sparse ``A``.

A fixed sparse operator ``A`` is prepared once (a column copy and a tile
index); each step then adds ``A[:, cols] @ dx`` into a tensor ``y`` that you
own, touching only the changed columns. The answer equals a full recompute
(``torch.sparse.mm``) to rounding.

    import hst
    op = hst.HSTOperator(A, tile=8)     # torch sparse CSR/COO or scipy.sparse
    sess = op.session(cols, B=8)        # scheduled arm, planned for `cols`
    for step in range(n):
        cols, dx = advance(...)         # cols: int32/int64 ids, dx: k x B
        sess.apply_cols(cols, dx, y)    # y (n_rows x B) += A[:, cols] @ dx

Four session kinds share ``apply_cols``: ``op.session`` (scheduled tiles),
``op.baseline`` (exact set), ``op.scatter`` (direct column scatter) and
``op.adaptive`` (times the three on your steps and keeps the fastest).

Tensors are CPU, C-contiguous; ``dx`` and ``y`` have the operator's dtype
(float64 or float32); ``cols`` is int32 (used in place) or int64 (converted
into a buffer the session keeps). Nothing is copied and ``y`` is written in
place; a bad argument raises ``ValueError`` (shape, device, layout, column
ids) or ``TypeError`` (dtype) naming it, before ``y`` is touched. There is no
autograd: ``dx`` and ``y`` must not require grad while grad mode is on.

The C++ objects are TorchScript custom classes (``torch.classes.hst.*``) and
the applies are also ops (``torch.ops.hst.apply_cols_scheduled``,
``..._exact_set``, ``..._scatter``, ``..._adaptive``), so a scripted loop can
call them; ``sess.script_object`` is what to pass into scripted code.
"""

import dataclasses
import os
import warnings
from typing import List

import torch

__all__ = [
    "HSTOperator",
    "ScheduledSession",
    "ExactSetSession",
    "ScatterSession",
    "AdaptiveSession",
    "TileStats",
    "AdaptiveDecision",
    "AdaptiveReport",
    "suite_operator",
    "workload",
    "live_objects",
]


def _load_library():
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "_hst_torch.so")
    if not os.path.exists(path):
        raise ImportError(
            "hst: the extension library %s is missing (build the CMake target "
            "hst_torch with -DHST_ENABLE_TORCH=ON)" % path
        )
    torch.ops.load_library(path)


_load_library()
_classes = torch.classes.hst
_ops = torch.ops.hst

# The order of the per-arm lists in the adaptive report (hst::Arm).
ARMS = ("scheduled", "exact_set", "scatter")


@dataclasses.dataclass(frozen=True)
class TileStats:
    """How the operator was cut into tiles (``hst::TileStats``)."""

    column_tiles: int  #: ceil(n_cols / tile)
    row_blocks: int  #: ceil(n_rows / row_block)
    tiles: int  #: nonempty (row block, column tile) pairs
    empty_segments: int  #: tile columns with no entry in their tile
    mean_tile_nnz: float  #: nnz / tiles
    tile: int
    row_block: int
    locality: bool


@dataclasses.dataclass(frozen=True)
class AdaptiveDecision:
    """One decision of an adaptive session: the end of a probe.

    The per-arm lists are indexed like ``hst.ARMS`` (scheduled, exact_set,
    scatter); NaN marks an arm that was not probed.
    """

    probe_start: int  #: step at which the probe began
    step: int  #: first step the chosen arm runs settled
    chosen: str
    us_per_step: List[float]
    ns_per_entry: List[float]
    measured_steps: List[int]
    warmup_steps: List[int]
    reason: str


@dataclasses.dataclass(frozen=True)
class AdaptiveReport:
    """What an adaptive session chose, when and why, and what probing cost.

    ``str(report)`` is the C++ library's printed report.
    """

    active: str
    probing: bool
    steps: int
    arm_steps: dict
    probe_steps: int
    probe_seconds: float
    probe_compiles: int
    probe_excess_seconds: float
    sampled_steps: int
    sampled_seconds: float
    decisions: List[AdaptiveDecision]
    text: str

    def __str__(self):
        return self.text


def _as_cols(cols, where):
    """Column ids as a CPU integer tensor (int32/int64 tensors pass as they are)."""
    if isinstance(cols, torch.Tensor):
        return cols
    try:
        return torch.as_tensor(cols, dtype=torch.int64)
    except (TypeError, ValueError, RuntimeError) as e:
        raise TypeError("%s: argument 'cols' must be a tensor or a sequence of ints (%s)" % (where, e))


class _Session:
    """What every session kind shares; see the subclasses."""

    _apply_op = None

    def __init__(self, obj, operator):
        self._obj = obj
        # Only for the user's convenience (num_rows, dtype): the C++ session
        # holds what it needs and works after the operator is gone.
        self._dtype = operator.dtype
        self._apply = obj.apply_cols

    @property
    def script_object(self):
        """The ``torch.classes.hst`` object, for TorchScript code."""
        return self._obj

    @property
    def B(self) -> int:
        """Batch width: columns of ``dx`` and ``y``."""
        return self._obj.width()

    @property
    def num_rows(self) -> int:
        return self._obj.num_rows()

    @property
    def num_cols(self) -> int:
        return self._obj.num_cols()

    @property
    def dtype(self) -> torch.dtype:
        return self._dtype

    def apply_cols(self, cols, dx, y):
        """``y += A[:, cols] @ dx`` in place; returns ``y``.

        ``cols``: k distinct column ids (int32 tensor: used in place; int64
        tensor, list or array: converted), any order. ``dx``: k x B, ``y``:
        n_rows x B, both CPU, C-contiguous, of the operator's dtype. Raises
        ValueError or TypeError naming the argument, before ``y`` is written.
        """
        if not isinstance(cols, torch.Tensor):
            cols = _as_cols(cols, type(self).__name__ + ".apply_cols")
        self._apply(cols, dx, y)
        return y

    def stats(self) -> dict:
        """Counters: ``steps`` (applies that passed the checks) and the arm's own."""
        return dict(self._obj.stats())

    def __repr__(self):
        return "hst.%s(num_rows=%d, num_cols=%d, B=%d, dtype=%s)" % (
            type(self).__name__,
            self.num_rows,
            self.num_cols,
            self.B,
            self.dtype,
        )


class ScheduledSession(_Session):
    """Scheduled arm (``op.session``): a schedule of column tiles, compiled for
    the tiles the expected columns fall in and reused while the changed set
    drifts; a column in a new tile compiles that tile in, tiles unused for
    ``retire_after`` steps are retired.

    ``stats()``: steps, replans (steps whose set changed), tiles_compiled,
    tiles_retired, column_tiles and tiles scheduled now, row_blocks of the
    last step.
    """


class ExactSetSession(_Session):
    """Exact-set arm (``op.baseline``): a row list compiled for exactly the
    step's column set, recompiled (in O(nnz(A[:, cols]))) whenever it changes.
    Wins on a frozen set. ``stats()``: steps, compiles."""


class ScatterSession(_Session):
    """Direct-scatter arm (``op.scatter``): adds the changed columns of a column
    copy of A straight into ``y``; nothing to compile. ``stats()``: steps."""


class AdaptiveSession(_Session):
    """Adaptive session (``op.adaptive``): holds the three arms, times them on
    your own steps (every step is real work by exactly one arm), keeps the
    fastest and re-probes when the workload shifts. ``report()`` says what it
    chose, when, why and what probing cost."""

    @property
    def active(self) -> str:
        """The arm of the latest decision (before the first: the probed arm)."""
        return self._obj.active()

    def reprobe(self):
        """Probe the arms again from the next step."""
        self._obj.reprobe()

    def report(self) -> AdaptiveReport:
        stats = self._obj.stats()
        totals = self._obj.report_totals()
        decisions = [
            AdaptiveDecision(
                probe_start=d[0],
                step=d[1],
                chosen=d[2],
                us_per_step=list(d[3]),
                ns_per_entry=list(d[4]),
                measured_steps=list(d[5]),
                warmup_steps=list(d[6]),
                reason=d[7],
            )
            for d in self._obj.report_decisions()
        ]
        return AdaptiveReport(
            active=self._obj.active(),
            probing=bool(stats["probing"]),
            steps=int(totals["steps"]),
            arm_steps={a: int(stats["steps_" + a]) for a in ARMS},
            probe_steps=int(totals["probe_steps"]),
            probe_seconds=totals["probe_seconds"],
            probe_compiles=int(totals["probe_compiles"]),
            probe_excess_seconds=totals["probe_excess_seconds"],
            sampled_steps=int(totals["sampled_steps"]),
            sampled_seconds=totals["sampled_seconds"],
            decisions=decisions,
            text=self._obj.report_text(),
        )


def _csr_arrays(A):
    """(n_rows, n_cols, row_ptr, col_idx, values) of A, duplicates summed."""
    if isinstance(A, torch.Tensor):
        if A.layout == torch.sparse_csr:
            A = A.to_sparse_coo() if hasattr(A, "to_sparse_coo") else A.to_sparse()
        if A.layout != torch.sparse_coo:
            raise TypeError(
                "hst.HSTOperator: argument 'A' must be a torch.sparse_csr or "
                "torch.sparse_coo tensor or a scipy.sparse matrix, got layout %s" % A.layout
            )
        if A.dim() != 2:
            raise ValueError("hst.HSTOperator: argument 'A' must be 2-D, got %d-D" % A.dim())
        if A.device.type != "cpu":
            raise ValueError("hst.HSTOperator: argument 'A' must be on the CPU, got %s" % A.device)
        A = A.coalesce()
        rows, cols = A.indices()
        values = A.values()
        n_rows, n_cols = A.shape
        # CSR from the coalesced (row-major sorted, duplicate-free) entries.
        counts = torch.bincount(rows, minlength=n_rows)
        row_ptr = torch.zeros(n_rows + 1, dtype=torch.int64)
        torch.cumsum(counts, 0, out=row_ptr[1:])
        return n_rows, n_cols, row_ptr, cols.contiguous(), values.contiguous()
    try:
        import scipy.sparse as sp
    except ImportError:  # pragma: no cover - scipy is optional
        sp = None
    if sp is not None and sp.issparse(A):
        A = sp.csr_matrix(A, copy=True)
        A.sum_duplicates()
        A.sort_indices()
        values = torch.from_numpy(A.data)
        return (
            A.shape[0],
            A.shape[1],
            torch.from_numpy(A.indptr.astype("int64")),
            torch.from_numpy(A.indices.astype("int64")),
            values.contiguous(),
        )
    raise TypeError(
        "hst.HSTOperator: argument 'A' must be a torch.sparse_csr or torch.sparse_coo "
        "tensor or a scipy.sparse matrix, got %s" % type(A).__name__
    )


class HSTOperator:
    """A fixed sparse operator A prepared once for many in-place delta applies.

    ``A``: a ``torch.sparse_csr`` or ``torch.sparse_coo`` tensor (CPU) or a
    ``scipy.sparse`` matrix, float64 or float32, any shape; duplicate entries
    are summed. Construction copies A by columns and builds the tile index:
    ``tile`` columns per column tile, ``row_block`` rows per row block, rows
    and columns ordered by graph locality first unless ``locality=False``.
    A itself is not kept. Sessions made from the operator stay valid after it
    is deleted (they share its preparation).
    """

    def __init__(self, A, tile: int = 8, row_block: int = 1024, locality: bool = True):
        n_rows, n_cols, row_ptr, col_idx, values = _csr_arrays(A)
        if values.dtype not in (torch.float64, torch.float32):
            raise TypeError(
                "hst.HSTOperator: argument 'A' must hold float64 or float32 values, got %s"
                % values.dtype
            )
        self._dtype = values.dtype
        self._obj = _classes.Operator(
            int(n_rows), int(n_cols), row_ptr, col_idx, values, int(tile), int(row_block), bool(locality)
        )

    @property
    def script_object(self):
        """The ``torch.classes.hst.Operator`` object, for TorchScript code."""
        return self._obj

    @property
    def num_rows(self) -> int:
        return self._obj.num_rows()

    @property
    def num_cols(self) -> int:
        return self._obj.num_cols()

    @property
    def shape(self):
        return (self.num_rows, self.num_cols)

    @property
    def nnz(self) -> int:
        return self._obj.nnz()

    @property
    def dtype(self) -> torch.dtype:
        return self._dtype

    def tile_stats(self) -> TileStats:
        s = self._obj.tile_stats()
        return TileStats(
            column_tiles=int(s["column_tiles"]),
            row_blocks=int(s["row_blocks"]),
            tiles=int(s["tiles"]),
            empty_segments=int(s["empty_segments"]),
            mean_tile_nnz=s["mean_tile_nnz"],
            tile=int(s["tile"]),
            row_block=int(s["row_block"]),
            locality=bool(s["locality"]),
        )

    def session(self, cols, B: int = 8, retire_after: int = 64, strict: bool = False) -> ScheduledSession:
        """Scheduled arm for batch width ``B``, compiled for the column tiles of
        ``cols`` (the columns you expect; may be empty). ``strict=True`` raises
        ValueError for a step outside the scheduled tiles instead of compiling
        them in."""
        cols = _as_cols(cols, "hst.HSTOperator.session")
        return ScheduledSession(self._obj.session(cols, int(B), int(retire_after), bool(strict)), self)

    def baseline(self, B: int = 8) -> ExactSetSession:
        """Exact-set arm for batch width ``B``."""
        return ExactSetSession(self._obj.baseline(int(B)), self)

    def scatter(self, B: int = 8) -> ScatterSession:
        """Direct-scatter arm for batch width ``B``."""
        return ScatterSession(self._obj.scatter(int(B)), self)

    def adaptive(self, cols, B: int = 8) -> AdaptiveSession:
        """Adaptive session for batch width ``B`` over the three arms (its
        scheduled arm compiled for ``cols``, as in ``session``)."""
        cols = _as_cols(cols, "hst.HSTOperator.adaptive")
        return AdaptiveSession(self._obj.adaptive(cols, int(B)), self)

    def __repr__(self):
        return "hst.HSTOperator(shape=(%d, %d), nnz=%d, dtype=%s)" % (
            self.num_rows,
            self.num_cols,
            self.nnz,
            self.dtype,
        )


def suite_operator(name: str, layout=torch.sparse_csr):
    """The project's suite operator ``name`` (``hst::workload::suite_operator``,
    e.g. ``"grid2d_5pt_316x316"``) as a float64 torch sparse tensor
    (``layout`` torch.sparse_csr or torch.sparse_coo)."""
    n_rows, n_cols, row_ptr, col_idx, values = _ops.suite_operator(name)
    with warnings.catch_warnings():  # torch 1.13: "Sparse CSR tensor support is in beta"
        warnings.simplefilter("ignore", UserWarning)
        A = torch.sparse_csr_tensor(row_ptr, col_idx, values, (n_rows, n_cols))
    if layout == torch.sparse_coo:
        return A.to_sparse_coo() if hasattr(A, "to_sparse_coo") else A.to_sparse()
    return A


def workload(A, steps: int, motion: str = "drift", churn: float = 0.01, k: int = -1, B: int = 8, seed: int = 1):
    """The project's deterministic workload (``hst::workload::Workload``) on A:
    ``(cols, dx)`` with cols ``steps x k`` (int32) and dx ``steps x k x B``
    (float64). ``motion``: drift, jump or frozen; ``k = -1``: max(64, 0.3% of
    the columns)."""
    n_rows, n_cols, row_ptr, col_idx, values = _csr_arrays(A)
    return _ops.workload(
        int(n_rows), int(n_cols), row_ptr, col_idx, values.double(), motion, float(churn), int(k), int(B), int(seed), int(steps)
    )


def live_objects() -> int:
    """HST objects (operators and sessions) alive in this process. Kokkos is
    finalized at exit only when none is (see the package docs)."""
    return _ops.live_objects()
