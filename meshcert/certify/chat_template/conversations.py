"""The canned conversations every chat template is rendered with (plain data).

Message texts are distinctive, have no surrounding whitespace (templates often ``trim``) and no
reasoning tags (templates may strip ``<think>`` parts), so "the output contains every message's
text" is a fair demand on any template that accepts the conversation.
The tool-call conversation is optional (see `Conversation.required`). A conversation passes
when it renders with any context a real renderer passes (`Conversation.contexts`).
"""

from __future__ import annotations

import re
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

    def context(self, tools: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """The variables serving stacks pass to a chat template: transformers'
        `apply_chat_template` always passes `tools` (None without tools), `documents` and
        `add_generation_prompt`; llama.cpp passes `bos_token` and `eos_token`."""
        return {"messages": self.messages,
                "tools": self.tools if self.tools is not None else tools,
                "documents": None, "add_generation_prompt": True,
                "bos_token": "<s>", "eos_token": "</s>"}

    def contexts(self, about_tools: bool) -> list[dict[str, Any]]:
        """Every context a real renderer may pass for this conversation, in the order tried:
        the plain one, then (for a template about tools, e.g. a `tool_use` template that
        lists `tools` unconditionally) the same messages with the sample tool list."""
        plain = self.context()
        if self.tools is not None or not about_tools:
            return [plain]
        return [plain, self.context(tools=[WEATHER_TOOL])]

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


_TOOLS_NAME = re.compile(r"\btools\b")


def is_about_tools(template: str) -> bool:
    """Whether the template reads `tools` at all (then a sample tool list is one of the
    contexts it is rendered with): a word match, so the parent needs no parser."""
    return _TOOLS_NAME.search(template) is not None
