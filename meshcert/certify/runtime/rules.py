"""mesh-llm's pass rules for the JSON answers, as pure functions over decoded bodies."""

from __future__ import annotations

from typing import Any


def _non_blank(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


def model_ids(body: Any) -> list[str] | None:
    """`data[].id` strings of a /v1/models body; None when there is no `data` list."""
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        return None
    return [m["id"] for m in body["data"] if isinstance(m, dict) and isinstance(m.get("id"), str)]


def _content_texts(content: object) -> list[str]:
    """Non-blank texts of a message content: a string, or an array of strings and parts
    with `text`."""
    if _non_blank(content):
        return [content]  # type: ignore[list-item]
    texts: list[str] = []
    if isinstance(content, list):
        for part in content:
            if _non_blank(part):
                texts.append(part)
            elif isinstance(part, dict) and _non_blank(part.get("text")):
                texts.append(part["text"])
    return texts


def chat_texts(body: Any) -> list[str]:
    """Every non-blank text in `choices[].message.content`; the chat gate passes when there
    is one."""
    if not isinstance(body, dict) or not isinstance(body.get("choices"), list):
        return []
    texts: list[str] = []
    for choice in body["choices"]:
        message = choice.get("message") if isinstance(choice, dict) else None
        if isinstance(message, dict):
            texts += _content_texts(message.get("content"))
    return texts


def responses_texts(body: Any) -> list[str]:
    """A non-blank `output_text`, or `output[].content[]` parts with `type: "output_text"` and
    non-blank `text`; the responses gate passes when there is one."""
    if not isinstance(body, dict):
        return []
    texts: list[str] = []
    if _non_blank(body.get("output_text")):
        texts.append(body["output_text"])
    output = body.get("output")
    if isinstance(output, list):
        for item in output:
            content = item.get("content") if isinstance(item, dict) else None
            if not isinstance(content, list):
                continue
            for part in content:
                if (isinstance(part, dict) and part.get("type") == "output_text"
                        and _non_blank(part.get("text"))):
                    texts.append(part["text"])
    return texts


def usage_completion_tokens(body: Any) -> int | None:
    """`usage.completion_tokens` when it is a non-negative integer."""
    usage = body.get("usage") if isinstance(body, dict) else None
    value = usage.get("completion_tokens") if isinstance(usage, dict) else None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def error_object(body: Any) -> dict[str, Any] | None:
    """The JSON `error` object of an error answer, if it has one."""
    error = body.get("error") if isinstance(body, dict) else None
    return error if isinstance(error, dict) else None
