"""The rules of the report commands' options (`report render`, `report merge`): pure functions
of the option values that raise `OptionError` (meshcert.core.usage) naming the option at
fault, tested without the CLI. Option rules, not request objects (those live in a part's
`requests.py`): hence `report_options`, as `writer.write_options` and `certify.request_options`."""

from __future__ import annotations

from meshcert.core.usage import OptionError

FORMAT_OPTIONS = "--html / --md / --junit / --sarif"


def check_render_outputs(html: str | None, md: str | None, junit: str | None,
                         sarif: str | None) -> None:
    """`report render` writes something: at least one format's path."""
    if html is None and md is None and junit is None and sarif is None:
        raise OptionError("give at least one of --html, --md, --junit, --sarif", FORMAT_OPTIONS)
