"""Chat templates (``tokenizer.chat_template`` and ``tokenizer.chat_template.<name>``) in every
GGUF header: audited by `certify.chat_template` (static walk, then a sandboxed render).

Each distinct template text is audited once; its findings name the first file carrying it
(metadata.gguf first) and how many other files repeat it (whether the copies agree is
`tokenizer_copies`' job). At most `MAX_RENDERS` distinct templates are rendered per view.
"""

from __future__ import annotations

from collections.abc import Iterator

from certify.chat_template import (
    CODE_EXECUTION,
    HIDDEN_INSTRUCTION,
    RENDER_ERROR,
    TemplateIssue,
    audit_template,
)
from certify.checks import register
from certify.findings import Finding, finding
from certify.gguf.carriers import Carrier, carriers
from certify.gguf.fragments import capped
from certify.view import PackageView

TEMPLATE_KEY = "tokenizer.chat_template"
# Renders per view: real models carry one to three templates; a file with hundreds of distinct
# ones would otherwise cost a worker (up to its time limit) each. The rest get the static audit
# and a render error saying they were not rendered.
MAX_RENDERS = 8


def is_template_key(key: str) -> bool:
    """``tokenizer.chat_template`` or a named one (not ``tokenizer.chat_templates``, a list)."""
    return key == TEMPLATE_KEY or key.startswith(TEMPLATE_KEY + ".")


@register("chat_templates", order=350, codes=[CODE_EXECUTION, RENDER_ERROR, HIDDEN_INSTRUCTION])
def check_chat_templates(view: PackageView) -> Iterator[Finding]:
    # (key, template text or a repr of a non-string value) -> the carriers holding it
    holders: dict[tuple[str, str, bool], list[Carrier]] = {}
    for carrier in carriers(view):
        for key, value in carrier.header.kv.items():
            if is_template_key(key):
                text = value if isinstance(value, str) else repr(value)[:200]
                holders.setdefault((key, text, isinstance(value, str)), []).append(carrier)
    audits: dict[str, list[TemplateIssue]] = {}  # template text -> its issues
    for (key, text, is_text), held_by in holders.items():
        first = held_by[0]
        others = f" (also in {len(held_by) - 1} other file(s))" if len(held_by) > 1 else ""
        if not is_text:
            yield finding(RENDER_ERROR, f"{first.path}: {key} is not a string but {text}"
                          f"{others}", path=first.path, layer_index=first.layer_index)
            continue
        if text not in audits:
            audits[text] = audit_template(text, render=len(audits) < MAX_RENDERS)
        yield from capped([_to_finding(issue, key, first, others) for issue in audits[text]])


def _to_finding(issue: TemplateIssue, key: str, carrier: Carrier, others: str) -> Finding:
    return finding(issue.code, f"{carrier.path}: {key}{issue.where()} {issue.message}{others}",
                   path=carrier.path, layer_index=carrier.layer_index)
