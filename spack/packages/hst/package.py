import os

from spack.package import *

try:  # Spack >= 1.0 moved the build systems out of spack.package
    from spack_repo.builtin.build_systems.cmake import CMakePackage
    from spack_repo.builtin.build_systems.cuda import CudaPackage
    from spack_repo.builtin.build_systems.rocm import ROCmPackage
except ImportError:
    pass


class Hst(CMakePackage, CudaPackage, ROCmPackage):
    """HST: header-only sparse operator library on Kokkos and Kokkos Kernels."""

    homepage = "https://example.org/hst"
    # Placeholder: set to the real repository before use.
    git = "https://example.org/hst.git"

    test_requires_compiler = True

    version("main", branch="main")

    kokkos_backends = {
        "serial": (True, "enable the Kokkos Serial backend"),
        "openmp": (False, "enable the Kokkos OpenMP backend"),
    }
    for backend, (deflt, descr) in kokkos_backends.items():
        variant(backend, default=deflt, description=descr)
    variant("mpi", default=True, description="build the distributed layer")
    variant("benchmarks", default=False, description="build the Google Benchmark drivers")

    depends_on("cxx", type="build")
    depends_on("cmake@3.22:", type="build")

    depends_on("kokkos@3.4:")
    depends_on("kokkos-kernels@3.4:")
    for backend in kokkos_backends:
        depends_on(f"kokkos+{backend}", when=f"+{backend}")
        depends_on(f"kokkos-kernels+{backend}", when=f"+{backend}")

    for arch in CudaPackage.cuda_arch_values:
        depends_on(f"kokkos+cuda cuda_arch={arch}", when=f"+cuda cuda_arch={arch}")
        depends_on(f"kokkos-kernels+cuda cuda_arch={arch}", when=f"+cuda cuda_arch={arch}")
    depends_on("kokkos+cuda_lambda", when="+cuda ^kokkos@:4")
    # kokkos-kernels has no ROCm variant; it follows the Kokkos it is built on.
    for arch in ROCmPackage.amdgpu_targets:
        depends_on(f"kokkos+rocm amdgpu_target={arch}", when=f"+rocm amdgpu_target={arch}")
    conflicts("+cuda", when="cuda_arch=none")
    conflicts("+rocm", when="amdgpu_target=none")

    depends_on("mpi", when="+mpi")
    depends_on("googletest", type="test")
    depends_on("benchmark", when="+benchmarks")

    examples_src_dir = "examples"

    def _cxx_compiler(self):
        if self.spec.satisfies("+cuda"):
            return self.spec["kokkos"].kokkos_cxx
        if self.spec.satisfies("+rocm"):
            return self.spec["hip"].hipcc
        return None

    def cmake_args(self):
        args = [
            self.define_from_variant("HST_ENABLE_MPI", "mpi"),
            self.define_from_variant("HST_ENABLE_BENCHMARKS", "benchmarks"),
            self.define("HST_ENABLE_TESTS", self.run_tests),
            self.define("HST_ENABLE_EXAMPLES", self.run_tests),
        ]
        compiler = self._cxx_compiler()
        if compiler:
            args.append(self.define("CMAKE_CXX_COMPILER", compiler))
        return args

    @run_after("install")
    def setup_build_tests(self):
        """Cache the examples so that `spack test run` can build them."""
        cache_extra_test_sources(self, [self.examples_src_dir])

    def test_examples(self):
        """build the cached examples against the installed HST and run them"""
        spec = self.spec
        source_dir = join_path(self.test_suite.current_test_cache_dir, self.examples_src_dir)
        build_dir = join_path(os.getcwd(), "build_examples")
        compiler = self._cxx_compiler() or os.environ["CXX"]
        prefixes = [self.prefix, spec["kokkos"].prefix, spec["kokkos-kernels"].prefix]
        if spec.satisfies("+mpi"):
            prefixes.append(spec["mpi"].prefix)

        cmake = which(spec["cmake"].prefix.bin.cmake)
        ctest = which(spec["cmake"].prefix.bin.ctest)
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
