"""Chat-template audit: parse with jinja2, walk the tree for dangerous constructs, then render
only inside jinja2's ImmutableSandboxedEnvironment, in a separate, resource-capped process.

`audit_template(source)` returns `TemplateIssue`s whose codes are finding codes
(``chat_template_code_execution``, ``chat_template_render_error``,
``chat_template_hidden_instruction``). Nothing in this package renders a template outside the
sandbox, and nothing renders in the certifier's own process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from meshcert.core.lazy import lazy_exports

if TYPE_CHECKING:
    from meshcert.certify.chat_template.audit import audit_template
    from meshcert.certify.chat_template.isolated import audit_isolated
    from meshcert.certify.chat_template.issues import (
        CODE_EXECUTION,
        HIDDEN_INSTRUCTION,
        RENDER_ERROR,
        TemplateIssue,
    )
    from meshcert.certify.chat_template.render import DEFAULT_RENDER_LIMITS, RenderLimits

# Importing the package (for example to prestart the render worker from
# `meshcert.certify.chat_template.render`) must not import jinja2.
__getattr__ = lazy_exports(__name__, {
    "audit": ("audit_template",),
    "isolated": ("audit_isolated",),
    "issues": ("CODE_EXECUTION", "HIDDEN_INSTRUCTION", "RENDER_ERROR", "TemplateIssue"),
    "render": ("DEFAULT_RENDER_LIMITS", "RenderLimits"),
})


__all__ = ["CODE_EXECUTION", "DEFAULT_RENDER_LIMITS", "HIDDEN_INSTRUCTION", "RENDER_ERROR",
           "RenderLimits", "TemplateIssue", "audit_isolated", "audit_template"]
