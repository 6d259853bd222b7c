"""`cmake --install` puts an importable package under the prefix (the
package's own install script, build/python/cmake_install.cmake, which
`cmake --install build` runs with the rest), where the interpreter it was
built for looks: the user site under a user's prefix (`make install` as a
user installs under ~/.local), found with no PYTHONPATH."""

import os
import subprocess
import sys

import pytest

BUILD = os.environ.get("SESSIONDB_BINARY_DIR")


@pytest.mark.skipif(not BUILD, reason="run by CTest, which names the build tree")
def test_the_installed_package_imports_from_the_prefix_alone(tmp_path):
    prefix = tmp_path / "prefix"
    r = subprocess.run([os.environ.get("SESSIONDB_CMAKE", "cmake"), f"-DCMAKE_INSTALL_PREFIX={prefix}",
                        "-P", os.path.join(BUILD, "python", "cmake_install.cmake")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    xy = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site = prefix / "lib" / xy / "site-packages"
    for name in ("__init__.py", "agents.py", "langgraph.py", "aio.py", "_sessiondb.pyi", "py.typed"):
        assert (site / "sessiondb" / name).is_file(), name
    code = ("import sessiondb, sys; s = sessiondb.open(sys.argv[1]); "
            "print(sessiondb.__file__); print(s.create_session('x').id)")
    # PYTHONUSERBASE stands for ~/.local: the interpreter finds the package in
    # its user site by itself.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONUSERBASE"] = str(prefix)
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path / "store")], env=env,
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [str(site / "sessiondb" / "__init__.py"), "x"]
