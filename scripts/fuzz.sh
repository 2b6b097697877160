#!/usr/bin/env bash
# Usage: scripts/fuzz.sh [SECONDS] [BUILD_DIR]
# Builds the libFuzzer targets (fuzz/, clang++-14 with ASan and UBSan, against
# Debian's Serial Kokkos: no Kokkos rebuild) and runs the two side by side,
# each for half of SECONDS (default 60 in all, 30 s of wall time on two cores),
# starting from the committed seeds in fuzz/corpus/.
# New inputs go to a scratch corpus; a finding leaves its input as
# BUILD_DIR/<target>-crash-* and fails the script. To fuzz longer, e.g. an
# hour each with the inputs kept:
#   scripts/fuzz.sh 0 build-fuzz   # build only
#   build-fuzz/fuzz/fuzz_matrix_market -max_total_time=3600 \
#     -dict=fuzz/matrix_market.dict my_corpus/ fuzz/corpus/matrix_market
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds=${1:-60}
build=${2:-build-fuzz}
clang=$(command -v clang++-14 || true)
if [[ -z $clang ]]; then
  echo "fuzz.sh: clang++-14 not found (scripts/install_deps.sh installs it)" >&2
  exit 1
fi
cmake -S . -B "$build" -DCMAKE_CXX_COMPILER="$clang" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS=-Wall -Wextra -Werror" -DHST_ENABLE_FUZZING=ON >/dev/null
cmake --build "$build" -j2 # the two fuzz targets, nothing else
[[ $seconds -gt 0 ]] || exit 0

each=$((seconds / 2))
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
run() {
  local target=$1 seeds=$2
  shift 2
  mkdir -p "$scratch/$target"
  echo "fuzz.sh: $target for ${each}s"
  # -rss_limit_mb: a declared size that slipped past the limits would show as
  # an out-of-memory finding; -timeout: a slow input is a finding too.
  if ! "$build/fuzz/$target" -max_total_time="$each" -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$build/$target-" "$@" \
    "$scratch/$target" "$seeds" >"$scratch/$target.log" 2>&1; then
    tail -n 80 "$scratch/$target.log"
    echo "fuzz.sh: $target found a failing input (above; saved as $build/$target-*)" >&2
    return 1
  fi
  grep -E '^(INFO: seed corpus|Done [0-9]+ runs|stat::(number_of_executed_units|new_units_added|peak_rss_mb))' \
    "$scratch/$target.log"
}
run fuzz_matrix_market fuzz/corpus/matrix_market -dict=fuzz/matrix_market.dict \
  >"$scratch/matrix_market.out" 2>&1 &
matrix_market=$!
run fuzz_apply_input fuzz/corpus/apply_input >"$scratch/apply_input.out" 2>&1 &
apply_input=$!
status=0
wait "$matrix_market" || status=1
cat "$scratch/matrix_market.out"
wait "$apply_input" || status=1
cat "$scratch/apply_input.out"
exit "$status"
