"""Chat-template audits as facts on the view, gathered before the checks run.

Every distinct ``tokenizer.chat_template`` text in the package's headers is audited once, in the
sandboxed worker (`meshcert.certify.chat_template.isolated`): the first `MAX_RENDERS` are rendered
too.
`attach_template_audits(view)` stores the result under `TEMPLATE_AUDITS_KEY`, so the service can
run it while it waits for llama.cpp's parser; the `chat_templates` check reads it (and computes
it itself for a view nobody attached it to).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from meshcert.certify.chat_template.isolated import audit_isolated
from meshcert.certify.chat_template.issues import TemplateIssue
from meshcert.certify.package_gguf.carriers import Carrier, carriers
from meshcert.certify.view import PackageView

TEMPLATE_KEY = "tokenizer.chat_template"
TEMPLATE_AUDITS_KEY = "chat_template_audits"
# Renders per view: real models carry one to three templates; a file with hundreds of distinct
# ones would otherwise cost a worker (up to its time limit) each. The rest get the static audit
# and a render error saying they were not rendered.
MAX_RENDERS = 8

Holders = dict[tuple[str, str, bool], list[Carrier]]


def is_template_key(key: str) -> bool:
    """``tokenizer.chat_template`` or a named one (not ``tokenizer.chat_templates``, a list)."""
    return key == TEMPLATE_KEY or key.startswith(TEMPLATE_KEY + ".")


def template_holders(view: PackageView) -> Holders:
    """(key, template text or a repr of a non-string value, is text) -> the carriers holding
    it, in carrier order (metadata.gguf first)."""
    holders: Holders = {}
    for carrier in carriers(view):
        for key, value in carrier.header.kv.items():
            if is_template_key(key):
                text = value if isinstance(value, str) else repr(value)[:200]
                holders.setdefault((key, text, isinstance(value, str)), []).append(carrier)
    return holders


class _SharedAudits:
    """Audits kept across the views certified inside `shared_template_audits()`."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users = 0
        self.memo: dict[tuple[str, bool], list[TemplateIssue]] = {}


_SHARED = _SharedAudits()


@contextmanager
def shared_template_audits() -> Iterator[None]:
    """Within this block a template text is audited once for every view that carries it: the
    packages of one catalog mostly repeat a few templates, and each audit costs a worker
    process. Outside it (one certification per process) nothing is kept."""
    with _SHARED.lock:
        _SHARED.users += 1
    try:
        yield
    finally:
        with _SHARED.lock:
            _SHARED.users -= 1
            if _SHARED.users == 0:
                _SHARED.memo.clear()


def _audit(text: str, render: bool) -> list[TemplateIssue]:
    with _SHARED.lock:
        shared = _SHARED.users > 0
        kept = _SHARED.memo.get((text, render)) if shared else None
    if kept is not None:
        return list(kept)
    issues = audit_isolated(text, render=render)
    if shared:
        with _SHARED.lock:
            if _SHARED.users > 0:
                _SHARED.memo[(text, render)] = list(issues)
    return issues


def audit_templates(holders: Holders) -> dict[str, list[TemplateIssue]]:
    """Template text -> its issues, for every distinct text among `holders`."""
    audits: dict[str, list[TemplateIssue]] = {}
    for _key, text, is_text in holders:
        if is_text and text not in audits:
            audits[text] = _audit(text, render=len(audits) < MAX_RENDERS)
    return audits


def attach_template_audits(view: PackageView) -> None:
    view.source_facts[TEMPLATE_AUDITS_KEY] = audit_templates(template_holders(view))


def template_audits(view: PackageView, holders: Holders) -> dict[str, list[TemplateIssue]]:
    """The attached audits, or (for a view nobody attached them to) computed now."""
    attached = view.source_facts.get(TEMPLATE_AUDITS_KEY)
    if isinstance(attached, dict):
        return attached
    return audit_templates(holders)


def audit_texts(texts: list[str]) -> dict[str, list[TemplateIssue]]:
    """Text -> its issues for templates that are not in a GGUF header (publisher files): each
    distinct text audited once in the sandboxed worker, the first MAX_RENDERS rendered."""
    audits: dict[str, list[TemplateIssue]] = {}
    for text in texts:
        if text not in audits:
            audits[text] = _audit(text, render=len(audits) < MAX_RENDERS)
    return audits
