import os

from spack.package import *

try:  # Spack >= 1.0 moved the build systems out of spack.package
    from spack_repo.builtin.build_systems.cmake import CMakePackage
    from spack_repo.builtin.build_systems.cuda import CudaPackage
    from spack_repo.builtin.build_systems.rocm import ROCmPackage
except ImportError:
    pass


class Hst(CMakePackage, CudaPackage, ROCmPackage):
    """HST: header-only C++17 library on Kokkos and Kokkos Kernels for delta
    applies y += A[:, S] * dx of a fixed sparse operator A."""

    # HST has no public repository, homepage or release tarball yet, so there
    # is no homepage and no url. The git attribute below is a placeholder that
    # fetches nothing: point it at your clone in packages.yaml,
    #   packages:
    #     hst:
    #       package_attributes:
    #         git: /path/to/hst        # a local clone or your own remote
    # or build from a checkout with `spack develop --path /path/to/hst hst@main`.
    git = "file:///path/to/your/hst/clone"

    # No license(): the repository has no LICENSE file, and no maintainers():
    # it has no public handles to list.

    test_requires_compiler = True

    version("main", branch="main")

    # Host backends, forwarded to Kokkos and Kokkos Kernels; the device
    # backends come from CudaPackage (+cuda, cuda_arch) and ROCmPackage
    # (+rocm, amdgpu_target).
    kokkos_backends = {
        "serial": (True, "enable the Kokkos Serial backend"),
        "openmp": (False, "enable the Kokkos OpenMP backend"),
        "threads": (False, "enable the Kokkos C++ threads backend"),
    }
    for backend, (deflt, descr) in kokkos_backends.items():
        variant(backend, default=deflt, description=descr)
    variant(
        "mpi",
        default=False,
        description="build the distributed layer (hst::DistributedOperator, HST_ENABLE_MPI)",
    )
    variant(
        "tpetra",
        default=False,
        description="build the Tpetra adapter hst::tpetra (HST_ENABLE_TPETRA; needs +mpi)",
    )
    variant(
        "torch",
        default=False,
        description="build the PyTorch extension and the Python package hst (HST_ENABLE_TORCH)",
    )
    variant(
        "benchmarks",
        default=False,
        description="build the benchmarks and install the hst-sweep tool (HST_ENABLE_BENCHMARKS)",
    )

    depends_on("cxx", type="build")
    depends_on("cmake@3.22:", type="build")

    # 3.4 is the oldest Kokkos HST builds with (Debian's); Kokkos 5 (C++20,
    # deprecated APIs removed) has not been tried. Spack's kokkos-kernels
    # recipe pins the Kokkos of its own version, so the two always match.
    depends_on("kokkos@3.4:4")
    depends_on("kokkos-kernels@3.4:4")
    for backend in kokkos_backends:
        depends_on(f"kokkos+{backend}", when=f"+{backend}")
        depends_on(f"kokkos-kernels+{backend}", when=f"+{backend}")

    for arch in CudaPackage.cuda_arch_values:
        depends_on(f"kokkos+cuda cuda_arch={arch}", when=f"+cuda cuda_arch={arch}")
        depends_on(f"kokkos-kernels+cuda cuda_arch={arch}", when=f"+cuda cuda_arch={arch}")
    # kokkos-kernels has no ROCm variant; it follows the Kokkos it is built on.
    for arch in ROCmPackage.amdgpu_targets:
        depends_on(f"kokkos+rocm amdgpu_target={arch}", when=f"+rocm amdgpu_target={arch}")
    conflicts("+cuda", when="cuda_arch=none", msg="+cuda needs a cuda_arch (e.g. cuda_arch=90)")
    conflicts(
        "+rocm", when="amdgpu_target=none", msg="+rocm needs an amdgpu_target (e.g. gfx90a)"
    )
    # Spack's kokkos recipe refuses, at install time, a CUDA build without its
    # nvcc_wrapper unless the compiler is Clang or CMake's CUDA language is on;
    # left free, the solver swaps the whole tree to Clang instead. Asked for
    # here, so that `spack install hst+cuda` builds with the usual compilers.
    requires(
        "^kokkos+wrapper",
        "^kokkos+cmake_lang",
        policy="one_of",
        when="+cuda",
        msg="+cuda needs ^kokkos+wrapper (nvcc_wrapper) or ^kokkos+cmake_lang",
    )
    conflicts("+cuda", when="+rocm", msg="Kokkos builds for CUDA or for ROCm, not both")

    # The core library uses no device lambdas; the Tpetra adapter and the
    # benchmarks do (KOKKOS_LAMBDA), and so do the examples, which are built
    # with the tests (checked in cmake_args) and by `spack test run`.
    # Kokkos 5 always enables them.
    lambdas = "the Tpetra adapter and the benchmarks use device lambdas: ^kokkos+cuda_lambda"
    requires("^kokkos+cuda_lambda", when="+cuda+tpetra ^kokkos@:4", msg=lambdas)
    requires("^kokkos+cuda_lambda", when="+cuda+benchmarks ^kokkos@:4", msg=lambdas)

    depends_on("mpi", when="+mpi")

    # Tpetra's maps are distributed over MPI. Trilinos >= 14.4 builds on
    # Spack's kokkos and kokkos-kernels, so Tpetra and HST share one Kokkos;
    # older releases carry their own copy.
    requires("+mpi", when="+tpetra", msg="+tpetra needs +mpi (Tpetra's maps are distributed)")
    depends_on("trilinos@14.4: +tpetra+mpi", when="+tpetra")

    # The extension links libtorch (py-torch's share/cmake/Torch) and is
    # loaded by the Python that imports that torch.
    extends("python", when="+torch")
    depends_on("py-torch", type=("build", "link", "run"), when="+torch")

    depends_on("googletest", type="test")
    depends_on("benchmark", when="+benchmarks")

    examples_src_dir = "examples"

    def _cxx_compiler(self):
        if self.spec.satisfies("+cuda"):
            return self["kokkos"].kokkos_cxx
        if self.spec.satisfies("+rocm"):
            return self.spec["hip"].hipcc
        return None

    def _lacks_cuda_lambda(self):
        return self.spec.satisfies("+cuda ^kokkos@:4 ~cuda_lambda")

    def cmake_args(self):
        spec = self.spec
        if self.run_tests and self._lacks_cuda_lambda():
            raise InstallError(
                "hst: the tests build the examples, which use device lambdas: "
                "install with ^kokkos+cuda_lambda, or without --test"
            )
        args = [
            self.define("Kokkos_ROOT", self["kokkos"].prefix),
            self.define("KokkosKernels_ROOT", self["kokkos-kernels"].prefix),
            self.define_from_variant("HST_ENABLE_MPI", "mpi"),
            self.define_from_variant("HST_ENABLE_TPETRA", "tpetra"),
            self.define_from_variant("HST_ENABLE_TORCH", "torch"),
            self.define_from_variant("HST_ENABLE_BENCHMARKS", "benchmarks"),
            self.define("HST_ENABLE_TESTS", self.run_tests),
            self.define("HST_ENABLE_EXAMPLES", self.run_tests),
        ]
        if spec.satisfies("+tpetra"):
            args.append(self.define("Tpetra_ROOT", self["trilinos"].prefix))
        if spec.satisfies("+torch"):
            args.extend(
                [
                    self.define("Python3_EXECUTABLE", spec["python"].command.path),
                    self.define("HST_PYTHON_INSTALL_DIR", self["python"].platlib),
                ]
            )
        compiler = self._cxx_compiler()
        if compiler:
            args.append(self.define("CMAKE_CXX_COMPILER", compiler))
        return args

    @run_after("install")
    def setup_build_tests(self):
        """Cache the examples so that `spack test run` can build them."""
        # The examples build their operators with the fixtures in test_common/.
        cache_extra_test_sources(self, [self.examples_src_dir, "test_common"])

    def test_examples(self):
        """build the cached examples against the installed HST and run them"""
        spec = self.spec
        if self._lacks_cuda_lambda():
            raise SkipTest("the examples use device lambdas: needs ^kokkos+cuda_lambda")
        source_dir = join_path(self.test_suite.current_test_cache_dir, self.examples_src_dir)
        build_dir = join_path(os.getcwd(), "build_examples")
        compiler = self._cxx_compiler() or os.environ["CXX"]
        prefixes = [self.prefix, spec["kokkos"].prefix, spec["kokkos-kernels"].prefix]
        if spec.satisfies("+mpi"):
            prefixes.append(spec["mpi"].prefix)
        if spec.satisfies("+tpetra"):
            prefixes.append(spec["trilinos"].prefix)

        cmake = which(spec["cmake"].prefix.bin.cmake, required=True)
        ctest = which(spec["cmake"].prefix.bin.ctest, required=True)
        cmake(
            "-S",
            source_dir,
            "-B",
            build_dir,
            self.define("CMAKE_CXX_COMPILER", compiler),
            self.define("CMAKE_PREFIX_PATH", ";".join(str(p) for p in prefixes)),
        )
        cmake("--build", build_dir)
        ctest("--test-dir", build_dir, "--output-on-failure")
