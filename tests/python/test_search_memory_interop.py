"""Search, code memory, import and export through the module."""

import json

import pytest

import sessiondb


def test_keyword_search_finds_the_message_and_says_where(store):
    sid = store.create_session("s1").id
    store.append(sid, "user", "the token limit was hit again")
    store.append(sid, "assistant", "unrelated words here")
    r = store.search("token limit", mode="keyword")
    assert [(h["session_id"], h["seq"], h["kind"]) for h in r["hits"]] == [("s1", 1, "message")]
    assert r["hits"][0]["role"] == "user"
    assert store.search("token", mode="keyword", role="assistant")["hits"] == []


def test_a_misspelt_word_is_searched_as_the_nearest_word_and_said(store):
    sid = store.create_session().id
    store.append(sid, "user", "a deadlock in the writer")
    r = store.search("deadlok", mode="keyword")
    assert [h["seq"] for h in r["hits"]] == [1]
    assert r["corrected_query"] == "deadlock"
    assert r["corrected_words"] == [{"typed": "deadlok", "used": "deadlock"}]
    assert r["did_you_mean"] == "deadlock"
    exact = store.search("writer", mode="keyword")
    assert (exact["corrected_query"], exact["corrected_words"]) == ("", [])


def test_a_search_that_may_not_catch_up_says_what_it_did_not_see(store_location):
    # The embedded index follows the log: a search that may not catch it up
    # misses the append and says so. PostgreSQL indexes inside each write,
    # so nothing is ever pending there.
    location, options = store_location
    follows_the_log = not location.startswith("postgres")
    with sessiondb.open(location, **options) as store:
        sid = store.create_session().id
        store.append(sid, "user", "the wombat ate the cable")
        r = store.search("wombat", mode="keyword", catch_up_limit=0)
        assert [h["seq"] for h in r["hits"]] == ([] if follows_the_log else [1])
        assert r["pending_documents"] == (1 if follows_the_log else 0)
        r = store.search("wombat", mode="keyword")
        assert [h["seq"] for h in r["hits"]] == [1]
        assert r["pending_documents"] == 0


def test_hybrid_search_after_embedding_finds_the_message(store):
    sid = store.create_session().id
    store.append(sid, "user", "the cache eviction policy is wrong")
    assert store.embed()["embedded"] >= 1
    hits = store.search("cache eviction policy")["hits"]
    assert hits and hits[0]["seq"] == 1


def test_a_bad_search_mode_is_an_invalid_argument(store):
    with pytest.raises(sessiondb.InvalidArgument):
        store.search("x", mode="psychic")


def test_code_memory_records_recalls_and_counts_churn(store):
    w = store.record_write("/src/app/util.py", "def add(a, b):\n    return a + b\n",
                           project="/src/app", tool="Write")
    assert w["recorded"] is True
    assert store.record_write("/src/app/util.py", "def add(a, b):\n    return a + b\n",
                              project="/src/app")["recorded"] is False
    recalled = store.recall("/src/app/other.py", "def add(a, b):\n    return a + b\n")
    assert recalled and recalled[0]["file_path"] == "/src/app/util.py"
    churn = store.file_churn("/src/app/util.py")
    assert churn["edits_30d"] == 1 and churn["tier"] == "gold"
    assert [h["file_path"] for h in store.hotspots("/src/app")] == ["/src/app/util.py"]
    assert isinstance(store.churn_warnings("/src/app/util.py", "x = 1\n"), list)


def test_an_export_imports_into_another_store_whole(store, tmp_path, png):
    sid = store.create_session("exp", title="Exported").id
    store.append(sid, "user", ["hi", sessiondb.image(png)])
    store.append(sid, "assistant", "hello")
    out = tmp_path / "snap.json"
    report = store.export(out, sessions=[sid])
    assert report["sessions"] == 1 and report["messages"] == 2 and report["images"] == 1
    assert json.loads(out.read_text())
    with pytest.raises(sessiondb.AlreadyExists):
        store.export(out, sessions=[sid])
    with sessiondb.open(tmp_path / "other") as other:
        imported = other.import_path(out)
        assert imported["format"] == "snapshot" and imported["sessions_added"] == 1
        assert [m.text for m in other.read("exp")] == ["hi", "hello"]
        assert other.import_path(out)["sessions_unchanged"] == 1
        res = other.read("exp")[0].parts[1].resource
        assert other.read_blob(res.content_sha256) == png


def test_jsonl_and_markdown_exports_write_files(store, tmp_path):
    sid = store.create_session().id
    store.append(sid, "user", "hello")
    assert store.export(tmp_path / "x.jsonl", format="jsonl")["messages"] == 1
    assert store.export(tmp_path / "md", format="markdown")["files"]
    with pytest.raises(sessiondb.InvalidArgument):
        store.export(tmp_path / "y", format="pdf")


def test_importing_a_missing_path_is_not_found(store, tmp_path):
    with pytest.raises(sessiondb.NotFound):
        store.import_path(tmp_path / "absent.json")
