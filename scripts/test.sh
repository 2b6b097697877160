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
flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS=-Wall -Wextra -Werror")

# Sanitizers and pedantic warnings on the unit tests (Debug: assertions on).
sanitize="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug \
  "-DCMAKE_CXX_FLAGS=-Wall -Wextra -Wpedantic -Werror $sanitize" \
  -DHST_ENABLE_TESTS=ON -DHST_ENABLE_MPI="$mpi"
cmake --build build-sanitize -j2
ctest --test-dir build-sanitize --output-on-failure

# The PyTorch extension is built and its pytest suite run (ctest: python_hst)
# here only: ASan would have to be preloaded into the Python interpreter.
# Debian's python3-torch is seen by /usr/bin/python3 only.
cmake -S . -B "$build" "${flags[@]}" \
  -DHST_ENABLE_TESTS=ON -DHST_ENABLE_EXAMPLES=ON -DHST_ENABLE_BENCHMARKS=ON \
  -DHST_ENABLE_MPI="$mpi" -DHST_ENABLE_TORCH=ON -DPython3_EXECUTABLE=/usr/bin/python3
cmake --build "$build" -j2

# The examples, built standalone against the installed package.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/install"
cmake -S examples -B "$tmp/examples" "${flags[@]}" -DCMAKE_PREFIX_PATH="$tmp/install"
cmake --build "$tmp/examples" -j2
ctest --test-dir "$tmp/examples" --output-on-failure
# The installed Python package, imported from outside the trees.
pyver=$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
(cd "$tmp" && PYTHONPATH="$tmp/install/lib/python$pyver/site-packages" /usr/bin/python3 -c \
  'import hst, torch; op = hst.HSTOperator(hst.suite_operator("grid2d_5pt_100x100")); y = torch.zeros(op.num_rows, 8, dtype=torch.float64); op.scatter(8).apply_cols([3], torch.ones(1, 8, dtype=torch.float64), y); assert y.abs().sum() > 0; print("installed hst:", hst.__file__)')

# The whole suite last, so its summary closes the log.
ctest --test-dir "$build" --output-on-failure
