"""Render worker: runs in its own isolated interpreter, started by
`meshcert.certify.chat_template.render`.

Protocol: one JSON object on stdin ``{"template": str, "conversations": [{"name": str,
"contexts": [{...}, ...]}], "max_output": int, "memory_bytes": int, "cpu_seconds": int}``
(the contexts a real renderer may pass, tried in order: the first that renders is the
conversation's result); one JSON
object on stdout ``{"results": [{"name", "status", "output", "same", "error", "line",
"stubbed"}]}`` where status is ``ok``, ``refused`` (the template called raise_exception),
``blocked`` (the sandbox refused an operation), ``too_large`` (output over max_output) or
``error``, and ``stubbed`` names the caller-supplied variables that were missing.

With ``"audit": true`` (and ``"render": bool``) the worker runs the whole audit of
`meshcert.certify.chat_template.audit` itself -- the static walk, then (if allowed and safe) the
renders above, judged -- and replies ``{"issues": [{"code", "message", "line"}]}``: the certifier
then needs neither jinja2 nor a second process (`meshcert.certify.chat_template.isolated`).

Before reading anything it caps its own address space and CPU time (RLIMIT_AS, RLIMIT_CPU), so a
render that allocates in one C call or spins dies here, not in the certifier; the parent adds a
wall-clock timeout on top. It renders only through `meshcert.certify.chat_template.sandbox`
(jinja2's ImmutableSandboxedEnvironment), each conversation twice to compare the outputs.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from jinja2 import Template
from jinja2.exceptions import SecurityError

# imported before the request is read, so a prestarted worker has them warm
from meshcert.certify.chat_template.audit import audit_template
from meshcert.certify.chat_template.render import RenderLimits, RenderOutcome, outcome_from_reply
from meshcert.certify.chat_template.sandbox import (
    CHANCE,
    ResourceLimitError,
    TemplateRefusal,
    make_environment,
)

MAX_STUBS = 4
_UNDEFINED_NAME = re.compile(r"UndefinedError: '(\w+)' is undefined")


def _limit_resources(memory_bytes: int, cpu_seconds: int) -> None:
    try:
        import resource
    except ImportError:  # not POSIX: the parent's wall-clock timeout still applies
        return
    for limit, value in ((resource.RLIMIT_AS, memory_bytes), (resource.RLIMIT_CPU, cpu_seconds)):
        soft, hard = resource.getrlimit(limit)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(limit, (value, hard))


def _render_bounded(template: Template, context: dict[str, Any], max_output: int) -> str | None:
    """The rendered text, or None when it grows past max_output characters."""
    parts: list[str] = []
    size = 0
    for chunk in template.generate(**context):
        size += len(chunk)
        if size > max_output:
            return None
        parts.append(chunk)
    return "".join(parts)


def _error_line(exc: BaseException) -> int | None:
    line = getattr(exc, "lineno", None)
    if isinstance(line, int):
        return line
    tb = exc.__traceback__
    found: int | None = None
    while tb is not None:  # jinja2 maps template frames to "<template>" with template lines
        if tb.tb_frame.f_code.co_filename == "<template>":
            found = tb.tb_lineno
        tb = tb.tb_next
    return found


def render_one(template: Template, name: str, context: dict[str, Any],
               max_output: int) -> dict[str, Any]:
    """Render one conversation twice. A top-level variable the template needs but the canned
    context lacks (``functions``, ``datetime``: some servers pass model-specific extras) is
    stubbed as an empty string and the render retried, up to `MAX_STUBS` names; the stubbed
    names are reported."""
    stubs: list[str] = []
    while True:
        result = _render_once(template, name, context | dict.fromkeys(stubs, ""), max_output)
        missing = _UNDEFINED_NAME.fullmatch(str(result.get("error")))
        if result["status"] != "error" or missing is None or len(stubs) >= MAX_STUBS \
                or missing.group(1) in stubs or missing.group(1) in context:
            return result | {"stubbed": stubs}
        stubs.append(missing.group(1))


def _render_once(template: Template, name: str, context: dict[str, Any],
                 max_output: int) -> dict[str, Any]:
    result: dict[str, Any] = {"name": name, "status": "ok", "output": None, "same": True,
                              "error": None, "line": None}
    draws = CHANCE.draws
    try:
        first = _render_bounded(template, context, max_output)
        second = _render_bounded(template, context, max_output) if first is not None else None
    except TemplateRefusal as exc:
        return result | {"status": "refused", "error": str(exc)[:500]}
    except (ResourceLimitError, MemoryError) as exc:
        return result | {"status": "too_large", "line": _error_line(exc),
                         "error": str(exc)[:500] or "the worker's memory limit was reached"}
    except SecurityError as exc:
        return result | {"status": "blocked", "error": str(exc)[:500], "line": _error_line(exc)}
    except Exception as exc:  # noqa: BLE001 - anything a template raises
        return result | {"status": "error", "error": f"{type(exc).__name__}: {str(exc)[:500]}",
                         "line": _error_line(exc)}
    if first is None or second is None:
        return result | {"status": "too_large",
                         "error": f"output grew past {max_output} characters"}
    return result | {"output": first, "same": first == second and CHANCE.draws == draws}


def render_any(template: Template, name: str, contexts: list[dict[str, Any]],
               max_output: int) -> dict[str, Any]:
    """The conversation rendered with the first context that works (a real renderer would
    pass it); a sandbox refusal or an output over the limit is reported at once, never masked
    by a later context. When every context fails, the first one's result, naming the rest."""
    results: list[dict[str, Any]] = []
    for context in contexts:
        result = render_one(template, name, context, max_output)
        if result["status"] in ("ok", "blocked", "too_large"):
            return result
        results.append(result)
    first = results[0]
    if len(results) > 1 and first["status"] == "error":
        also = "; ".join(str(r["error"])[:200] for r in results[1:])
        first = first | {"error": f"{first['error']} (and with a sample tool list: {also})"}
    return first


def render_reply(source: str, conversations: list[dict[str, Any]],
                 max_output: int) -> dict[str, Any]:
    """Compile `source` in the sandbox and render every conversation: the render reply."""
    try:
        template = make_environment().from_string(source)
    except Exception as exc:  # noqa: BLE001 - a template that does not compile
        return {"compile_error": f"{type(exc).__name__}: {str(exc)[:500]}",
                "line": _error_line(exc), "results": []}
    return {"results": [render_any(template, c["name"], _contexts(c), max_output)
                        for c in conversations]}


def _contexts(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    contexts = conversation.get("contexts")
    if isinstance(contexts, list) and contexts:
        return [c for c in contexts if isinstance(c, dict)] or [{}]
    context = conversation.get("context")  # one context, as an older parent sends it
    return [context if isinstance(context, dict) else {}]


def audit_reply(request: dict[str, Any]) -> dict[str, Any]:
    """The whole audit, here: the static walk, then renders through `render_reply`."""

    def render_here(source: str, _limits: RenderLimits, _conversations: object) -> RenderOutcome:
        return outcome_from_reply(render_reply(source, request["conversations"],
                                               int(request["max_output"])))

    issues = audit_template(request["template"], render=bool(request.get("render", True)),
                            renderer=render_here)
    return {"issues": [issue.to_json() for issue in issues]}


def main() -> None:
    request = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    _limit_resources(int(request["memory_bytes"]), int(request["cpu_seconds"]))
    sys.setrecursionlimit(2000)
    if request.get("audit"):
        reply = audit_reply(request)
    else:
        reply = render_reply(request["template"], request["conversations"],
                             int(request["max_output"]))
    sys.stdout.buffer.write(json.dumps(reply).encode("utf-8"))


if __name__ == "__main__":
    main()
