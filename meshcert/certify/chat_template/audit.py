"""Audit one chat template: static walk first, then a sandboxed render of canned conversations.

Rendering results are judged here, in the certifier: a conversation the template refuses with
``raise_exception`` is a deliberate choice (Gemma refuses a tool turn), but refusing every
conversation, failing with any other error, output over the size limit, output missing a
message's text, or different output for the same input is a render error. An operation the
sandbox blocked at run time is code execution, like the static findings.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from meshcert.certify.chat_template.conversations import CONVERSATIONS, Conversation
from meshcert.certify.chat_template.render import (
    DEFAULT_RENDER_LIMITS,
    RenderLimits,
    RenderOutcome,
    render_in_sandbox,
)
from meshcert.certify.chat_template.static import (
    CODE_EXECUTION,
    RENDER_ERROR,
    TemplateIssue,
    dangerous_constructs,
    hidden_instructions,
    parse,
)

MAX_TEMPLATE_CHARS = 1 << 20  # real templates are a few KiB; the largest known ~40 KiB
# The immutable sandbox refuses list/dict mutation (`list.append`): a template that needs it
# does not render in a sandbox, but that is not an escape attempt.
_MUTATION = re.compile(r"access to attribute '(append|extend|insert|pop|remove|clear|update|"
                       r"setdefault|popitem|add|discard|sort|reverse)' of '(list|dict|set|deque)' "
                       r"object is unsafe")


Renderer = Callable[[str, RenderLimits, tuple[Conversation, ...]], RenderOutcome]


def audit_template(source: str, limits: RenderLimits = DEFAULT_RENDER_LIMITS, *,
                   render: bool = True, renderer: Renderer = render_in_sandbox
                   ) -> list[TemplateIssue]:
    """Every issue with `source`; empty means it parsed, looked safe and rendered correctly.

    A template with dangerous constructs is not rendered at all (the sandbox would contain it,
    but there is nothing left to learn), nor is one that does not parse. With ``render=False``
    only the static audit runs (a caller out of render budget); the result then says so.
    `renderer` renders in the sandbox: a worker process by default; the worker itself passes
    its own in-process render (`meshcert.certify.chat_template.isolated` runs this whole audit
    there).
    """
    issues, renderable = static_audit(source)
    if not renderable:
        return issues
    if not render:
        return [*issues, TemplateIssue(RENDER_ERROR, "was not rendered: the package carries "
                                       "more distinct templates than an audit renders")]
    outcome = renderer(source, limits, CONVERSATIONS)
    return issues + judge_render(outcome, CONVERSATIONS)


def static_audit(source: str) -> tuple[list[TemplateIssue], bool]:
    """The issues the syntax tree alone shows, and whether the template may be rendered
    (it parsed and has no dangerous construct)."""
    if len(source) > MAX_TEMPLATE_CHARS:
        return [TemplateIssue(RENDER_ERROR, f"is {len(source)} characters long, over the "
                              f"{MAX_TEMPLATE_CHARS} an auditor accepts")], False
    tree = parse(source)
    if isinstance(tree, TemplateIssue):
        return [tree], False
    try:
        dangers = dangerous_constructs(source, tree)
        issues = [] if dangers else hidden_instructions(tree)
    except RecursionError:  # the parser coped, the tree walk did not: never a crash
        return [TemplateIssue(RENDER_ERROR, "is nested too deeply to audit")], False
    if dangers:
        return dangers, False
    return issues, True


def judge_render(outcome: RenderOutcome, conversations: tuple[Conversation, ...]
                 ) -> list[TemplateIssue]:
    """Turn the worker's per-conversation results into issues (one per distinct problem,
    naming the conversations it hit)."""
    if outcome.failure is not None:
        return [TemplateIssue(RENDER_ERROR, outcome.failure, outcome.line)]
    by_name = {c.name: c for c in conversations}
    problems: dict[tuple[str, str, int | None], list[str]] = {}
    refused: dict[str, str] = {}  # conversation name -> the template's refusal message
    missing: list[TemplateIssue] = []
    for result in outcome.results:
        name = str(result.get("name"))
        conversation = by_name.get(name)
        required = conversation is None or conversation.required
        status, error = result.get("status"), str(result.get("error"))
        line = result.get("line") if isinstance(result.get("line"), int) else None
        if status == "blocked" and _MUTATION.search(error):
            status = "error"
        problem: tuple[str, str] | None = None
        if status == "refused":
            refused[name] = error
        elif status == "blocked":
            problem = (CODE_EXECUTION, f"hit an operation the sandbox refused: {error}")
        elif status == "too_large":
            problem = (RENDER_ERROR, f"renders too much: {error}")
        elif status != "ok":
            problem = (RENDER_ERROR, f"does not render: {error}") if required else None
        elif not result.get("same"):
            problem = (RENDER_ERROR, "renders differently each time, or draws on chance "
                       "(jinja2's random filter): the output must be reproducible")
        elif conversation is not None and required:
            missing += _missing_texts(name, str(result.get("output")), conversation)
        if problem is not None:
            problems.setdefault((*problem, line), []).append(name)
    issues = [TemplateIssue(code, f"{text} (conversation{'s' if len(names) > 1 else ''} "
                            f"{', '.join(names)})", line)
              for (code, text, line), names in problems.items()]
    required_names = {c.name for c in conversations if c.required}
    if required_names and required_names <= refused.keys():
        issues.append(TemplateIssue(RENDER_ERROR, "refuses every required conversation: "
                                    + "; ".join(f"{k} ({v})" for k, v in refused.items())))
    return issues + missing


def _missing_texts(name: str, output: str, conversation: Conversation) -> list[TemplateIssue]:
    return [TemplateIssue(RENDER_ERROR, f"renders the {name} conversation without the text of "
                          f"message {index} ({role}): {text!r}")
            for index, role, text in conversation.texts() if text not in output]
