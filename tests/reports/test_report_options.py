"""`report render`'s option rule, asked directly (no CLI)."""

from __future__ import annotations

import pytest

from meshcert.core.usage import OptionError
from meshcert.reports.report_options import check_render_outputs


def test_render_needs_some_format_to_write() -> None:
    with pytest.raises(OptionError) as caught:
        check_render_outputs({})
    assert caught.value.option == "--html / --md / --junit / --sarif"
    assert caught.value.message == "give at least one of --html, --md, --junit, --sarif"


@pytest.mark.parametrize("fmt", ["html", "md", "junit", "sarif"])
def test_any_one_format_is_enough(fmt: str) -> None:
    check_render_outputs({fmt: "out.file"})
