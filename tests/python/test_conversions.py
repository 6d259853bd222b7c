"""What a Python caller hands over, converted or refused clearly: buffers of
any layout give the bytes they show (never the memory around them), and a
value the engine cannot take is a sessiondb.InvalidArgument (a ValueError;
a TypeError where pybind11 itself refuses an argument) whose message says
why, not a RuntimeError with a C++ or Python traceback. Each refusal leaves
the store as it was."""

import array
import os
import subprocess
import sys

import pytest

import sessiondb


def _stored_bytes(store, sid, part):
    r = store.append(sid, "user", ["x", part])
    return store.read_blob(r.resources[0].content_sha256)


@pytest.mark.parametrize("view", [
    lambda b: memoryview(b)[::-1],
    lambda b: memoryview(b)[::2],
    lambda b: memoryview(b)[1::3],
    lambda b: memoryview(bytearray(b))[::-2],
])
def test_a_strided_or_reversed_buffer_stores_the_bytes_it_shows(store, view):
    sid = store.create_session().id
    data = bytes(range(256)) * 16  # 4 KiB
    shown = view(data)
    assert _stored_bytes(store, sid, sessiondb.file(shown, mime="application/octet-stream")) \
        == bytes(shown)


def test_a_buffer_of_wider_items_stores_its_bytes_in_order(store):
    sid = store.create_session().id
    numbers = array.array("i", range(1000))
    assert _stored_bytes(store, sid, sessiondb.file(numbers, mime="application/octet-stream")) \
        == numbers.tobytes()
    shown = memoryview(numbers)[::-7]
    assert _stored_bytes(store, sid, sessiondb.file(shown, mime="application/octet-stream")) \
        == shown.tobytes()


def test_a_reversed_view_of_16_mib_is_copied_not_read_past_its_end(tmp_path):
    # Before: SIGSEGV (the pointer of a reversed view is its last element,
    # read forwards). A child interpreter, so that a crash fails this test
    # alone.
    code = (
        "import sessiondb, sys\n"
        "data = bytes(range(256)) * (16 * 4096)\n"
        "view = memoryview(data)[::-1]\n"
        "with sessiondb.open(sys.argv[1], max_file_bytes=32 << 20) as s:\n"
        "    sid = s.create_session().id\n"
        "    r = s.append(sid, 'user', ['x', sessiondb.file(view, mime='application/octet-stream')])\n"
        "    assert s.read_blob(r.resources[0].content_sha256) == data[::-1]\n"
        "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path / "store")],
                       capture_output=True, text=True, env=dict(os.environ), timeout=120)
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])
    assert r.stdout.strip() == "ok"


def _clear(error):
    """The error is one a caller can catch by kind, and its text no traceback."""
    assert not type(error) is RuntimeError and not isinstance(error, RuntimeError), repr(error)
    assert isinstance(error, (TypeError, ValueError, sessiondb.Error)), repr(error)
    message = str(error)
    assert "Traceback" not in message and "\nAt:" not in message and "File \"" not in message
    assert len(message) < 400, message
    return message


@pytest.mark.parametrize("usage, says", [
    ({"input_tokens": 1.5}, "input_tokens"),
    ({"output_tokens": 2 ** 64}, "output_tokens"),
    ({"cached_tokens": -1}, "cached_tokens"),
    ({"reasoning_tokens": "12"}, "reasoning_tokens"),
    ({"input_tokens": True}, "input_tokens"),
    ([1, 2], "usage"),
])
def test_a_usage_count_that_is_not_a_count_is_refused_by_name(store, usage, says):
    sid = store.create_session().id
    store.append(sid, "user", "before")
    with pytest.raises(sessiondb.InvalidArgument) as caught:
        store.append(sid, "assistant", "a", usage=usage)
    assert says in _clear(caught.value)
    assert [m.text for m in store.read(sid)] == ["before"]


@pytest.mark.parametrize("args", [(1.5, 0, 0, 0), (0, 2 ** 64, 0, 0), (0, 0, "3", 0)])
def test_a_usage_made_by_hand_refuses_what_is_not_a_count(args):
    with pytest.raises((TypeError, ValueError)) as caught:
        sessiondb.Usage(*args)
    _clear(caught.value)


@pytest.mark.parametrize("make", [
    lambda s: sessiondb.text(s),
    lambda s: sessiondb.reasoning(s),
    lambda s: sessiondb.tool_result("call-1", s),
    lambda s: sessiondb.tool_call("call-1", "f", {"q": s}),
    lambda s: sessiondb.Message("user", s),
    lambda s: sessiondb.Message("user", ["ok", s]),
    lambda s: sessiondb.Message("user", "ok", metadata={"k": s}),
])
def test_text_with_a_lone_surrogate_is_refused_with_where_it_is(make):
    with pytest.raises(sessiondb.InvalidArgument) as caught:
        make("fine \ud800 then")
    assert "lone surrogate (U+D800 at index " in _clear(caught.value)


@pytest.mark.parametrize("metadata", [
    {"when": object()}, {"x": float("nan")}, {"x": float("inf")}, {1j: 1},
])
def test_metadata_that_is_not_json_is_refused_and_nothing_is_written(store, metadata):
    sid = store.create_session().id
    with pytest.raises(sessiondb.InvalidArgument) as caught:
        store.append(sid, "user", "hi", metadata=metadata)
    assert "JSON" in _clear(caught.value)
    with pytest.raises(sessiondb.InvalidArgument):
        store.create_session("refused", metadata=metadata)
    assert store.read(sid) == []
    with pytest.raises(sessiondb.NotFound):
        store.get_session("refused")


def test_a_source_that_is_no_buffer_nor_path_is_refused(store):
    for source in (12, 3.5, None, ["a"]):
        with pytest.raises(sessiondb.InvalidArgument) as caught:
            sessiondb.file(source)
        assert "bytes-like" in _clear(caught.value)


def test_content_of_another_type_is_refused(store):
    sid = store.create_session().id
    with pytest.raises(sessiondb.InvalidArgument) as caught:
        store.append(sid, "user", ["ok", 12])
    assert "int" in _clear(caught.value)
    assert store.read(sid) == []
