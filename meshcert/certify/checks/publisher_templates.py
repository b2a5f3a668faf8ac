"""Chat templates in publisher files, beyond mesh-llm: `metadata/chat_template.jinja` and
`metadata/tokenizer_config.json`'s `chat_template` (a string, or a list of {name, template}) are
what a node may render, so they get the same sandboxed audit as the GGUF headers' templates
(`meshcert.certify.chat_template`: static walk, then a render in a resource-capped worker), with the
same codes and the publisher file's path.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from meshcert.certify.chat_template.issues import (
    CODE_EXECUTION,
    HIDDEN_INSTRUCTION,
    RENDER_ERROR,
    TemplateIssue,
)
from meshcert.certify.checks import applicable, register
from meshcert.certify.formats.publisher_json import JsonProblem, decode_text
from meshcert.certify.package_gguf.fragments import capped
from meshcert.certify.publisher_view import publisher_docs
from meshcert.certify.template_audits import TEMPLATE_AUDITS_KEY, audit_texts
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding, finding

MAX_TEMPLATES = 16  # per package; real tokenizer configs carry one to three


@dataclass(frozen=True)
class PublisherTemplate:
    path: str
    where: str  # the template's place in the file ("" for a whole .jinja file)
    text: str | None  # None: not a string (`problem` says what it is)
    problem: str | None = None


def publisher_templates(view: PackageView) -> list[PublisherTemplate]:
    out: list[PublisherTemplate] = []
    for doc in publisher_docs(view):
        data = doc.text()
        if data is None:
            continue
        if doc.role == "chat_template":
            text = decode_text(data)
            if not isinstance(text, JsonProblem):  # not UTF-8: publisher_json reports it
                out.append(PublisherTemplate(doc.path, "", text))
        elif doc.role == "tokenizer_config":
            config = doc.json()
            if isinstance(config, dict) and "chat_template" in config:
                out.extend(_tokenizer_templates(doc.path, config["chat_template"]))
    return out


def _tokenizer_templates(path: str, value: object) -> list[PublisherTemplate]:
    if isinstance(value, str):
        return [PublisherTemplate(path, "/chat_template", value)]
    if value is None:
        return []
    if not isinstance(value, list):
        return [PublisherTemplate(path, "/chat_template", None,
                                  f"is a JSON {type(value).__name__}, not a string or a list "
                                  "of {name, template}")]
    out: list[PublisherTemplate] = []
    for i, item in enumerate(value):
        where = f"/chat_template/{i}"
        template = item.get("template") if isinstance(item, dict) else None
        if isinstance(template, str):
            name = item.get("name")
            label = f"{where}/template" + (f" ({name!r})" if isinstance(name, str) else "")
            out.append(PublisherTemplate(path, label, template))
        else:
            out.append(PublisherTemplate(path, where, None,
                                         "is not a {name, template} object with a string "
                                         "template"))
    return out


@register("publisher_chat_templates", order=423, formats=("v2",),
          codes=[CODE_EXECUTION, RENDER_ERROR, HIDDEN_INSTRUCTION], runs_when=[applicable(
              lambda view: bool(publisher_templates(view)),
              "no publisher file holds a chat template")])
def check_publisher_templates(view: PackageView) -> Iterator[Finding]:
    templates = publisher_templates(view)
    if len(templates) > MAX_TEMPLATES:  # each audit costs a worker: a hostile list stays cheap
        rest = templates[MAX_TEMPLATES:]
        yield finding(RENDER_ERROR, f"{rest[0].path}: {len(rest)} more chat template(s) after "
                      f"the first {MAX_TEMPLATES} were not audited", path=rest[0].path)
        templates = templates[:MAX_TEMPLATES]
    # the GGUF headers' audits, when attached: the tokenizer_config copy is usually the same
    attached = view.source_facts.get(TEMPLATE_AUDITS_KEY)
    known: dict[str, list[TemplateIssue]] = attached if isinstance(attached, dict) else {}
    audits = dict(known) | audit_texts([t.text for t in templates
                                        if t.text is not None and t.text not in known])
    for template in templates:
        if template.text is None:
            yield finding(RENDER_ERROR, f"{template.path}: {template.where} {template.problem}",
                          path=template.path)
            continue
        yield from capped([_to_finding(issue, template) for issue in audits[template.text]])


def _to_finding(issue: TemplateIssue, template: PublisherTemplate) -> Finding:
    place = f" {template.where}" if template.where else ""
    return finding(issue.code, f"{template.path}:{place}{issue.where()} {issue.message}",
                   path=template.path)
