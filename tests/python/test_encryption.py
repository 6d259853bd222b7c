"""Encryption at rest from Python (docs/encryption.md): a store opened with
key_file= (or SESSIONDB_KEY_FILE) is encrypted on disk and reads back; a
missing or wrong key is FailedPrecondition before anything is written."""

import pathlib

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
