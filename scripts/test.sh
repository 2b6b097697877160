#!/usr/bin/env bash
# CI job: a Debug build with -Wpedantic and ASan/UBSan running the unit tests;
# then a RelWithDebInfo build with tests, examples and benchmarks, the
# examples built standalone against the installed HST, and the whole ctest
# suite. Warnings are errors in both builds.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/install_deps.sh

build=build-test
mpi=OFF
[[ -d src/hst/distributed ]] && mpi=ON
# The Tpetra adapter when Tpetra is installed (install_deps.sh installs it);
# the RelWithDebInfo build only: its test, example and benchmark add ~2 min.
tpetra=OFF
[[ $mpi == ON && -d src/hst/tpetra && -f /usr/include/trilinos/Tpetra_CrsMatrix.hpp ]] &&
  tpetra=ON
flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS=-Wall -Wextra -Werror")

# Sanitizers and pedantic warnings on the unit tests (Debug: assertions on).
sanitize="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug \
  "-DCMAKE_CXX_FLAGS=-Wall -Wextra -Wpedantic -Werror $sanitize" \
  -DHST_ENABLE_TESTS=ON -DHST_ENABLE_MPI="$mpi"
cmake --build build-sanitize -j2
ctest --test-dir build-sanitize --output-on-failure

cmake -S . -B "$build" "${flags[@]}" \
  -DHST_ENABLE_TESTS=ON -DHST_ENABLE_EXAMPLES=ON -DHST_ENABLE_BENCHMARKS=ON \
  -DHST_ENABLE_MPI="$mpi" -DHST_ENABLE_TPETRA="$tpetra"
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
