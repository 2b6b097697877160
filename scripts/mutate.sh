#!/usr/bin/env bash
# Mutation check: applies deliberate faults to the library, one at a time, on
# a scratch copy of the tree (never the working tree), rebuilds the unit tests
# meant to catch each (Serial, from tstArms, tstOperator, tstBadInput,
# tstMatrixMarket, tstLongRun at 2e4 steps, tstLockstepPolicy; all of them
# pass first, unmutated)
# and shows that they fail. Prints a table mutant -> the tests that killed it;
# exits non-zero if any mutant survives (or no longer applies: the code it
# patches has changed, and the mutant must be updated).
#
#   scripts/mutate.sh [BUILD_DIR]    default build-mutate (reused between runs)
#
# One build directory serves every mutant: only the objects that include the
# mutated header are rebuilt. Extra CMake arguments: HST_MUTATE_CMAKE_ARGS.
#
# Not covered here: the row-partitioned scatter (detail/ScatterApply.hpp) and
# the threaded paths run only where Kokkos' host space has more than one
# thread (concurrency 1 on Serial runs every step on the calling thread), and
# atomics only matter on a device; a fault there cannot fail a Serial suite.
# (The row ranges the threads split a step by are covered: tstArms tests the
# split, the columns' spans and the clip to a range themselves. A part of the
# exact-set compile dropping its last row fails 5 tstArms tests on OpenMP at 2
# threads, checked by hand; on Serial the compile runs as one part, which
# walks every entry.)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
build=${1:-build-mutate}
mkdir -p "$build"
build=$(cd "$build" && pwd)
tree=$build/tree
tests=(tstArms tstOperator tstBadInput tstMatrixMarket tstLongRun tstLockstepPolicy)
export HST_LONG_STEPS=20000 # tstLongRun: enough for the retirement bound
jobs=${HST_BUILD_JOBS:-2}

# name | file | sed expression | what the fault is | the tests run against it
# (the ones meant to catch it: each mutant rebuilds and runs only those)
mutants=(
  "tile-row-zero|src/hst/detail/TileIndex.hpp|s/index.row(out) = csc.row(std::get<2>(entries\[e\]));/index.row(out) = 0;/|every tile entry's row set to 0 in the tile index|tstOperator"
  "tiled-wrong-row|src/hst/detail/TiledApply.hpp|s/add_scaled<false>(y, row(p), val(p), x);/add_scaled<false>(y, row(piece.begin), val(p), x);/|scheduled kernel adds a piece's entries to its first row|tstArms"
  "scatter-wrong-row|src/hst/detail/ScatterApply.hpp|0,/add_scaled<false>(y, row(p), val(p), x);/s//add_scaled<false>(y, row(col_ptr(c)), val(p), x);/|scatter kernel adds a column's entries to its first row|tstArms"
  "piece-length-minus-one|src/hst/ScheduledArm.hpp|s/std::int32_t(segment_ptr\[in.segment + 1\] - begin);/std::int32_t(segment_ptr[in.segment + 1] - begin - 1);/|ScheduledArm pieces one entry short|tstArms"
  "block-region-short|src/hst/ScheduledArm.hpp|s/auto const needed = block_count_\[block\] + block_incoming_\[block\];/auto const needed = block_count_[block] + block_incoming_[block] - 4;/|ScheduledArm sizes a block's region 4 pieces short of what enters it|tstArms"
  "segment-list-keeps-empty|src/hst/detail/TileIndex.hpp|/^        if (!empty)$/d|the tile index lists a column's empty segments as well|tstOperator"
  "skipped-retire|src/hst/ScheduledArm.hpp|s/^      retire_unused();    \/\/ spares/      (void)0; \/\/ mutant: no retire_unused(); spares/|ScheduledArm never retires unused tiles|tstArms"
  "exact-set-skips-last-column|src/hst/ExactSetArm.hpp|s/for (std::size_t i = 0; i < k; ++i)/for (std::size_t i = 0; i + 1 < k; ++i)/|exact-set compile leaves out the last column|tstArms"
  "row-ranges-density-never-ends|src/hst/detail/RowRanges.hpp|s/    step\[b1 + 1\] -= per_bin;/    (void)0;/|row ranges weigh each column's entries over every later bin too|tstArms"
  "row-ranges-clip-keeps-row-hi|src/hst/detail/RowRanges.hpp|s/  end = span.last >= hi ? /  end = span.last > hi ? /|a column clipped to rows [lo, hi) keeps its entry in row hi|tstArms"
  "mm-skew-sign|src/hst/io/MatrixMarket.hpp|s/skew_symmetric ? -value : value;/skew_symmetric ? value : value;/|Matrix Market reader mirrors skew-symmetric entries without the sign|tstMatrixMarket"
  "mm-no-duplicate-check|src/hst/io/MatrixMarket.hpp|s/if (read\[\*i\].col == read\[\*(i + 1)\].col)/if (false)/|Matrix Market reader accepts duplicate coordinates|tstMatrixMarket"
  "lockstep-defers-when-moving|src/hst/distributed/detail/LockstepPolicy.hpp|s/^      if (deferrable(arm) \&\& moved_pairs_ == 0)\$/      if (deferrable(arm))/|the distributed session defers the scheduled arm on a set that moves|tstLockstepPolicy"
  "lockstep-defers-after-a-move|src/hst/distributed/detail/LockstepPolicy.hpp|s/arm == Arm::scheduled \&\& !set_moved_probe_ \&\&/arm == Arm::scheduled \&\&/|the distributed session's re-probe for a moved set defers the scheduled arm again when the set stands|tstLockstepPolicy"
  "lockstep-chooses-a-skipped-arm|src/hst/distributed/detail/LockstepPolicy.hpp|s/^ *d.skipped\[i\])$/          false)/|the distributed session's decision counts an arm its model skipped (cost 0)|tstLockstepPolicy"
  "lockstep-keeps-the-given-order|src/hst/distributed/detail/LockstepPolicy.hpp|s/if (model_ \&\& position_ > 0 \&\& !deferral_pending)/if (model_ \&\& position_ > 0 \&\& !deferral_pending \&\& false)/|the distributed session's model weighs a dear arm before the arm predicted cheapest has run|tstLockstepPolicy"
  "lockstep-predicted-at-switch-margin|src/hst/distributed/detail/LockstepPolicy.hpp|s/model_margin_ \* predicted_\[std::size_t(best)\] < active/predicted_[std::size_t(best)] < active/|the distributed session re-probes on any predicted gap, not model_margin's|tstLockstepPolicy"
  "lockstep-never-cuts|src/hst/distributed/detail/LockstepPolicy.hpp|s/^        cut = measured < measure_ \&\& /        cut = false \&\& /|the distributed session never cuts a clearly slower arm|tstLockstepPolicy"
  "lockstep-settles-without-a-fall|src/hst/distributed/detail/LockstepPolicy.hpp|s/^          combined_seconds < settled_fall_ratio \* block_last)$/          (void(block_last), true))/|the distributed session's catch-up block warms up to the cap whether or not its steps fall|tstLockstepPolicy"
  "resync-accumulates|src/hst/Resync.hpp|s/      y(r, b) = sum;/      y(r, b) += sum;/|resync adds A x to y instead of setting it|tstLongRun"
)

# The scratch tree: the sources as they are in the working tree (tracked and
# untracked but not ignored). Only files whose content differs are copied, so
# that the others keep their times and the build stays incremental.
while IFS= read -r -d '' f; do
  if [[ -f $f ]] && ! cmp -s "$f" "$tree/$f"; then
    mkdir -p "$tree/$(dirname "$f")"
    cp "$f" "$tree/$f"
  fi
done < <(git ls-files -z --cached --others --exclude-standard)

# A build directory of an earlier run made with another generator is remade.
if ! grep -qs '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$build/build/CMakeCache.txt"; then
  rm -rf "$build/build"
fi
# Ninja builds the named targets side by side (make takes them one at a
# time); -O0: the tests' compile costs more than their run (tstArms: 16 s + 5 s
# at -O0 against 25 s + 1 s at -O1).
cmake -S "$tree" -B "$build/build" -G Ninja -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O0 -g0" \
  -DHST_ENABLE_TESTS=ON -DHST_ENABLE_MPI=OFF ${HST_MUTATE_CMAKE_ARGS:-} >"$build/configure.log"

run_tests() { # runs the tests named in "$@"; prints those that fail
  local failed=() t
  for t in "$@"; do
    if ! timeout 300 "$build/build/unit_tests/$t" >"$build/$t.log" 2>&1; then
      failed+=("$t")
    fi
  done
  echo "${failed[*]:-}"
}

echo "mutate: baseline (no mutant)"
cmake --build "$build/build" -j"$jobs" --target "${tests[@]}" >"$build/build.log"
baseline=$(run_tests "${tests[@]}")
if [[ -n $baseline ]]; then
  echo "mutate: the unmutated suite fails ($baseline): see $build/*.log" >&2
  exit 1
fi

survivors=0
rows=()
for entry in "${mutants[@]}"; do
  IFS='|' read -r name file expr what targets <<<"$entry"
  read -r -a targets <<<"$targets"
  cp -p "$tree/$file" "$tree/$file.orig"
  sed -e "$expr" "$tree/$file.orig" >"$tree/$file"
  if cmp -s "$tree/$file" "$tree/$file.orig"; then
    rows+=("$(printf '%-30s %-34s %s' "$name" "DID NOT APPLY" "$what")")
    survivors=$((survivors + 1))
    mv "$tree/$file.orig" "$tree/$file"
    continue
  fi
  start=$(date +%s)
  if cmake --build "$build/build" -j"$jobs" --target "${targets[@]}" >"$build/build-$name.log" 2>&1; then
    killed=$(run_tests "${targets[@]}")
  else
    killed="DOES NOT COMPILE" # a broken mutant proves nothing
    survivors=$((survivors + 1))
  fi
  # Back to the working tree's file, with a new time so that make rebuilds.
  mv "$tree/$file.orig" "$tree/$file"
  touch "$tree/$file"
  if [[ -z $killed ]]; then # every test passed
    killed="SURVIVED"
    survivors=$((survivors + 1))
  fi
  rows+=("$(printf '%-30s %-34s %s (%ss)' "$name" "$killed" "$what" $(($(date +%s) - start)))")
done

echo
printf '%-30s %-34s %s\n' "mutant" "killed by" "fault"
printf '%s\n' "${rows[@]}"
echo
if ((survivors > 0)); then
  echo "mutate: $survivors of ${#mutants[@]} mutants survived"
  exit 1
fi
echo "mutate: all ${#mutants[@]} mutants killed"
