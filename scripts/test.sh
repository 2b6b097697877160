#!/usr/bin/env bash
# CI job: build with tests, examples and benchmarks, run ctest, then build the
# examples standalone against an installed HST and run them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/install_deps.sh

build=build-test
mpi=OFF
[[ -d src/hst/distributed ]] && mpi=ON
flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS=-Wall -Wextra")

cmake -S . -B "$build" "${flags[@]}" \
  -DHST_ENABLE_TESTS=ON -DHST_ENABLE_EXAMPLES=ON -DHST_ENABLE_BENCHMARKS=ON \
  -DHST_ENABLE_MPI="$mpi"
cmake --build "$build" -j2

# The examples, built standalone against the installed package.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/install"
cmake -S examples -B "$tmp/examples" "${flags[@]}" -DCMAKE_PREFIX_PATH="$tmp/install"
cmake --build "$tmp/examples" -j2
ctest --test-dir "$tmp/examples" --output-on-failure

# The whole suite last, so its summary closes the log.
ctest --test-dir "$build" --output-on-failure
