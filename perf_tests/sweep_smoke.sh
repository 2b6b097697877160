#!/bin/bash
# hst-sweep end to end (ctest: hst_sweep_smoke): two small operators, two
# cases each, one pass per arm, run with each operator in a process of its own
# (the default) and with --one-process. Both must report the same cases with
# the staged workload's k (the default set size of MISSION.md: 64 and 90
# here), every arm's answer matching the full recompute; an operator whose
# process fails must fail the sweep, named.
#
#   sweep_smoke.sh HST_SWEEP WORKDIR
set -euo pipefail
sweep=$1
work=$2
rm -rf "$work"
mkdir -p "$work"

fail() {
  echo "sweep_smoke: $*" >&2
  exit 1
}

small=(--no-growth --operators grid2d_5pt_100x100,road_173x173 --motions frozen,drift
  --rho 0.01 --repeats 1 --max-repeats 1 --min-time 0)
"$sweep" "${small[@]}" --out "$work/children" >"$work/children.log"
"$sweep" "${small[@]}" --one-process --out "$work/one" >"$work/one.log"

for mode in children one; do
  csv=$work/$mode/sweep.csv
  # 2 operators x 2 cases x 4 rungs (3 arms and the adaptive session).
  rows=$(tail -n +2 "$csv" | wc -l)
  [[ $rows == 16 ]] || fail "$mode: $rows rows in sweep.csv, expected 16"
  # operator,family,motion,rho,k: the staged set sizes came back whole.
  for key in grid2d_5pt_100x100,grid2d_5pt,frozen,0.01,64 \
    grid2d_5pt_100x100,grid2d_5pt,drift,0.01,64 road_173x173,road,frozen,0.01,90 \
    road_173x173,road,drift,0.01,90; do
    n=$(grep -c "^$key," "$csv" || true)
    [[ $n == 4 ]] || fail "$mode: $n rows start with '$key', expected 4"
  done
  # Every rung timed (us_per_step > 0) and checked (rel_error < 1e-10).
  awk -F, 'NR > 1 && !($9 > 0 && $10 < 1e-10) { bad = 1; print "sweep_smoke: " FILENAME ": " $0 > "/dev/stderr" }
           END { exit bad }' "$csv" || fail "$mode: a rung untimed or wrong"
  grep -q '"concurrency": [1-9]' "$work/$mode/sweep.json" ||
    fail "$mode: sweep.json has no concurrency"
  grep -q "all cases: " "$work/$mode/sweep-summary.txt" ||
    fail "$mode: no adaptive summary"
done
grep -q "each operator in a process of its own" "$work/children.log" ||
  fail "the default run did not say it ran each operator in a process of its own"
grep -q ", one process" "$work/one.log" || fail "--one-process did not say so"
# The same cases and rungs, in the same order, both ways (times aside).
diff <(cut -d, -f1-8 "$work/children/sweep.csv") <(cut -d, -f1-8 "$work/one/sweep.csv") ||
  fail "the two modes report different cases"

# An operator whose measurement fails: the sweep stops with status 1 and
# names it.
status=0
"$sweep" "${small[@]}" --mtx "$work/absent.mtx" --out "$work/failing" \
  >"$work/failing.log" 2>&1 || status=$?
[[ $status == 1 ]] || fail "a failing operator's sweep exited with $status, expected 1"
grep -q "the process measuring absent.mtx failed" "$work/failing.log" ||
  fail "the failing operator is not named: $(tail -3 "$work/failing.log")"
echo "sweep_smoke: both modes report the same 16 rungs, answers checked; a failing operator is named"
