#!/usr/bin/python3
"""Plots for the main job, from the ladder's Google Benchmark JSON and the
sweep's sweep.json (both in the results folder):

  ladder.png          the ladder per operator, us/step on a log axis
  drift_vs_jump.png   per operator: speedup of the scheduled arm over the
                      exact-set arm under drift (x) vs under jump (y), one
                      panel per churn, with the diagonal and the 1x lines
  cost_growth.png     us/step of each arm vs rows at fixed k (log-log)
  adaptive.png        (when the sweep measured it) the adaptive session's
                      speed relative to the best arm of each case

usage: plot_results.py RESULTS_DIR
"""

import json
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

import matplotlib
import numpy

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402


def readable_log_axis(axis, suffix=""):
    """Log axis ticked at 1, 2, 5 x 10^n and labelled as plain numbers."""
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}{suffix}"))
    axis.set_minor_formatter(NullFormatter())

RUNG_ORDER = ["full_spmv", "library_slice", "scatter", "exact_set", "scheduled", "adaptive"]
RUNG_COLOUR = {rung: f"C{i}" for i, rung in enumerate(RUNG_ORDER)}
RUNG_LABEL = {
    "full_spmv": "(a) full spmv",
    "library_slice": "(b) library slice",
    "scatter": "(c) scatter",
    "exact_set": "(d) exact set",
    "scheduled": "(e) scheduled",
    "adaptive": "(f) adaptive",
}


def ladder_medians(path):
    """{operator: {rung: median us/step}} from Google Benchmark JSON."""
    runs = json.loads(path.read_text())["benchmarks"]
    samples = defaultdict(lambda: defaultdict(list))
    for run in runs:
        if run.get("run_type") == "aggregate" or "us_per_step" not in run:
            continue
        _, op, rung = run["run_name"].split("/")[:3]
        samples[op][rung].append(run["us_per_step"])
    return {op: {r: statistics.median(v) for r, v in rungs.items()}
            for op, rungs in samples.items()}


def layout_note(layout):
    """' (x, y, dx LayoutRight)' for a layout named in the results' context."""
    return f" (x, y, dx Layout{layout.capitalize()})" if layout else ""


def plot_ladder(medians, out, layout=None):
    ops = list(medians)
    rungs = [r for r in RUNG_ORDER if any(r in medians[o] for o in ops)]
    width = 0.8 / len(rungs)
    fig, ax = plt.subplots(figsize=(max(8, 1.3 * len(ops) + 2), 5))
    for i, rung in enumerate(rungs):
        xs = [j + (i - (len(rungs) - 1) / 2) * width for j in range(len(ops))]
        ys = [medians[o].get(rung, float("nan")) for o in ops]
        ax.bar(xs, ys, width, label=RUNG_LABEL.get(rung, rung), color=RUNG_COLOUR.get(rung))
    ax.set_yscale("log")
    ax.set_xticks(range(len(ops)))
    ax.set_xticklabels(ops, rotation=30, ha="right", fontsize=8)
    readable_log_axis(ax.yaxis)
    ax.set_ylabel("us per step (log scale, lower is better)")
    ax.set_title("The ladder: B = 8, drift, churn 0.01, default k" + layout_note(layout))
    ax.grid(axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=8, ncol=3)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def plot_drift_vs_jump(sweep, out):
    speed = defaultdict(dict)  # (op, rho) -> {motion: t_exact / t_scheduled}
    family = {}
    for c in sweep["cases"]:
        us = c["us_per_step"]
        if "scheduled" in us and "exact_set" in us:
            speed[(c["operator"], c["rho"])][c["motion"]] = us["exact_set"] / us["scheduled"]
            family[c["operator"]] = c["family"]
    rhos = sorted({rho for (_, rho), m in speed.items() if "drift" in m and "jump" in m})
    if not rhos:
        return False
    families = sorted(set(family.values()))
    colours = {f: plt.cm.tab10(i % 10) for i, f in enumerate(families)}
    columns = min(len(rhos), 2)
    grid_rows = (len(rhos) + columns - 1) // columns
    fig, axes = plt.subplots(grid_rows, columns, figsize=(5.2 * columns, 4.8 * grid_rows),
                             squeeze=False)
    for ax in axes.flat[len(rhos):]:
        ax.set_visible(False)
    for ax, rho in zip(axes.flat, rhos):
        points = [(op, m["drift"], m["jump"]) for (op, r), m in speed.items()
                  if r == rho and "drift" in m and "jump" in m]
        values = [v for _, x, y in points for v in (x, y)]
        lo, hi = min(values + [1.0]) / 1.3, max(values + [1.0]) * 1.3
        ax.plot([lo, hi], [lo, hi], color="grey", lw=0.8, ls="--", label="drift = jump")
        ax.axvline(1.0, color="black", lw=0.8)
        ax.axhline(1.0, color="black", lw=0.8)
        for op, x, y in points:
            ax.scatter(x, y, color=colours[family[op]], s=22)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
        readable_log_axis(ax.xaxis, "x")
        readable_log_axis(ax.yaxis, "x")
        ax.set_title(f"churn {rho:g}")
        ax.set_xlabel("scheduled speedup over exact set, drift")
        ax.set_ylabel("... under jump")
        ax.grid(which="both", alpha=0.3)
    handles = [plt.Line2D([], [], marker="o", ls="", color=colours[f], label=f)
               for f in families]
    fig.legend(handles=handles, loc="lower center", ncol=min(len(families), 6), fontsize=8)
    layout = sweep.get("context", {}).get("layout")
    fig.suptitle("Scheduled vs exact set per operator (>1: scheduled faster)"
                 + layout_note(layout))
    fig.tight_layout(rect=(0, 0.06, 1, 0.96))
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return True


def plot_growth(sweep, out):
    growth = sweep.get("growth", [])
    if len(growth) < 2:
        return False
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    arms = [r for r in RUNG_ORDER if r in growth[0]["us_per_step"]]
    rows = [g["rows"] for g in growth]
    values = []
    for arm in arms:
        us = [g["us_per_step"][arm] for g in growth]
        values += us
        slope = numpy.polyfit(numpy.log(rows), numpy.log(us), 1)[0]
        ax.plot(rows, us, marker="o", color=RUNG_COLOUR.get(arm),
                label=f"{RUNG_LABEL.get(arm, arm)}: slope {slope:.3f}, "
                      f"max/min {max(us) / min(us):.2f}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    # A decade or more of y range, so that flat looks flat and growth shows.
    centre = math.sqrt(min(values) * max(values))
    span = max(math.sqrt(10), math.sqrt(max(values) / min(values)) * 1.5)
    ax.set_ylim(centre / span, centre * span)
    readable_log_axis(ax.yaxis)
    ax.set_xlabel("rows of the operator (2D 5-point grid)")
    ax.set_ylabel("us per step")
    layout = sweep.get("context", {}).get("layout")
    ax.set_title(f"Cost growth at fixed k = {growth[0]['k']} (drift, churn 0.01)"
                 + layout_note(layout), fontsize=10)
    ax.grid(which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return True


def plot_adaptive(sweep, out):
    ratios = []
    for c in sweep["cases"]:
        us = c["us_per_step"]
        if "adaptive" not in us:
            continue
        best = min(t for arm, t in us.items() if arm != "adaptive")
        ratios.append((c["motion"], best / us["adaptive"]))
    if not ratios:
        return False
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    motions = sorted({m for m, _ in ratios})
    ax.hist([[r for m, r in ratios if m == motion] for motion in motions],
            bins=20, label=motions, stacked=True)
    ax.axvline(0.9, color="black", ls="--", lw=0.8, label="0.9x")
    ax.set_xlabel("adaptive speed relative to the best arm (t_best / t_adaptive)")
    ax.set_ylabel("cases")
    ax.set_title("Adaptive session vs the per-case best arm"
                 + layout_note(sweep.get("context", {}).get("layout")))
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return True


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    results = Path(sys.argv[1])
    made = []
    ladder = results / "ladder.json"
    if ladder.exists():
        context = json.loads(ladder.read_text()).get("context", {})
        plot_ladder(ladder_medians(ladder), results / "ladder.png", context.get("hst_layout"))
        made.append("ladder.png")
    sweep_path = results / "sweep.json"
    if sweep_path.exists():
        sweep = json.loads(sweep_path.read_text())
        for name, plot in [("drift_vs_jump.png", plot_drift_vs_jump),
                           ("cost_growth.png", plot_growth),
                           ("adaptive.png", plot_adaptive)]:
            if plot(sweep, results / name):
                made.append(name)
    if not made:
        sys.exit(f"plot_results.py: no ladder.json or sweep.json in {results}")
    print("plots: " + ", ".join(str(results / m) for m in made))


if __name__ == "__main__":
    main()
