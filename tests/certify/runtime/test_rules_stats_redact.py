"""Pure helpers: mesh-llm's body rules, percentiles, key scrubbing."""

from __future__ import annotations

import pytest

from meshcert.certify.runtime.rules import (
    chat_texts,
    error_object,
    model_ids,
    responses_texts,
    usage_completion_tokens,
)
from meshcert.certify.runtime.stats import latency_summary, percentile
from meshcert.core.redact import Redactor


@pytest.mark.parametrize(("content", "ok"), [
    ("hi", True), ("  ", False), (None, False), (["", "hi"], True),
    ([{"type": "text", "text": "hi"}], True), ([{"type": "text", "text": " "}], False),
    ([], False), (42, False),
])
def test_chat_content_rule(content: object, ok: bool) -> None:
    body = {"choices": [{"message": {"role": "assistant", "content": content}}]}
    assert bool(chat_texts(body)) is ok


def test_chat_rule_looks_at_every_choice_and_survives_junk() -> None:
    assert chat_texts({"choices": [{"message": {"content": ""}},
                                   {"message": {"content": "b"}}]}) == ["b"]
    assert chat_texts({"choices": "x"}) == [] and chat_texts([]) == []


@pytest.mark.parametrize(("body", "ok"), [
    ({"output_text": "hi"}, True),
    ({"output_text": " "}, False),
    ({"output": [{"content": [{"type": "output_text", "text": "hi"}]}]}, True),
    ({"output": [{"content": [{"type": "refusal", "text": "hi"}]}]}, False),
    ({"output": [{"content": [{"type": "output_text", "text": ""}]}]}, False),
    ({"output": "x"}, False),
])
def test_responses_rule(body: dict[str, object], ok: bool) -> None:
    assert bool(responses_texts(body)) is ok


def test_models_usage_and_error_helpers() -> None:
    assert model_ids({"data": [{"id": "a"}, {"id": 3}, "x"]}) == ["a"]
    assert model_ids({"models": []}) is None
    assert usage_completion_tokens({"usage": {"completion_tokens": 4}}) == 4
    assert usage_completion_tokens({"usage": {"completion_tokens": True}}) is None
    assert usage_completion_tokens({"usage": {"completion_tokens": -1}}) is None
    assert error_object({"error": {"message": "m"}}) == {"message": "m"}
    assert error_object({"detail": "Not Found"}) is None


def test_percentile_interpolates_like_numpy() -> None:
    values = [10.0, 20.0, 30.0, 40.0]
    assert percentile(values, 50) == 25.0
    assert percentile(values, 95) == pytest.approx(38.5)
    assert percentile(values, 0) == 10.0 and percentile(values, 100) == 40.0
    assert percentile([], 50) is None
    assert latency_summary([5.0], "x") == {"x_mean_ms": 5.0, "x_p50_ms": 5.0, "x_p95_ms": 5.0,
                                           "x_max_ms": 5.0}
    with pytest.raises(ValueError):
        percentile(values, 101)


def test_redactor_scrubs_every_spelling_of_the_key() -> None:
    key = 'sk-te"st/key+1'
    r = Redactor(key)
    text = (f"raw {key} json {key.replace(chr(34), chr(92) + chr(34))} "
            "url sk-te%22st%2Fkey%2B1 plus sk-te%22st%2Fkey%2B1")
    scrubbed = r.scrub(text)
    assert "sk-te" not in scrubbed
    assert scrubbed.count("***") == 4


def test_redactor_without_a_key_changes_nothing() -> None:
    assert Redactor(None).scrub("a b") == "a b"
    assert Redactor("").scrub("a b") == "a b"


def test_a_snippet_is_scrubbed_before_it_is_cut() -> None:
    from meshcert.certify.runtime.client import Exchange

    key = "sk-0123456789abcdef"
    exchange = Exchange("GET", "/v1/models", body=("x" * 195 + key + "y" * 50).encode())
    snippet = exchange.snippet(Redactor(key).scrub, 200)
    assert "sk-01" not in snippet and snippet.endswith("***yy...")
