"""The rules of the report commands' options (`report render`, `report merge`): pure functions
of the option values that raise `OptionError` (meshcert.core.usage) naming the option at
fault, tested without the CLI. Option rules, not request objects (those live in a part's
`requests.py`): hence `report_options`, as `writer.write_options` and `certify.request_options`."""

from __future__ import annotations

from collections.abc import Mapping

from meshcert.core.usage import OptionError
from meshcert.reports.registry import report_options


def check_render_outputs(outputs: Mapping[str, str]) -> None:
    """`report render` writes something: at least one format's path (`outputs`: format ->
    path, the options given)."""
    if not outputs:
        flags = [option.flag for option in report_options().values()]
        raise OptionError(f"give at least one of {', '.join(flags)}", " / ".join(flags))
