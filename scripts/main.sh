#!/usr/bin/env bash
# Main job: Release build, then the runs whose outputs land in hst-results/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/install_deps.sh

build=build-main
results=hst-results
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DHST_ENABLE_EXAMPLES=ON -DHST_ENABLE_BENCHMARKS=ON -DHST_ENABLE_MPI=ON \
  -DHST_ENABLE_TORCH=ON -DPython3_EXECUTABLE=/usr/bin/python3 \
  -DHST_ENABLE_TPETRA=ON
cmake --build "$build" -j2

mkdir -p "$results"
{
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -srm), $(nproc) cores"
} > "$results/run-info.txt"

"$build/examples/delta_apply_demo" | tee "$results/delta_apply_demo.txt"

# The ladder on the quick suite (Google Benchmark JSON + a table of medians).
"$build/perf_tests/bench_ladder" --benchmark_repetitions=3 \
  --benchmark_out="$results/ladder.json" --benchmark_out_format=json \
  | tee "$results/ladder.txt"

# The seed note's ladder from Python: torch.sparse.mm, a torch slice and the
# arms through the extension, with the extension's call cost over C++.
PYTHONPATH="$build/python" /usr/bin/python3 perf_tests/ladder.py | tee "$results/ladder_torch.txt"

# The adaptive session's own costs: settled overhead, following a drift/jump/drift run.
"$build/perf_tests/bench_adaptive" --benchmark_min_time=0.2 \
  --benchmark_out="$results/adaptive.json" --benchmark_out_format=json \
  | tee "$results/adaptive.txt"

# The quick sweep: every arm x operator x motion x churn, plus cost growth.
"$build/perf_tests/hst-sweep" --quick --out "$results" | tee "$results/sweep.txt"

# The distributed arms on 1e6-row operators, on 1 rank and then on 2 (each
# 2-rank row also printed as a speed-up over the 1-rank run).
mpirun=(mpiexec --oversubscribe)
[[ $(id -u) -eq 0 ]] && mpirun+=(--allow-run-as-root)
"${mpirun[@]}" -n 1 "$build/perf_tests/bench_distributed" \
  --out="$results/distributed-1.tsv" | tee "$results/distributed-1.txt"
"${mpirun[@]}" -n 2 "$build/perf_tests/bench_distributed" \
  --out="$results/distributed-2.tsv" --baseline="$results/distributed-1.tsv" \
  | tee "$results/distributed-2.txt"

# The Tpetra adapter against Tpetra::CrsMatrix::apply (1e6-row grid), on 1
# rank and on 2.
if [[ -x "$build/perf_tests/bench_tpetra" ]]; then
  for ranks in 1 2; do
    OMPI_MCA_mpi_yield_when_idle=1 "${mpirun[@]}" -n "$ranks" \
      "$build/perf_tests/bench_tpetra" | tee "$results/tpetra-$ranks.txt"
  done
fi

# Debian's interpreter: its python3-matplotlib is not visible to a pyenv/venv python3.
/usr/bin/python3 scripts/plot_results.py "$results"
echo "results in $results/"
