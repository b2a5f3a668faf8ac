"""The canned conversations every chat template is rendered with (plain data).

Message texts are distinctive, have no surrounding whitespace (templates often ``trim``) and no
reasoning tags (templates may strip ``<think>`` parts), so "the output contains every message's
text" is a fair demand on any template that accepts the conversation.
The tool-call conversation is optional (see `Conversation.required`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SYSTEM_TEXT = "You are a careful assistant for meshcert audits."
USER_TEXT = "Name three primary colors."
ASSISTANT_TEXT = "Red, yellow and blue."
FOLLOW_UP_TEXT = "Which of them is warmest?"
TOOL_QUESTION_TEXT = "What is the weather in Paris right now?"
TOOL_RESULT_TEXT = "Sunny and 21 degrees in Paris."

WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                       "required": ["city"]},
    },
}


@dataclass(frozen=True)
class Conversation:
    name: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    # Tool-call formats differ between model families (OpenAI-style here; Cohere, Firefunction
    # and others expect their own), so a template may fail on or drop parts of the optional
    # conversation without a finding; a sandbox refusal, a size overrun or non-reproducible
    # output is still reported.
    required: bool = True

    def context(self) -> dict[str, Any]:
        """The variables serving stacks pass to a chat template."""
        ctx: dict[str, Any] = {"messages": self.messages, "add_generation_prompt": True,
                               "bos_token": "<s>", "eos_token": "</s>"}
        if self.tools is not None:
            ctx["tools"] = self.tools
        return ctx

    def texts(self) -> list[tuple[int, str, str]]:
        """(index, role, text) of every message with non-empty string content."""
        return [(i, str(m["role"]), m["content"]) for i, m in enumerate(self.messages)
                if isinstance(m.get("content"), str) and m["content"]]


CONVERSATIONS: tuple[Conversation, ...] = (
    Conversation("system+user", [{"role": "system", "content": SYSTEM_TEXT},
                                 {"role": "user", "content": USER_TEXT}]),
    Conversation("user+assistant+user", [{"role": "user", "content": USER_TEXT},
                                         {"role": "assistant", "content": ASSISTANT_TEXT},
                                         {"role": "user", "content": FOLLOW_UP_TEXT}]),
    Conversation("tool call", [
        {"role": "user", "content": TOOL_QUESTION_TEXT},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
        {"role": "tool", "tool_call_id": "call_1", "name": "get_weather",
         "content": TOOL_RESULT_TEXT},
    ], tools=[WEATHER_TOOL], required=False),
)
