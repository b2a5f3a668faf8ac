"""Template audits shared across the views of one catalog run, and only there."""

from __future__ import annotations

from typing import Any

import pytest

from meshcert.certify import template_audits
from meshcert.certify.template_audits import audit_templates, shared_template_audits

TEXT = "{% for m in messages %}{{ m['content'] }}{% endfor %}"


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every audit that reaches the worker (the real audit, counted)."""
    seen: list[str] = []
    real = template_audits.audit_isolated

    def counted(text: str, **kwargs: Any) -> list[template_audits.TemplateIssue]:
        seen.append(text)
        return real(text, **kwargs)

    monkeypatch.setattr(template_audits, "audit_isolated", counted)
    return seen


def holders(text: str) -> template_audits.Holders:
    return {("tokenizer.chat_template", text, True): []}


def test_inside_the_block_a_text_is_audited_once(calls: list[str]) -> None:
    with shared_template_audits():
        first = audit_templates(holders(TEXT))
        second = audit_templates(holders(TEXT))
        with shared_template_audits():  # nested (each catalog run opens one): still shared
            third = audit_templates(holders(TEXT))
    assert first == second == third and calls == [TEXT]


def test_outside_it_nothing_is_kept(calls: list[str]) -> None:
    with shared_template_audits():
        audit_templates(holders(TEXT))
    audit_templates(holders(TEXT))
    audit_templates(holders(TEXT))
    assert calls == [TEXT] * 3
