#!/usr/bin/env bash
# Installs the Debian packages HST needs; does nothing if all are present.
set -euo pipefail

packages=(
  libtrilinos-kokkos-dev libtrilinos-kokkos-kernels-dev
  libopenmpi-dev openmpi-bin libgtest-dev libbenchmark-dev
  cmake g++ make ninja-build python3-matplotlib
  # the HIP compile job of scripts/test.sh (Kokkos built by kokkos_from_debian.sh)
  hipcc libamdhip64-dev rocm-device-libs
  # PyTorch extension (HST_ENABLE_TORCH): Debian's libtorch and its Python,
  # used through /usr/bin/python3.
  libtorch-dev python3-torch python3-pytest python3-numpy python3-scipy
  # The Tpetra adapter (HST_ENABLE_TPETRA). Its -dev package pulls in neither
  # Teuchos' headers nor Epetra's CMake config, which Tpetra's need.
  libtrilinos-tpetra-dev libtrilinos-teuchos-dev libtrilinos-epetra-dev
  # The libFuzzer targets (scripts/fuzz.sh): clang 14 and its runtime
  # libraries (libclang_rt.fuzzer, asan, ubsan).
  clang-14 libclang-rt-14-dev
)

missing=()
for pkg in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

sudo=()
[[ $(id -u) -ne 0 ]] && sudo=(sudo)
echo "install_deps: installing ${missing[*]}"
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
