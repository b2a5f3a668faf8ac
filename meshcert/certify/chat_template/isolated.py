"""The whole audit of one template in the sandboxed worker process (static walk and renders).

The certifier's own process then imports neither jinja2 nor the static walk (about 20 ms of a
`meshcert models certify`), and the walk of an untrusted tree runs under the worker's limits
too. When the worker gives no audit (a crash, a timeout, an unreadable reply), the static
audit runs here and the failure is reported as the render's outcome, so no finding is lost.
"""

from __future__ import annotations

from meshcert.certify.chat_template.conversations import CONVERSATIONS
from meshcert.certify.chat_template.issues import TemplateIssue
from meshcert.certify.chat_template.render import (
    DEFAULT_RENDER_LIMITS,
    RenderLimits,
    RenderOutcome,
    exchange,
    worker_request,
)


def audit_isolated(source: str, limits: RenderLimits = DEFAULT_RENDER_LIMITS, *,
                   render: bool = True) -> list[TemplateIssue]:
    """`audit_template(source, limits, render=render)`, run in the worker."""
    request = worker_request(source, limits, CONVERSATIONS) | {"audit": True, "render": render}
    reply = exchange(request, limits)
    failure = reply if isinstance(reply, str) else None
    if isinstance(reply, dict):
        issues = _issues(reply)
        if issues is not None:
            return issues
        failure = "the render worker sent an unreadable reply"
    from meshcert.certify.chat_template.audit import audit_template  # jinja2, only on this path

    return audit_template(source, limits, render=render,
                          renderer=lambda *_: RenderOutcome(failure=failure))


def _issues(reply: dict[str, object]) -> list[TemplateIssue] | None:
    items = reply.get("issues")
    if not isinstance(items, list):
        return None
    issues = [TemplateIssue.from_json(item) for item in items]
    return None if any(issue is None for issue in issues) else [i for i in issues if i]
