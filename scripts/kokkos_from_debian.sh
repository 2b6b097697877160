#!/usr/bin/env bash
# Builds Kokkos and Kokkos Kernels 3.4.1 for another backend from Debian's own
# trilinos source package (the same sources as libtrilinos-kokkos-dev), into
# PREFIX, and reuses an existing build there.
#
#   scripts/kokkos_from_debian.sh openmp PREFIX   OpenMP + Serial, ETI off
#   scripts/kokkos_from_debian.sh hip    PREFIX   HIP (gfx908 + gfx90a) + Serial, ETI off
#
# The source package comes through `apt-get source` with a private deb-src
# list and private apt state under PREFIX/../apt: the system's apt sources are
# not changed. Debian's patches to trilinos touch only its TriBITS test
# declarations, sonames and multiarch paths, none of which a standalone Kokkos
# build reads, so the two packages are taken from the orig tarball as is.
# Kokkos Kernels is built without explicit instantiations: HST and its tests
# instantiate what they use, and the ETI library would cost most of the
# build time on 2 cores for kernels HST does not call.
set -euo pipefail

backend=${1:?usage: kokkos_from_debian.sh openmp|hip PREFIX}
prefix=${2:?usage: kokkos_from_debian.sh openmp|hip PREFIX}
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
jobs=${HST_BUILD_JOBS:-2}

if [[ -f "$prefix/.complete" ]]; then
  echo "kokkos_from_debian: reusing $prefix ($(cat "$prefix/.complete"))"
  exit 0
fi

work="$prefix.work"
mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/src"
echo "deb-src http://deb.debian.org/debian bookworm main" >"$work/apt/sources.list"
apt_private=(
  -o "Dir::Etc::SourceList=$work/apt/sources.list"
  -o "Dir::Etc::SourceParts=$work/apt/none"
  -o "Dir::State::Lists=$work/apt/lists"
  -o "Dir::Cache=$work/apt/cache"
  -o "APT::Sandbox::User=root"
)

src="$work/src/Trilinos-trilinos-release-13-2-0/packages"
if [[ ! -f "$src/kokkos-kernels/CMakeLists.txt" ]]; then
  (
    cd "$work/src"
    apt-get "${apt_private[@]}" update -qq
    apt-get "${apt_private[@]}" source --download-only -qq trilinos=13.2.0-4
    tar xzf trilinos_13.2.0.orig.tar.gz --wildcards \
      '*/packages/kokkos/*' '*/packages/kokkos-kernels/*'
  )
fi

kokkos_flags=(-DKokkos_ENABLE_SERIAL=ON)
compiler=(-DCMAKE_CXX_COMPILER=g++)
case "$backend" in
  openmp)
    kokkos_flags+=(-DKokkos_ENABLE_OPENMP=ON)
    ;;
  hip)
    # hipcc would probe for a GPU to pick a target; there is none here.
    export HCC_AMDGPU_TARGET=gfx908
    compiler=(-DCMAKE_CXX_COMPILER=hipcc "-DCMAKE_CXX_FLAGS=--offload-arch=gfx90a")
    kokkos_flags+=(-DKokkos_ENABLE_HIP=ON -DKokkos_ARCH_VEGA908=ON)
    ;;
  *)
    echo "kokkos_from_debian: unknown backend '$backend' (openmp or hip)" >&2
    exit 2
    ;;
esac

common=(-G "Unix Makefiles" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_STANDARD=17
  -DCMAKE_CXX_EXTENSIONS=OFF -DCMAKE_INSTALL_PREFIX="$prefix" -DBUILD_SHARED_LIBS=ON
  "${compiler[@]}")

cmake -S "$src/kokkos" -B "$work/build-kokkos" "${common[@]}" "${kokkos_flags[@]}" >"$work/kokkos.log"
cmake --build "$work/build-kokkos" -j"$jobs" >>"$work/kokkos.log"
cmake --install "$work/build-kokkos" >>"$work/kokkos.log"

cmake -S "$src/kokkos-kernels" -B "$work/build-kernels" "${common[@]}" \
  -DKokkos_ROOT="$prefix" -DKokkosKernels_ADD_DEFAULT_ETI=OFF \
  -DKokkosKernels_ENABLE_TPL_BLAS=OFF -DKokkosKernels_ENABLE_TPL_LAPACK=OFF \
  >"$work/kernels.log"
cmake --build "$work/build-kernels" -j"$jobs" >>"$work/kernels.log"
cmake --install "$work/build-kernels" >>"$work/kernels.log"

echo "Kokkos 3.4.1 ($backend) from Debian trilinos 13.2.0-4" >"$prefix/.complete"
rm -rf "$work/build-kokkos" "$work/build-kernels"
echo "kokkos_from_debian: installed $backend Kokkos into $prefix"
