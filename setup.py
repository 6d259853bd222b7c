"""pip install . (offline): builds the Python package `sessiondb` with CMake.

setuptools, which Debian ships, is the build backend: the extension
sessiondb._sessiondb is built by this repository's CMake (python/
CMakeLists.txt, the library target `sessiondb` and Debian's pybind11), the
pure-Python modules come from python/sessiondb/. There is deliberately no
pyproject.toml [build-system]: pip would then build in an isolated
environment and fetch setuptools from an index, which an offline machine
cannot reach; without it pip uses the setuptools already installed.

    python3 -m pip install .                          # or --no-build-isolation
    SESSIONDB_CMAKE_ARGS="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache" pip install .
    SESSIONDB_BUILD_DIR=build pip install .           # reuse the tree `make build` made
"""

import os
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))


def project_version():
    """The version in CMakeLists.txt's project(), so the two never differ."""
    with open(os.path.join(HERE, "CMakeLists.txt"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("project(sessiondb VERSION"):
                return line.split("VERSION")[1].split()[0]
    raise RuntimeError("no project(sessiondb VERSION ...) in CMakeLists.txt")


def require_bdist_wheel():
    """pip builds a wheel: without setuptools' own bdist_wheel (70.1 and later)
    or the `wheel` package, say which interpreter lacks it and what works,
    rather than setuptools' "invalid command 'bdist_wheel'"."""
    if not {"bdist_wheel", "dist_info"} & set(sys.argv):
        return
    for module in ("setuptools.command.bdist_wheel", "wheel.bdist_wheel"):
        try:
            __import__(module)
            return
        except ImportError:
            pass
    sys.exit(f"sessiondb: {sys.executable} has no `wheel` package, which pip needs to build "
             "sessiondb, and no package index is assumed. Use Debian's own interpreter: "
             "/usr/bin/python3 -m venv --system-site-packages ~/venv && . ~/venv/bin/activate "
             "&& pip install . (Debian's python3-wheel is seen there). See docs/python.md.")


require_bdist_wheel()


class CMakeBuild(build_ext):
    """Configures the repository with only the Python package on, builds
    _sessiondb, and puts it where setuptools packs the extension."""

    def build_extension(self, ext):
        reuse = os.environ.get("SESSIONDB_BUILD_DIR")
        if reuse:
            # A CMake build tree of this checkout already configured (`make
            # build`): only the extension is built there, for this interpreter.
            build_dir = os.path.abspath(reuse)
            configure = ["cmake", "-S", HERE, "-B", build_dir, "-DSESSIONDB_BUILD_PYTHON=ON",
                         f"-DPython3_EXECUTABLE={sys.executable}"]
        else:
            build_dir = os.path.abspath(os.path.join(self.build_temp, "cmake"))
            configure = [
                "cmake", "-S", HERE, "-B", build_dir,
                "-G", "Ninja" if shutil.which("ninja") else "Unix Makefiles",
                "-DCMAKE_BUILD_TYPE=Release",
                "-DSESSIONDB_BUILD_TESTS=OFF", "-DSESSIONDB_BUILD_BENCH=OFF",
                "-DSESSIONDB_BUILD_PYTHON=ON", f"-DPython3_EXECUTABLE={sys.executable}",
            ]
        os.makedirs(build_dir, exist_ok=True)
        configure += shlex.split(os.environ.get("SESSIONDB_CMAKE_ARGS", ""))
        subprocess.run(configure, check=True)
        jobs = os.environ.get("SESSIONDB_BUILD_JOBS", str(os.cpu_count() or 1))
        subprocess.run(["cmake", "--build", build_dir, "--target", "_sessiondb", "-j", jobs],
                       check=True)
        built = os.path.join(build_dir, "python", "sessiondb", os.path.basename(self.get_ext_filename(ext.name)))
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built, target)


setup(
    name="sessiondb",
    version=project_version(),
    description="Embedded database for LLM chat sessions: logs, blobs, forks, search, "
                "drop-in session stores for the OpenAI Agents SDK and LangGraph",
    packages=["sessiondb"],
    package_dir={"": "python"},
    package_data={"sessiondb": ["py.typed", "*.pyi"]},
    ext_modules=[Extension("sessiondb._sessiondb", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.9",
    zip_safe=False,
)
