"""sessiondb.agents.SessiondbSession against the OpenAI Agents SDK's Session
protocol, one test per semantic its SQLiteSession documents and its tests
check (tests/memory/test_session.py, test_session_limit.py): order, limit,
pop_item on an empty session, sessions apart, clear; and that every
Responses API item reads back equal to what was written."""

import base64
import json

import pytest

import sessiondb
from conftest import png_bytes
from sessiondb.agents import SessiondbSession

pytestmark = pytest.mark.asyncio


@pytest.fixture
def session(store):
    return SessiondbSession("user-123", store)


def msg(role, content):
    return {"role": role, "content": content}


async def test_items_come_back_in_the_order_they_were_added(session):
    await session.add_items([msg("user", "Hello"), msg("assistant", "Hi there!")])
    await session.add_items([msg("user", "How are you?")])
    assert await session.get_items() == [msg("user", "Hello"), msg("assistant", "Hi there!"),
                                         msg("user", "How are you?")]


async def test_a_limit_gives_the_latest_items_in_chronological_order(session):
    await session.add_items([msg("user" if i % 2 == 0 else "assistant", f"m{i}") for i in range(6)])
    assert [i["content"] for i in await session.get_items(limit=2)] == ["m4", "m5"]
    assert [i["content"] for i in await session.get_items(limit=4)] == ["m2", "m3", "m4", "m5"]
    assert len(await session.get_items(limit=10)) == 6
    assert await session.get_items(limit=0) == []
    assert len(await session.get_items(limit=None)) == 6


async def test_session_settings_give_the_default_limit(store):
    s = SessiondbSession("limited", store, session_settings={"limit": 2})
    assert s.session_settings.limit == 2
    await s.add_items([msg("user", f"m{i}") for i in range(5)])
    assert [i["content"] for i in await s.get_items()] == ["m3", "m4"]
    assert len(await s.get_items(limit=5)) == 5
    assert SessiondbSession("x", store).session_settings.limit is None


async def test_a_new_session_is_empty_and_pop_item_on_it_is_none(session):
    assert await session.get_items() == []
    assert await session.pop_item() is None


async def test_pop_item_removes_and_returns_the_latest_until_none(session):
    await session.add_items([msg("user", "Hello"), msg("assistant", "Hi there!"),
                             msg("user", "How are you?")])
    assert await session.pop_item() == msg("user", "How are you?")
    assert await session.get_items() == [msg("user", "Hello"), msg("assistant", "Hi there!")]
    assert await session.pop_item() == msg("assistant", "Hi there!")
    assert await session.pop_item() == msg("user", "Hello")
    assert await session.pop_item() is None
    assert await session.get_items() == []


async def test_items_added_after_a_pop_follow_what_is_left(session):
    await session.add_items([msg("user", "a"), msg("assistant", "b")])
    await session.pop_item()
    await session.add_items([msg("assistant", "c")])
    assert await session.get_items() == [msg("user", "a"), msg("assistant", "c")]
    assert await session.pop_item() == msg("assistant", "c")
    assert await session.get_items() == [msg("user", "a")]


async def test_pop_keeps_the_removed_item_in_the_log_for_audit(session, store):
    await session.add_items([msg("user", "a"), msg("assistant", "b")])
    await session.pop_item()
    events = store.read_events("user-123")
    assert [e.message.text for e in events if e.type == "message"] == ["a", "b"]


async def test_pop_and_get_affect_only_their_own_session(store):
    one, two = SessiondbSession("s1", store), SessiondbSession("s2", store)
    await one.add_items([msg("user", "Session 1 message")])
    await two.add_items([msg("user", "Session 2 message 1"), msg("user", "Session 2 message 2")])
    assert (await two.pop_item())["content"] == "Session 2 message 2"
    assert [i["content"] for i in await one.get_items()] == ["Session 1 message"]
    assert [i["content"] for i in await two.get_items()] == ["Session 2 message 1"]


async def test_clear_session_removes_every_item_and_the_session_goes_on(session):
    await session.add_items([msg("user", "Hello"), msg("assistant", "Hi")])
    await session.clear_session()
    assert await session.get_items() == []
    assert await session.pop_item() is None
    await session.add_items([msg("user", "again")])
    assert await session.get_items() == [msg("user", "again")]


async def test_clearing_a_session_never_written_is_fine(session):
    await session.clear_session()
    assert await session.get_items() == []


async def test_adding_no_items_writes_nothing(session, store):
    await session.add_items([])
    assert await session.get_items() == []


async def test_a_closed_session_refuses_even_an_empty_add(tmp_path):
    s = SessiondbSession("c", str(tmp_path / "store"))
    s.close()
    with pytest.raises(RuntimeError):
        await s.add_items([])


async def test_unicode_and_sql_looking_text_round_trip(session):
    items = [msg("user", t) for t in ["こんにちは", "😊👍", "O'Reilly", "DROP TABLE sessions;",
                                      "Robert'); DROP TABLE students;--"]]
    await session.add_items(items)
    assert await session.get_items() == items


async def test_any_session_id_is_accepted(store):
    s = SessiondbSession("user@example.com/conversation 7", store)
    await s.add_items([msg("user", "hi")])
    assert await s.get_items() == [msg("user", "hi")]
    assert s.session_id == "user@example.com/conversation 7"


RESPONSES_ITEMS = [
    {"role": "developer", "content": "Be terse."},
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "What is 2+2?"}]},
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Add them."}],
     "encrypted_content": "gAAAA-opaque"},
    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "add",
     "arguments": "{\"a\": 2, \"b\": 2}", "status": "completed"},
    {"type": "function_call_output", "call_id": "call_1", "output": "4"},
    {"type": "function_call", "call_id": "call_2", "name": "odd", "arguments": "not json"},
    {"type": "function_call_output", "call_id": "call_2", "output": [{"type": "input_text", "text": "x"}]},
    {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "4", "annotations": [], "logprobs": []}]},
    {"role": "assistant", "content": ""},
    {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"query": "x"}},
    {"role": "user", "content": "plain", "extra": None},
]


async def test_every_kind_of_responses_item_reads_back_equal(session):
    await session.add_items(RESPONSES_ITEMS)
    assert await session.get_items() == RESPONSES_ITEMS


async def test_images_move_to_blobs_and_come_back_as_the_same_data_url(session, store):
    data = png_bytes(3, 2, salt=b"agents")
    url = "data:image/png;base64," + base64.b64encode(data).decode()
    item = {"role": "user", "content": [{"type": "input_text", "text": "what is this?"},
                                        {"type": "input_image", "image_url": url, "detail": "auto"}]}
    await session.add_items([item, item])
    assert await session.get_items() == [item, item]
    # The bytes are a blob, kept once; the message metadata holds no base64.
    messages = store.read("user-123")
    assert all(url not in json.dumps(m.metadata) for m in messages)
    resources = [p.resource for m in messages for p in m.parts if p.type == "image"]
    assert len(resources) == 2 and resources[0].content_sha256 == resources[1].content_sha256
    assert store.stats()["blobs"] == 1


async def test_data_urls_the_store_cannot_keep_stay_inline_and_round_trip(session):
    odd = [
        {"role": "user", "content": [{"type": "input_image",
                                      "image_url": "data:image/svg+xml;base64,PHN2Zy8+"}]},
        {"role": "user", "content": [{"type": "input_image", "image_url": "data:image/png;base64,bm90IGEgcG5n"}]},
        {"role": "user", "content": [{"type": "input_image", "image_url": "https://example.com/cat.png"}]},
    ]
    await session.add_items(odd)
    assert await session.get_items() == odd


async def test_base64_with_stray_bits_stays_inline_and_round_trips(session):
    data = png_bytes(2, 2, salt=b"strays")
    while len(data) % 3 != 1:  # two "=" of padding: the last character carries 4 unused bits
        data += b"\x00"
    text64 = base64.b64encode(data).decode()
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    last = text64[-3]
    odd = text64[:-3] + alphabet[alphabet.index(last) + 1] + "=="  # same bytes, other text
    assert base64.b64decode(odd) == data and odd != text64
    item = {"role": "user", "content": [{"type": "input_image", "image_url": "data:image/png;base64," + odd}]}
    await session.add_items([item])
    assert await session.get_items() == [item]


async def test_popping_an_image_item_returns_its_data_url(session):
    url = "data:image/png;base64," + base64.b64encode(png_bytes(1, 1, salt=b"pop")).decode()
    item = {"role": "user", "content": [{"type": "input_image", "image_url": url, "detail": "low"}]}
    await session.add_items([msg("user", "before"), item])
    assert await session.pop_item() == item


async def test_the_usage_hook_records_each_model_calls_usage(session, store):
    class Details:
        def __init__(self, **kw):
            self.__dict__.update(kw)

    class SdkUsage:  # the SDK's Usage, by shape
        input_tokens = 120
        output_tokens = 30
        input_tokens_details = Details(cached_tokens=100)
        output_tokens_details = Details(reasoning_tokens=7)

    class Response:
        usage = SdkUsage()

    class Agent:
        model = "gpt-4.1"

    hooks = session.usage_hooks()
    await hooks.on_llm_end(None, Agent(), Response())
    await hooks.on_llm_end(None, Agent(), Response())
    await session.add_items([msg("user", "q"), msg("assistant", "a")])
    report = await session.usage()
    assert report["turns"] == 1
    assert report["total"] == sessiondb.Usage(240, 60, 200, 14)
    assert [m["model"] for m in report["by_model"]] == ["gpt-4.1"]
    assert await session.get_items() == [msg("user", "q"), msg("assistant", "a")]


async def test_concurrent_adds_all_land_in_some_order(session):
    import asyncio
    await asyncio.gather(*(session.add_items([msg("user", f"m{i}")]) for i in range(20)))
    assert sorted(i["content"] for i in await session.get_items()) == sorted(f"m{i}" for i in range(20))


async def test_sessions_on_one_location_share_a_store_closed_with_the_last(tmp_path):
    a = SessiondbSession("a", str(tmp_path / "store"))
    b = SessiondbSession("b", str(tmp_path / "store"))
    assert a.store is b.store
    await a.add_items([msg("user", "from a")])
    a.close()
    assert not b.store.closed
    assert await b.get_items() == []
    await b.add_items([msg("user", "from b")])
    b.close()
    assert b.store.closed
    c = SessiondbSession("a", str(tmp_path / "store"))
    assert await c.get_items() == [msg("user", "from a")]
    c.close()
