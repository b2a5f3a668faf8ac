"""Chat-template audit: parse with jinja2, walk the tree for dangerous constructs, then render
only inside jinja2's ImmutableSandboxedEnvironment, in a separate, resource-capped process.

`audit_template(source)` returns `TemplateIssue`s whose codes are finding codes
(``chat_template_code_execution``, ``chat_template_render_error``,
``chat_template_hidden_instruction``). Nothing in this package renders a template outside the
sandbox, and nothing renders in the certifier's own process.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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

# Names are resolved on first use: importing the package (for example to prestart the render
# worker from `meshcert.certify.chat_template.render`) must not import jinja2.
_HOME = {"audit_template": "audit", "DEFAULT_RENDER_LIMITS": "render", "RenderLimits": "render",
         "CODE_EXECUTION": "issues", "HIDDEN_INSTRUCTION": "issues", "RENDER_ERROR": "issues",
         "TemplateIssue": "issues", "audit_isolated": "isolated"}


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = ["CODE_EXECUTION", "DEFAULT_RENDER_LIMITS", "HIDDEN_INSTRUCTION", "RENDER_ERROR",
           "RenderLimits", "TemplateIssue", "audit_isolated", "audit_template"]
