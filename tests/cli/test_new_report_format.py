"""A new report format is one renderer module per report kind and one row of
meshcert/reports/registry.py, and no edit under meshcert/cli/: a throwaway `toy` format, put in
a temporary row with its renderer module in a temporary folder, is an option of every command
that writes reports (in its `--help`, beside --html) and a file each of them writes."""

from __future__ import annotations

from tests.support.hub_env import prepare_process_env

prepare_process_env()  # before anything imports huggingface_hub

import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
import typer.main  # noqa: E402
from typer.testing import CliRunner, Result  # noqa: E402

from meshcert.cli import app  # noqa: E402
from meshcert.reports import registry  # noqa: E402
from meshcert.reports.registry import Renderer, ReportFormat, ReportOption  # noqa: E402
from tests.cli.test_cli_help_text import commands  # noqa: E402
from tests.conftest import PackageFactory  # noqa: E402
from tests.support.catalog_packages import (  # noqa: E402
    CatalogFixture,
    build_test_catalog,
    package_ref,
    variant,
    write_entry,
)
from tests.support.hub_fixture import hub  # noqa: E402, F401
from tests.support.hub_server import FakeHub  # noqa: E402

TOY_HELP = "Write a toy report here (one line naming the report's kind)."

# the renderer module a contributor would add at meshcert/reports/<kind>/toy.py, one function
# per kind; here one module in a temporary folder renders all three
TOY_RENDERERS = '''
from meshcert.reports.registry import kind_of


def render_toy(report):
    return f"toy {kind_of(report)} report\\n"


def render_toy_catalog(report, link_prefix):
    return f"toy {kind_of(report)} report, links under {link_prefix or '.'}\\n"
'''


@pytest.fixture
def toy_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The `toy` row, for this test only; returns its flag."""
    folder = tmp_path / "renderers"
    folder.mkdir()
    (folder / "toy_renderers.py").write_text(TOY_RENDERERS)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, "toy_renderers", raising=False)  # imported afresh, and
    # forgotten after the test (monkeypatch puts back the absence)
    monkeypatch.setitem(registry.REPORT_FORMATS, "toy", ReportFormat({
        "certification": Renderer("toy_renderers:render_toy"),
        "evidence": Renderer("toy_renderers:render_toy"),
        "catalog": Renderer("toy_renderers:render_toy_catalog", links=True),
    }, ReportOption("--toy", TOY_HELP)))
    return "--toy"


def invoke(*args: str) -> Result:
    result = CliRunner().invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        result.output, result.exception)
    return result


def test_every_command_that_writes_reports_takes_the_new_format(toy_format: str) -> None:
    writers = [path.removeprefix("meshcert ").split()
               for path, command in commands(typer.main.get_command(app))
               if any("--html" in getattr(p, "opts", ()) for p in getattr(command, "params", ()))]
    assert len(writers) == 8  # models certify/inspect, package write, report render/merge,
    # evidence report/run, catalog certify
    for words in writers:
        shown = invoke(*words, "--help").output
        assert toy_format in shown and TOY_HELP.split(" (")[0] in shown, words
        assert shown.index("--sarif") < shown.index(toy_format), words  # in the rows' order


def test_the_new_format_is_written_by_each_kind_of_command(
        toy_format: str, tmp_path: Path, packages: PackageFactory,
        hub: FakeHub) -> None:  # noqa: F811
    from meshcert.evidence.examplegen import example_files

    package = packages.build("llama", layers=3)
    cert = invoke("models", "certify", str(package.root), "--package-only", "--quiet",
                  "--report-out", str(tmp_path / "cert.json"), toy_format,
                  str(tmp_path / "cert.toy"))
    assert cert.exit_code in (0, 1), cert.output
    assert (tmp_path / "cert.toy").read_text() == "toy certification report\n"

    rendered = invoke("report", "render", str(tmp_path / "cert.json"), toy_format,
                      str(tmp_path / "render.toy"))
    assert rendered.exit_code == 0, rendered.output
    assert f"toy: {tmp_path / 'render.toy'}" in rendered.output
    assert (tmp_path / "render.toy").read_text() == "toy certification report\n"

    evidence = invoke("evidence", "report", *map(str, example_files()), "--out-dir",
                      str(tmp_path / "evidence"), toy_format, str(tmp_path / "evidence.toy"))
    assert evidence.exit_code == 0, evidence.output
    assert (tmp_path / "evidence.toy").read_text() == "toy evidence report\n"

    catalog = _good_catalog(build_test_catalog(hub, tmp_path / "work"), tmp_path / "catalog")
    certified = invoke("catalog", "certify", str(catalog), "--quiet", toy_format,
                       str(tmp_path / "catalog.toy"))
    assert certified.exit_code == 0, certified.output
    assert (tmp_path / "catalog.toy").read_text() == "toy catalog report, links under .\n"


def test_report_render_names_the_new_option_when_none_is_given(toy_format: str,
                                                                tmp_path: Path) -> None:
    (tmp_path / "cert.json").write_text("{}")
    result = invoke("report", "render", str(tmp_path / "cert.json"))
    assert result.exit_code == 2
    assert "give at least one of --html, --md, --junit, --sarif, --toy" in result.output


def _good_catalog(catalog: CatalogFixture, root: Path) -> Path:
    write_entry(root, "meshcert/tiny-llama", {"F16": variant(
        package_ref("ns/good-v1", revision=catalog.shas["ns/good-v1"]), "ns/good-v2")})
    return root
