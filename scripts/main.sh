#!/usr/bin/env bash
# Main job: Release build, then the runs whose outputs land in hst-results/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/install_deps.sh

build=build-main
results=hst-results
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DHST_ENABLE_EXAMPLES=ON -DHST_ENABLE_BENCHMARKS=ON
cmake --build "$build" -j2

mkdir -p "$results"
{
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -srm), $(nproc) cores"
} > "$results/run-info.txt"

"$build/examples/delta_apply_demo" | tee "$results/delta_apply_demo.txt"

# Ladder / sweep runs go here, writing into "$results".
