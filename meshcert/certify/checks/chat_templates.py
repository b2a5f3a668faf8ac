"""Chat templates (``tokenizer.chat_template`` and ``tokenizer.chat_template.<name>``) in every
GGUF header: audited by `meshcert.certify.chat_template` (static walk, then a sandboxed render),
once per distinct text (`meshcert.certify.template_audits`, which also caps the renders per view).

A template's findings name the first file carrying it (metadata.gguf first) and how many other
files repeat it (whether the copies agree is `tokenizer_copies`' job).
"""

from __future__ import annotations

from collections.abc import Iterator

from meshcert.certify.chat_template.issues import (
    CODE_EXECUTION,
    HIDDEN_INSTRUCTION,
    RENDER_ERROR,
    TemplateIssue,
)
from meshcert.certify.checks import applicable, register
from meshcert.certify.package_gguf.carriers import Carrier
from meshcert.certify.package_gguf.fragments import capped
from meshcert.certify.template_audits import template_audits, template_holders
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding, finding


@register("chat_templates", order=350, codes=[CODE_EXECUTION, RENDER_ERROR, HIDDEN_INSTRUCTION],
          runs_when=[applicable(lambda view: bool(template_holders(view)),
                                "no GGUF header carries a chat template")])
def check_chat_templates(view: PackageView) -> Iterator[Finding]:
    holders = template_holders(view)
    audits = template_audits(view, holders)  # template text -> its issues
    for (key, text, is_text), held_by in holders.items():
        first = held_by[0]
        others = f" (also in {len(held_by) - 1} other file(s))" if len(held_by) > 1 else ""
        if not is_text:
            yield finding(RENDER_ERROR, f"{first.path}: {key} is not a string but {text}"
                          f"{others}", path=first.path, layer_index=first.layer_index)
            continue
        yield from capped([_to_finding(issue, key, first, others) for issue in audits[text]])


def _to_finding(issue: TemplateIssue, key: str, carrier: Carrier, others: str) -> Finding:
    return finding(issue.code, f"{carrier.path}: {key}{issue.where()} {issue.message}{others}",
                   path=carrier.path, layer_index=carrier.layer_index)
