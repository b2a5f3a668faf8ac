"""The HTML page every report's HTML renderer fills (`reports/<kind>/html.py`): one
self-contained file per report (inline CSS and SVG, no scripts, no URLs).

Templates live in the `meshcert.templates` package (jinja2, autoescape on, StrictUndefined) and
only lay out the view-models built in `reports/<kind>/view.py`.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import jinja2
from markupsafe import Markup

STYLESHEET = "report.css"


@cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("meshcert.templates", ""),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


@cache
def stylesheet() -> Markup:
    """The package's CSS, trusted (it is ours), checked not to close the <style> element."""
    # Read through the template loader (not importlib.resources): it copes with `meshcert.templates`
    # being a namespace package in some editable installs.
    env = environment()
    assert env.loader is not None
    css, _, _ = env.loader.get_source(env, STYLESHEET)
    if "</" in css:
        raise ValueError(f"{STYLESHEET} must not contain '</'")
    return Markup(css)


def render_page(template: str, **context: Any) -> str:
    """A report page from its template, with the stylesheet inlined."""
    from meshcert.core.version import __version__

    return environment().get_template(template).render(
        css=stylesheet(), generator=f"meshcert {__version__}", **context)
