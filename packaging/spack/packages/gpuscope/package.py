# SPDX-License-Identifier: Apache-2.0
#
# A Spack package for gpuscope (docs/install.md, "Spack"). Use it from a repository of your own:
#   spack repo add packaging/spack   (this folder holds repo.yaml and packages/)
#   spack install gpuscope
# The dependencies are those of cmake/Dependencies.cmake and the modules' find_package and
# pkg_check_modules calls; tests/packaging/check_recipes.py compares the two lists.

from spack.package import *


class Gpuscope(CMakePackage):
    """GPU job efficiency, energy and carbon profiler: samples NVML (and DCGM) while a
    command runs, writes a SQLite run database and analyses it (idle trimming,
    efficiency, load balance, energy and carbon, an HTML report), serves metrics to
    Prometheus and sweeps power limits. Simulated GPUs (--simulate) need no driver."""

    homepage = "https://github.com/gpuscope/gpuscope"
    git = "https://github.com/gpuscope/gpuscope.git"

    maintainers("gpuscope")

    license("Apache-2.0")

    version("main", branch="main")
    version("0.1.0", tag="v0.1.0")

    variant(
        "cupti",
        default=False,
        description="Build libgpuscope_cupti.so, the kernel trace of profile --trace-kernels "
        "(CUDA 13's CUPTI)",
    )

    generator("ninja")

    depends_on("cxx", type="build")
    depends_on("cmake@3.25:", type="build")
    depends_on("ninja", type="build")
    depends_on("pkgconfig", type="build")

    depends_on("fmt")
    depends_on("cli11")
    depends_on("nlohmann-json@3.10:")
    depends_on("tl-expected")
    depends_on("cpp-httplib")
    depends_on("libevent")
    depends_on("curl")
    depends_on("yaml-cpp")
    depends_on("openssl")
    depends_on("sqlite")
    depends_on("zlib-api")
    # the static plots (report --format png|svg|pdf) draw through PLplot's cairo driver
    depends_on("plplot")
    depends_on("cuda@13:", when="+cupti")

    conflicts("%gcc@:11", msg="gpuscope is C++20 and is built with GCC 12 or newer")

    # The HTML report embeds uPlot, which a checkout gets with npm ci (web/package-lock.json).
    resource(
        name="uplot",
        url="https://registry.npmjs.org/uplot/-/uplot-1.6.32.tgz",
        sha256="4b8a8191e425658e3ea8c8c1314b0fc679c861ee3a1af2b20c7b16ba50b5133d",
        destination="web/node_modules",
        placement="uplot",
    )

    def cmake_args(self):
        args = [
            self.define("GPUSCOPE_BUILD_TESTS", self.run_tests),
            self.define("GPUSCOPE_BUILD_BENCHMARKS", False),
        ]
        if self.spec.satisfies("+cupti"):
            args.append(self.define("CUDAToolkit_ROOT", self.spec["cuda"].prefix))
        else:
            args.append(self.define("CMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit", True))
        return args

    @run_after("install")
    @on_package_attributes(run_tests=True)
    def check_simulated(self):
        gpuscope = Executable(self.prefix.bin.gpuscope)
        gpuscope("devices", "--simulate", "h100")
