#!/usr/bin/env bash
# CI job, on Debian's Kokkos (Serial) and on Kokkos 3.4.1 built for other
# backends from Debian's own trilinos source (scripts/kokkos_from_debian.sh,
# reused from build-deps/ when present):
# 1. Serial, Debug with -Wpedantic and ASan/UBSan: the unit tests.
# 2. Serial, RelWithDebInfo: tests, examples and benchmarks; the examples
#    built standalone against the installed HST; the whole ctest suite.
# 3. OpenMP: the whole suite at OMP_NUM_THREADS=2, then at 1.
# 4. HIP (gfx908, gfx90a), compile and link only (no GPU here):
#    tstEntryPoints, every public entry point on every memory space, tstArms
#    (the arms' GoogleTest suite), and every public header on its own. nvcc:
#    HST's sources through its front end.
# 5. libFuzzer (clang, ASan/UBSan): 60 s on the Matrix Market reader and the
#    apply input checks (scripts/fuzz.sh); then the mutation script.
# Warnings are errors in every build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/install_deps.sh

mpi=ON
# The Tpetra adapter (install_deps.sh installs Tpetra) in the RelWithDebInfo
# build only: its test, example and benchmark add ~2 min.
tpetra=ON
flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS=-Wall -Wextra -Werror")
section() { printf '\n=== %s (%s)\n' "$1" "$(date -u +%H:%M:%S)"; }

section "Serial: sanitizers"
sanitize="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug \
  "-DCMAKE_CXX_FLAGS=-Wall -Wextra -Wpedantic -Werror $sanitize" \
  -DHST_ENABLE_TESTS=ON -DHST_ENABLE_MPI="$mpi"
cmake --build build-sanitize -j2
# tstLongRun at 2e4 steps here (1e5 took 1 min 49 s under ASan/UBSan in
# Debug); the RelWithDebInfo and OpenMP jobs run the full 1e5. tstDistributed
# at 1 and 3 ranks here (uneven blocks, neighbours on both sides; 2 and 4
# ranks took 70 s and 151 s of the job's 522 s of tests); the other two jobs
# run 1 to 4 ranks. Two tests at a time (each runs one thread; an MPI test
# counts its ranks against the two: ctest's PROCESSORS).
HST_LONG_STEPS=20000 ctest --test-dir build-sanitize --output-on-failure -j2 \
  -E '^tstDistributed_np[24]$'

section "Serial: tests, examples, benchmarks"
build=build-test
# The PyTorch extension is built and its pytest suite run (ctest: python_hst)
# here only: ASan would have to be preloaded into the Python interpreter.
# Debian's python3-torch is seen by /usr/bin/python3 only.
cmake -S . -B "$build" "${flags[@]}" \
  -DHST_ENABLE_TESTS=ON -DHST_ENABLE_EXAMPLES=ON -DHST_ENABLE_BENCHMARKS=ON \
  -DHST_ENABLE_MPI="$mpi" -DHST_ENABLE_TORCH=ON -DPython3_EXECUTABLE=/usr/bin/python3 \
  -DHST_ENABLE_TPETRA="$tpetra"
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
ctest --test-dir "$build" --output-on-failure -j2 2>&1 | tee "$tmp/serial-summary.txt"

section "OpenMP: the whole suite at 2 threads and at 1"
scripts/kokkos_from_debian.sh openmp build-deps/kokkos-openmp
# The typed tests on OpenMP only (HST_TEST_ALL_SPACES=OFF; so for HIP below):
# their instances on Serial are what the Serial jobs run.
cmake -S . -B build-openmp "${flags[@]}" -DCMAKE_PREFIX_PATH="$PWD/build-deps/kokkos-openmp" \
  -DHST_ENABLE_TESTS=ON -DHST_ENABLE_EXAMPLES=ON -DHST_ENABLE_MPI="$mpi" -DHST_TEST_ALL_SPACES=OFF
cmake --build build-openmp -j2
# Passive waits: MPI tests put up to 4 ranks of 2 threads on 2 cores, where
# spinning OpenMP threads would take the cores from the ranks they wait for.
# At one thread, two tests at a time.
for threads in 2 1; do
  echo "OMP_NUM_THREADS=$threads"
  OMP_NUM_THREADS=$threads OMP_PROC_BIND=false OMP_WAIT_POLICY=passive \
    ctest --test-dir build-openmp --output-on-failure -j$((2 / threads)) 2>&1 |
    tee "$tmp/openmp-$threads.txt"
done

# Compile-only device jobs: Kokkos for the backend, then HST's entry points.
# Ninja builds the three targets side by side (make takes them one at a time,
# each on its own: 452 s for HIP, 293 s of it tstArms on one core; 304 s with
# Ninja, before the typed tests ran on HIP only).
device_compile() {
  local backend=$1 compiler=$2 extra=$3
  scripts/kokkos_from_debian.sh "$backend" "build-deps/kokkos-$backend"
  if ! grep -qs '^CMAKE_GENERATOR:INTERNAL=Ninja$' "build-$backend/CMakeCache.txt"; then
    rm -rf "build-$backend" # made by an earlier version of this script, with make
  fi
  cmake -S . -B "build-$backend" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_COMPILER="$compiler" "-DCMAKE_CXX_FLAGS=-Wall -Wextra -Werror $extra" \
    -DCMAKE_PREFIX_PATH="$PWD/build-deps/kokkos-$backend" -DHST_ENABLE_TESTS=ON \
    -DHST_TEST_ALL_SPACES=OFF
  cmake --build "build-$backend" -j2 --target tstEntryPoints tstArms hst_headers_self_contained
  echo "$backend: tstEntryPoints, tstArms and every public header compiled and linked"
}
section "HIP: compile and link"
# hipcc asks the (absent) GPU for its target unless told.
HCC_AMDGPU_TARGET=gfx908 device_compile hip hipcc --offload-arch=gfx90a
# Debian's Kokkos 3.4.1 does not build for CUDA with nvcc 13 (README,
# "Backends"). What nvcc can check is that HST's code passes its front end: the
# entry points and the allocation-counting test, compiled as CUDA sources
# against Debian's Serial Kokkos (objects only).
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if [[ -x $nvcc ]]; then
  section "nvcc: front end"
  includes=(-I src -I build-test/include -I unit_tests -I test_common -isystem /usr/include/trilinos)
  for dir in $(mpicxx --showme:incdirs); do includes+=(-isystem "$dir"); done
  for source in unit_tests/tstEntryPoints.cpp unit_tests/tstAllocations.cpp; do
    "$nvcc" -x cu -std=c++17 -arch=sm_80 -Werror all-warnings "${includes[@]}" \
      -c "$source" -o "$tmp/$(basename "$source").o"
    echo "nvcc: $source compiled"
  done
fi

section "Fuzzing: the Matrix Market reader and the apply input checks, 30 s each"
# clang++-14 with libFuzzer, ASan and UBSan against Debian's Serial Kokkos
# (two targets, no Kokkos rebuild); 30 s each from fuzz/corpus/, side by side.
scripts/fuzz.sh 60 build-fuzz

section "Mutation: each deliberate fault fails the Serial tests"
scripts/mutate.sh build-mutate

# The summaries last, so they close the log.
section "Summaries"
for f in serial-summary openmp-2 openmp-1; do
  echo "$f: $(grep -E 'tests passed|tests failed' "$tmp/$f.txt")"
done
