"""What an audit reports: the three finding codes and `TemplateIssue` (no jinja2 here, so the
certifier can read a worker's audit without importing the template engine)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

CODE_EXECUTION = "chat_template_code_execution"
RENDER_ERROR = "chat_template_render_error"
HIDDEN_INSTRUCTION = "chat_template_hidden_instruction"
CODES = frozenset({CODE_EXECUTION, RENDER_ERROR, HIDDEN_INSTRUCTION})


@dataclass(frozen=True)
class TemplateIssue:
    """One problem with a template; `code` is a finding code, `line` 1-based when known."""

    code: str
    message: str
    line: int | None = None

    def where(self) -> str:
        return f" (line {self.line})" if self.line is not None else ""

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "line": self.line}

    @classmethod
    def from_json(cls, item: object) -> TemplateIssue | None:
        """The issue a worker sent, or None when it is not one (never trust the shape)."""
        if not isinstance(item, dict):
            return None
        code, message, line = item.get("code"), item.get("message"), item.get("line")
        if code not in CODES or not isinstance(message, str) or not (
                line is None or (isinstance(line, int) and not isinstance(line, bool))):
            return None
        return cls(str(code), message, line)
