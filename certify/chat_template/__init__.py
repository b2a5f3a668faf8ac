"""Chat-template audit: parse with jinja2, walk the tree for dangerous constructs, then render
only inside jinja2's ImmutableSandboxedEnvironment, in a separate, resource-capped process.

`audit_template(source)` returns `TemplateIssue`s whose codes are finding codes
(``chat_template_code_execution``, ``chat_template_render_error``,
``chat_template_hidden_instruction``). Nothing in this package renders a template outside the
sandbox, and nothing renders in the certifier's own process.
"""

from certify.chat_template.audit import audit_template
from certify.chat_template.render import DEFAULT_RENDER_LIMITS, RenderLimits
from certify.chat_template.static import (
    CODE_EXECUTION,
    HIDDEN_INSTRUCTION,
    RENDER_ERROR,
    TemplateIssue,
)

__all__ = ["CODE_EXECUTION", "DEFAULT_RENDER_LIMITS", "HIDDEN_INSTRUCTION", "RENDER_ERROR",
           "RenderLimits", "TemplateIssue", "audit_template"]
