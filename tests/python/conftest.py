"""Fixtures of the Python suite: stores on both backends, small valid images.

The suite runs against the package the build just made (CTest puts
build/python on PYTHONPATH, tests/python/CMakeLists.txt). `store` is an
embedded store in a fresh folder, and, when CTest's throw-away PostgreSQL
cluster is up ($SESSIONDB_TEST_POSTGRES), the same tests run again on it in a
namespace of their own.
"""

import os
import struct
import uuid
import zlib

import pytest

import sessiondb

BACKENDS = ["embedded"]
if os.environ.get("SESSIONDB_TEST_POSTGRES"):
    BACKENDS.append("postgresql")


def png_bytes(width=1, height=1, salt=b""):
    """A valid grey PNG of width x height; `salt` (a private chunk) makes distinct bytes."""

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows))
            + (chunk(b"rnDm", salt) if salt else b"")
            + chunk(b"IEND", b""))


@pytest.fixture
def png():
    return png_bytes(2, 3)


@pytest.fixture(params=BACKENDS)
def store_location(request, tmp_path):
    """(location, options) of an empty store of each backend."""
    if request.param == "embedded":
        return str(tmp_path / "store"), {}
    return os.environ["SESSIONDB_TEST_POSTGRES"], {"namespace": "py-" + uuid.uuid4().hex[:12]}


@pytest.fixture
def store(store_location):
    location, options = store_location
    with sessiondb.open(location, **options) as s:
        yield s


@pytest.fixture
def embedded_store(tmp_path):
    with sessiondb.open(tmp_path / "store") as s:
        yield s
