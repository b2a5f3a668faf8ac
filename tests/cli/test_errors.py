"""meshcert.cli.boundary.error_exit: any meshcert error becomes one stderr line and the exit
status of its kind, whatever its class."""

from __future__ import annotations

import pytest

from meshcert.catalog.errors import CatalogError
from meshcert.cli.boundary import error_exit
from meshcert.cli.exit_codes import Exit
from meshcert.core.errors import Refused
from meshcert.core.hub.errors import HubError
from meshcert.reports.loader import ReportLoadError


def test_a_refusal_says_refused_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    ending = error_exit(Refused("no Hugging Face token: set HF_TOKEN", code="usage"))
    assert ending.exit_code == Exit.USAGE
    assert capsys.readouterr() == ("", "refused: no Hugging Face token: set HF_TOKEN\n")


@pytest.mark.parametrize(("error", "status"), [
    (ReportLoadError("r.json: not JSON"), Exit.USAGE),
    (CatalogError("'x' is not a directory"), Exit.USAGE),
    (CatalogError("the catalog could not be read: 503", incomplete=True), Exit.INCOMPLETE),
    (HubError("hub_unreachable", "the Hub did not answer"), Exit.INCOMPLETE),
])
def test_any_other_error_says_error_and_exits_by_its_kind(
        error: Exception, status: Exit, capsys: pytest.CaptureFixture[str]) -> None:
    from meshcert.core.errors import MeshcertError

    assert isinstance(error, MeshcertError)
    ending = error_exit(error)
    assert ending.exit_code == status
    assert capsys.readouterr() == ("", f"error: {error}\n")
