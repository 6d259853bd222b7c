"""Encryption at rest from Python (docs/encryption.md): a store opened with
key_file= (or SESSIONDB_KEY_FILE) is encrypted on disk (a PostgreSQL
namespace: in its rows) and reads back; a missing or wrong key is
FailedPrecondition before anything is written."""

import os
import pathlib
import subprocess
import uuid

import pytest

import sessiondb


def _key_file(path: pathlib.Path, text: str) -> str:
    path.write_text(text)
    path.chmod(0o600)
    return str(path)


def _all_bytes(root: pathlib.Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())


def test_a_store_opened_with_a_key_is_encrypted_and_reads_back(tmp_path):
    key = _key_file(tmp_path / "pass", "a long enough passphrase for tests")
    where = tmp_path / "store"
    with sessiondb.open(str(where), key_file=key) as store:
        sid = store.create_session(title="pysealedtitle").id
        store.append(sid, "user", "pysealedword in a message")
    assert b"pysealedword" not in _all_bytes(where)
    assert b"pysealedtitle" not in _all_bytes(where)
    with sessiondb.Store(where, key_file=pathlib.Path(key)) as store:
        assert store.read(sid)[0].text == "pysealedword in a message"
        assert store.get_session(sid).title == "pysealedtitle"


def test_the_environment_variable_gives_the_key(tmp_path, monkeypatch):
    key = _key_file(tmp_path / "pass", "another long passphrase")
    monkeypatch.setenv("SESSIONDB_KEY_FILE", key)
    with sessiondb.open(str(tmp_path / "store")) as store:
        sid = store.create_session().id
        store.append(sid, "user", "via the environment")
    monkeypatch.delenv("SESSIONDB_KEY_FILE")
    with pytest.raises(sessiondb.FailedPrecondition, match="is encrypted"):
        sessiondb.open(str(tmp_path / "store"))


def test_a_wrong_key_is_refused_before_anything_is_written(tmp_path):
    right = _key_file(tmp_path / "right", "the right passphrase")
    wrong = _key_file(tmp_path / "wrong", "the wrong passphrase")
    where = tmp_path / "store"
    with sessiondb.open(str(where), key_file=right) as store:
        store.append(store.create_session().id, "user", "hello")
    before = _all_bytes(where)
    with pytest.raises(sessiondb.FailedPrecondition, match="does not open"):
        sessiondb.open(str(where), key_file=wrong)
    assert _all_bytes(where) == before


@pytest.mark.skipif(not os.environ.get("SESSIONDB_TEST_POSTGRES"),
                    reason="runs where CTest's PostgreSQL cluster is up")
def test_a_postgresql_namespace_takes_the_key_the_same_way(tmp_path):
    uri = os.environ["SESSIONDB_TEST_POSTGRES"]
    namespace = "pyenc-" + uuid.uuid4().hex[:12]
    key = _key_file(tmp_path / "pass", "a passphrase for a namespace")
    with sessiondb.open(uri, namespace=namespace, key_file=key) as store:
        sid = store.create_session(title="pgsealedtitle").id
        store.append(sid, "user", "pgsealedword in a message")
    # What the server holds of the namespace, read with psql as a DBA would.
    psql = sorted(pathlib.Path("/usr/lib/postgresql").glob("*/bin/psql"))[-1]
    rows = subprocess.run(
        [str(psql), "-At", "-d", uri, "-c",
         "SELECT s.title || e.text || coalesce(e.body, '') FROM sessions s JOIN events e "
         f"ON e.namespace = s.namespace AND e.session_id = s.id WHERE s.namespace = '{namespace}'"],
        check=True, capture_output=True, text=True).stdout
    assert rows.strip() and "pgsealed" not in rows
    with pytest.raises(sessiondb.FailedPrecondition, match="is encrypted"):
        sessiondb.open(uri, namespace=namespace)
    wrong = _key_file(tmp_path / "wrong", "not the namespace's passphrase")
    with pytest.raises(sessiondb.FailedPrecondition, match="does not open"):
        sessiondb.open(uri, namespace=namespace, key_file=wrong)
    with sessiondb.open(uri, namespace=namespace, key_file=key) as store:
        assert store.read(sid)[0].text == "pgsealedword in a message"
        assert store.get_session(sid).title == "pgsealedtitle"
