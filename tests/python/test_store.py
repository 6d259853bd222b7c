"""The core API: sessions, messages, parts, reads, errors (both backends)."""

import pathlib

import pytest

import sessiondb
from conftest import png_bytes


def test_a_session_created_is_read_back_with_its_title_and_metadata(store):
    s = store.create_session("chat-1", title="Cats", metadata={"project": "/src/app"})
    got = store.get_session("chat-1")
    assert (got.id, got.title, got.metadata, got.message_count) == ("chat-1", "Cats",
                                                                    {"project": "/src/app"}, 0)
    assert s.created_ms == got.created_ms


def test_a_session_without_an_id_gets_one(store):
    s = store.create_session()
    assert len(s.id) >= 32
    assert store.get_session(s.id).id == s.id


def test_appended_messages_read_back_in_order_with_their_fields(store):
    sid = store.create_session().id
    r1 = store.append(sid, "user", "hello")
    r2 = store.append(sid, "assistant", ["hi", "there"], model="gpt-4o", provider="openai",
                      usage={"input_tokens": 12, "output_tokens": 3}, metadata={"k": [1, 2]})
    assert (r1.seq, r2.seq) == (1, 2)
    msgs = store.read(sid)
    assert [m.role for m in msgs] == ["user", "assistant"]
    assert msgs[0].text == "hello"
    assert msgs[1].text == "hi\nthere"
    assert [p.type for p in msgs[1].parts] == ["text", "text"]
    assert msgs[1].model == "gpt-4o" and msgs[1].provider == "openai"
    assert msgs[1].usage == sessiondb.Usage(input_tokens=12, output_tokens=3)
    assert msgs[1].metadata == {"k": [1, 2]}
    assert msgs[1].id == r2.message_id and msgs[1].seq == 2


def test_a_page_and_the_last_n_are_the_right_slices(store):
    sid = store.create_session().id
    store.append_batch(sid, [sessiondb.Message("user", f"m{i}") for i in range(10)])
    assert [m.text for m in store.read(sid, from_seq=4, limit=3)] == ["m3", "m4", "m5"]
    assert [m.text for m in store.read_last(sid, 2)] == ["m8", "m9"]
    assert len(store.read(sid)) == 10


def test_images_from_bytes_bytearray_memoryview_path_and_data_uri_are_stored_once(store, tmp_path):
    sid = store.create_session().id
    data = png_bytes(4, 5)
    path = tmp_path / "cat.png"
    path.write_bytes(data)
    import base64
    uri = "data:image/png;base64," + base64.b64encode(data).decode()
    sources = [data, bytearray(data), memoryview(data), str(path), pathlib.Path(path), uri]
    # At most 5 images per message by default: two messages.
    r1 = store.append(sid, "user", ["look"] + [sessiondb.image(s) for s in sources[:3]])
    r2 = store.append(sid, "user", [sessiondb.image(s) for s in sources[3:]])
    resources = r1.resources + r2.resources
    assert len(resources) == 6
    assert {res.content_sha256 for res in resources} == {resources[0].content_sha256}
    assert all((res.mime, res.width, res.height) == ("image/png", 4, 5) for res in resources)
    assert store.read_blob(resources[0].content_sha256) == data
    assert store.data_uri(resources[0]) == uri
    part = store.read(sid)[1].parts[0]
    assert part.type == "image" and part.resource.content_sha256 == resources[0].content_sha256


def test_bytes_that_are_not_an_image_are_refused_and_nothing_is_written(store):
    sid = store.create_session().id
    with pytest.raises(sessiondb.InvalidArgument):
        store.append(sid, "user", ["x", sessiondb.image(b"not an image at all")])
    assert store.read(sid) == []


def test_tool_calls_results_and_reasoning_keep_their_fields(store):
    sid = store.create_session().id
    store.append(sid, "assistant", [sessiondb.reasoning("think", signature="sig"),
                                    sessiondb.tool_call("call_1", "lookup", {"q": "cats"})],
                 provider="anthropic")
    store.append(sid, "tool", [sessiondb.tool_result("call_1", "found", is_error=True)])
    a, t = store.read(sid)
    assert (a.parts[0].type, a.parts[0].text, a.parts[0].signature) == ("reasoning", "think", "sig")
    call = a.parts[1]
    assert (call.type, call.tool_call_id, call.tool_name, call.arguments) == (
        "tool_call", "call_1", "lookup", {"q": "cats"})
    res = t.parts[0]
    assert (res.type, res.tool_call_id, res.text, res.is_error) == ("tool_result", "call_1", "found", True)


def test_errors_are_exceptions_carrying_the_codes(store):
    with pytest.raises(sessiondb.NotFound) as e:
        store.get_session("nope")
    assert e.value.code == "not_found" and isinstance(e.value, sessiondb.Error)
    assert isinstance(e.value, LookupError)
    store.create_session("dup")
    with pytest.raises(sessiondb.AlreadyExists) as e:
        store.create_session("dup")
    assert e.value.code == "already_exists"
    with pytest.raises(sessiondb.InvalidArgument) as e:
        store.create_session("no/slashes")
    assert e.value.code == "invalid_argument" and isinstance(e.value, ValueError)
    with pytest.raises(sessiondb.NotFound):
        store.append("nope", "user", "x")
    with pytest.raises(sessiondb.InvalidArgument):
        store.append("dup", "wizard", "x")


def test_error_classes_are_a_hierarchy_under_error():
    for cls, code in [(sessiondb.NotFound, "not_found"), (sessiondb.InvalidArgument, "invalid_argument"),
                      (sessiondb.AlreadyExists, "already_exists"),
                      (sessiondb.FailedPrecondition, "failed_precondition"), (sessiondb.Busy, "busy"),
                      (sessiondb.Corruption, "corruption"), (sessiondb.IoError, "io_error")]:
        assert issubclass(cls, sessiondb.Error) and cls.code == code


def test_a_closed_store_refuses_calls_with_failed_precondition(store_location):
    location, options = store_location
    s = sessiondb.open(location, **options)
    s.close()
    assert s.closed
    with pytest.raises(sessiondb.FailedPrecondition):
        s.create_session()


def test_a_read_only_store_refuses_writes(tmp_path):
    sessiondb.open(tmp_path / "s").close()
    with sessiondb.open(tmp_path / "s", read_only=True) as ro:
        with pytest.raises(sessiondb.FailedPrecondition):
            ro.create_session()


def test_a_missing_store_is_not_found_when_not_to_be_created(tmp_path):
    with pytest.raises(sessiondb.NotFound):
        sessiondb.open(tmp_path / "absent", create_if_missing=False)


def test_bad_option_values_are_invalid_arguments(tmp_path):
    with pytest.raises(sessiondb.InvalidArgument):
        sessiondb.open(tmp_path / "s", durability="sometimes")


def test_listing_pages_through_every_session_most_recent_first(store):
    ids = [store.create_session(f"s{i:02d}").id for i in range(7)]
    for sid in ids:  # updated in this order: the last is the most recent
        store.append(sid, "user", "x")
    listed = [s.id for s in store.sessions(page_size=3)]
    assert listed == list(reversed(ids))
    page, cursor = store.list_page(3)
    assert [s.id for s in page] == list(reversed(ids))[:3] and cursor


def test_rename_archive_purge_delete_and_active(store):
    a = store.create_session("a").id
    b = store.create_session("b").id
    store.rename_session(a, "Renamed")
    assert store.get_session(a).title == "Renamed"
    store.archive_session(b)
    assert [s.id for s in store.sessions()] == [a]
    assert [s.id for s in store.sessions(archived="archived")] == [b]
    assert store.purge_archived(2**62) == 1
    with pytest.raises(sessiondb.NotFound):
        store.get_session(b)
    assert store.active_session is None
    store.active_session = a
    assert store.active_session == a
    store.active_session = None
    assert store.active_session is None
    store.delete_session(a)
    with pytest.raises(sessiondb.NotFound):
        store.get_session(a)


def test_a_fork_reads_the_parents_history_up_to_its_point_then_its_own(store):
    p = store.create_session("parent").id
    for i in range(4):
        store.append(p, "user" if i % 2 == 0 else "assistant", f"m{i}")
    f = store.fork(p, 2, id="child")
    assert (f.parent_id, f.fork_seq) == ("parent", 2)
    store.append("child", "user", "other")
    assert [m.text for m in store.read("child")] == ["m0", "m1", "other"]
    assert [m.text for m in store.read(p)] == ["m0", "m1", "m2", "m3"]
    whole = store.fork(p)
    assert whole.fork_seq == 4


def test_compaction_replaces_its_range_in_projections_and_prune_drops_the_parts(store):
    sid = store.create_session().id
    for i in range(4):
        store.append(sid, "user" if i % 2 == 0 else "assistant", f"message {i}")
    ev = store.compact(sid, 1, 2, "they greeted", strategy="manual")
    assert ev.type == "compaction" and ev.compaction.summary == "they greeted"
    body = store.project(sid, "openai-chat")
    texts = [str(m.get("content")) for m in body["messages"]]
    assert not any("message 0" in t for t in texts)
    assert any("they greeted" in t for t in texts)
    report = store.prune(sid, ev.seq)
    assert report["events_pruned"] == 2
    assert [m.pruned for m in store.read(sid)][:2] == [True, True]
    assert [e.type for e in store.read_events(sid)][-1] == "compaction"
    assert [e.type for e in store.read_for_projection(sid)][0] == "compaction"


def test_projections_are_json_ready_in_each_providers_shape(store, png):
    sid = store.create_session().id
    store.append(sid, "system", "be brief")
    store.append(sid, "user", ["what is this?", sessiondb.image(png)])
    chat = store.project(sid, "openai-chat")
    assert chat["messages"][0] == {"role": "system", "content": "be brief"}
    user = chat["messages"][1]["content"]
    assert user[1]["type"] == "image_url" and user[1]["image_url"]["url"].startswith("data:image/png;base64,")
    responses = store.project(sid, "openai-responses")
    assert "input" in responses
    anthropic = store.project(sid, "anthropic")
    assert anthropic["system"] == "be brief" and anthropic["messages"][0]["role"] == "user"
    with pytest.raises(sessiondb.InvalidArgument):
        store.project(sid, "gemini")


def test_a_resource_view_sends_an_older_image_in_full_once(store, png):
    sid = store.create_session().id
    r = store.append(sid, "user", ["pic", sessiondb.image(png)])
    store.append(sid, "assistant", "nice")
    store.append(sid, "user", "and now?")
    assert "image_url" not in str(store.project(sid)["messages"][0])
    ev = store.view_resource(sid, r.resources[0].resource_id, "look again")
    assert ev.type == "resource_view" and ev.resource_view.reason == "look again"
    assert "data:image/png" in str(store.project(sid))


def test_drafts_open_save_list_finish_and_discard(store):
    sid = store.create_session().id
    d = store.open_draft(sid, model="m")
    d.text = "partial"
    store.save_draft(d)
    assert [x.text for x in store.list_drafts(sid)] == ["partial"]
    r = store.finish_draft(d.id)
    assert store.read(sid)[0].text == "partial" and r.seq == 1
    assert store.list_drafts(sid) == []
    d2 = store.open_draft(sid)
    store.discard_draft(d2.id)
    with pytest.raises(sessiondb.NotFound):
        store.save_draft(d2)


def test_usage_is_totalled_per_model(store):
    sid = store.create_session().id
    store.append(sid, "assistant", "a", model="m1", provider="openai", usage=sessiondb.Usage(10, 2))
    store.append(sid, "assistant", "b", model="m1", provider="openai", usage={"input_tokens": 5})
    u = store.usage(sid)
    assert u["turns"] == 2 and u["total"] == sessiondb.Usage(input_tokens=15, output_tokens=2)
    assert [(m["model"], m["turns"]) for m in u["by_model"]] == [("m1", 2)]


def test_housekeeping_reports(store, png):
    sid = store.create_session().id
    store.append(sid, "user", ["x", sessiondb.image(png)])
    stats = store.stats()
    assert stats["sessions"] == 1 and stats["messages"] == 1 and stats["blobs"] == 1
    assert store.verify()["clean"] is True
    assert store.collect_garbage(grace_ms=0, dry_run=True)["blobs_deleted"] == 0


def test_a_rewind_ends_the_view_and_keeps_the_log(store):
    sid = store.create_session().id
    for i in range(4):
        store.append(sid, "user" if i % 2 == 0 else "assistant", f"m{i}")
    ev = store.rewind(sid, 2)
    assert ev.type == "rewind" and ev.rewind_to_seq == 2 and ev.seq == 5
    assert [m.text for m in store.read(sid)] == ["m0", "m1"]
    assert [m.text for m in store.read_last(sid, 5)] == ["m0", "m1"]
    assert [e.type for e in store.read_events(sid)] == ["message"] * 4 + ["rewind"]
    assert len(store.project(sid)["messages"]) == 2
    store.append(sid, "user", "after")
    assert [m.text for m in store.read(sid)] == ["m0", "m1", "after"]
    store.rewind(sid, 0)
    assert store.read(sid) == []
    with pytest.raises(sessiondb.InvalidArgument):
        store.rewind(sid, 99)
    with pytest.raises(sessiondb.NotFound):
        store.rewind("missing", 0)


def test_values_of_the_wrong_kind_are_invalid_arguments_before_any_write(store):
    sid = store.create_session().id
    with pytest.raises(sessiondb.InvalidArgument):
        sessiondb.image(12345)
    with pytest.raises(sessiondb.InvalidArgument):
        store.append(sid, "user", ["text", 42])
    with pytest.raises(sessiondb.InvalidArgument):
        store.append(sid, "user", "x", metadata={"not json": object()})
    with pytest.raises(sessiondb.InvalidArgument):
        store.append(sid, "user", "x", usage="lots")
    with pytest.raises(sessiondb.InvalidArgument):
        store.append(sid, sessiondb.Message("user", "x"), "and content")
    with pytest.raises(sessiondb.NotFound):
        store.append(sid, "user", [sessiondb.image("/nonexistent/cat.png")])
    assert store.read(sid) == []
