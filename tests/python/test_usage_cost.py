"""Usage and cost from Python (docs/usage.md): the summary as GET /v1/usage
shapes it, each turn priced, a price file that overrides, and hostile
arguments refused with sessiondb.InvalidArgument naming them."""

import pytest

import sessiondb

# gpt-5: 800,000 uncached input at $1.25, 200,000 cached at $0.125, 100,000 output at $10.
GPT5_TURN = 0.8 * 1.25 + 0.2 * 0.125 + 0.1 * 10


def spend(store):
    sid = store.create_session(metadata={"project": "/src/app"}).id
    store.append(sid, "assistant", "a", model="gpt-5", provider="openai",
                 usage=sessiondb.Usage(input_tokens=1_000_000, output_tokens=100_000,
                                       cached_tokens=200_000, cache_write_tokens=0))
    store.append(sid, "assistant", "b", model="in-house", usage={"input_tokens": 10,
                                                                 "cache_write_tokens": 4})
    return sid


def test_the_summary_groups_prices_and_counts_unpriced_turns(store):
    sid = spend(store)
    s = store.usage_summary("project,model")
    assert s["currency"] == "USD" and s["group"] == ["project", "model"]
    assert [(r["project"], r["model"]) for r in s["rows"]] == [("/src/app", "gpt-5"),
                                                               ("/src/app", "in-house")]
    assert "day" not in s["rows"][0]
    assert s["rows"][0]["cost_usd"] == pytest.approx(GPT5_TURN)
    assert s["total"]["unpriced_turns"] == 1
    assert s["total"]["cache_write_tokens"] == 4
    assert store.usage_summary(["day"], sessions=[sid])["total"]["turns"] == 2
    assert store.usage_summary(project="/elsewhere")["total"]["turns"] == 0

    turns = store.turn_usage(sid)
    assert [t["seq"] for t in turns] == [1, 2]
    assert turns[0]["cost_usd"] == pytest.approx(GPT5_TURN)
    assert turns[1]["cost_usd"] is None
    assert turns[1]["usage"].cache_write_tokens == 4


def test_a_price_file_overrides_and_a_bad_one_is_named(store, tmp_path):
    sid = spend(store)
    prices = tmp_path / "prices.json"
    prices.write_text('[{"model": "in-house", "from": "2000-01-01", "input": 1000000, "output": 0}]')
    turns = store.turn_usage(sid, prices=str(prices))
    assert turns[1]["cost_usd"] == pytest.approx(10.0)
    bad = tmp_path / "bad.json"
    bad.write_text('[{"model": "x", "from": "someday", "input": 1, "output": 1}]')
    with pytest.raises(sessiondb.InvalidArgument, match="price 1"):
        store.usage_summary(prices=str(bad))


def test_hostile_arguments_are_refused(store):
    spend(store)
    with pytest.raises(sessiondb.InvalidArgument, match="week"):
        store.usage_summary("week")
    with pytest.raises(sessiondb.InvalidArgument, match="YYYY-MM-DD"):
        store.usage_summary(since="2025-02-30")
    with pytest.raises(sessiondb.InvalidArgument, match="500"):
        store.usage_summary(sessions=["x"] * 501)
