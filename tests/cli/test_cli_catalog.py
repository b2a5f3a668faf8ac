"""`meshcert catalog certify CATALOG`: exit statuses, the files it writes, progress on
stderr, clean --json/--quiet, and bad input as a clear error (never a traceback)."""

from __future__ import annotations

from tests.support.hub_env import prepare_process_env

prepare_process_env()  # before anything imports huggingface_hub

import json  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from typer.testing import CliRunner, Result  # noqa: E402

from meshcert.cli import GROUPS, app  # noqa: E402
from tests.support.catalog_packages import (  # noqa: E402
    RUNTIME_ABI,
    CatalogFixture,
    build_test_catalog,
    package_ref,
    variant,
    write_entry,
)
from tests.support.hub_fixture import hub  # noqa: E402, F401
from tests.support.hub_server import FakeHub  # noqa: E402


@pytest.fixture
def catalog(hub: FakeHub, tmp_path: Path) -> CatalogFixture:  # noqa: F811
    return build_test_catalog(hub, tmp_path / "work")


@pytest.fixture
def good_catalog(catalog: CatalogFixture, tmp_path: Path) -> Path:
    root = tmp_path / "good"
    write_entry(root, "meshcert/tiny-llama", {"F16": variant(
        package_ref("ns/good-v1", revision=catalog.shas["ns/good-v1"]), "ns/good-v2")})
    return root


def invoke(*args: str) -> Result:
    result = CliRunner().invoke(app, ["catalog", "certify", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), (
        result.output, result.exception)
    assert "Traceback" not in result.output + result.stderr
    return result


def test_the_command_is_registered() -> None:
    assert "catalog" in GROUPS
    result = CliRunner().invoke(app, ["catalog", "certify", "--help"])
    assert result.exit_code == 0
    for flag in ("--concurrency", "--runtime-abi", "--strict", "--verify-sha256", "--out-dir",
                 "--since", "--write-pins", "--json", "--quiet", "--html", "--md", "--junit",
                 "--sarif"):
        assert flag in result.output, flag


def test_no_catalog_is_a_usage_error_naming_the_argument_before_any_request() -> None:
    """Nothing goes to the network unless named: without the argument, exit 2 at once (it
    once read mesh-llm's catalog by default: 20 s of retries offline, then a failure)."""
    result = CliRunner().invoke(app, ["catalog", "certify"], env={"HF_ENDPOINT": ""})
    assert result.exit_code == 2
    assert "Missing argument 'catalog'" in result.output
    help_text = CliRunner().invoke(app, ["catalog", "certify", "--help"]).output
    assert "hf://datasets/meshllm/catalog" in help_text


def test_a_failing_catalog_exits_1_and_writes_every_report(catalog: CatalogFixture,
                                                            tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = invoke(str(catalog.root), "--runtime-abi", RUNTIME_ABI, "--out-dir", str(out),
                    "--md", str(tmp_path / "summary.md"), "--junit", str(tmp_path / "j.xml"))
    assert result.exit_code == 1
    report = json.loads((out / "catalog.json").read_text())
    assert report["status"] == "failed" and len(report["packages"]) == 15
    for row in report["packages"]:
        if row["cert_json"] is not None:
            cert = json.loads((out / row["cert_json"]).read_text())
            assert cert["resolved_package_ref"] == f"hf://{row['repo']}@{row['revision']}"
            assert (out / row["cert_html"]).is_file()
    assert (out / "catalog.html").is_file() and (tmp_path / "j.xml").is_file()
    assert (tmp_path / "summary.md").read_text().startswith("## \u274c Catalog failed")
    lines = result.stdout.splitlines()
    assert lines[0].startswith("FAILED: 15 package(s) in ")
    assert "5 passed, 10 failed, 0 incomplete" in lines[0]
    assert any(line.split() [:2] == ["failed", "entries/meshcert/tiny-llama.json"]
               and "hf://ns/gated@" in line and "hub_gated" in line for line in lines)
    assert any("catalog_entry_invalid: entries/broken/model.json" in line for line in lines)
    progress = result.stderr.splitlines()
    assert progress[0] == "certifying 14 package(s)"
    assert [p.split("]")[0] for p in progress[1:]] == [f"[{i}/14" for i in range(1, 15)]
    assert progress[-1].endswith("s)") and "done in" in progress[-1]
    assert all("eta" in p for p in progress[1:-1])
    # the package's own verdict, before the catalog's findings (the row fails on its entry)
    assert any(p.startswith("[") and "hf://ns/wrong-bytes@" in p and ": package passed (" in p
               for p in progress)


def test_an_all_good_catalog_exits_0(good_catalog: Path) -> None:
    result = invoke(str(good_catalog), "--runtime-abi", RUNTIME_ABI)
    assert result.exit_code == 0
    assert result.stdout.startswith("PASSED: 2 package(s)")


def test_a_hub_failing_for_some_exits_3(hub: FakeHub, good_catalog: Path) -> None:  # noqa: F811
    hub.inject("model_info", 503, times=None, path_contains="/ns/good-v2")
    result = invoke(str(good_catalog), "--quiet")
    assert result.exit_code == 3
    assert result.stdout == ""


def test_json_is_the_report_alone(good_catalog: Path) -> None:
    result = invoke(str(good_catalog), "--json")
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    assert report["kind"] == "meshcert-catalog-report"
    assert result.stderr == ""


def test_write_pins_writes_the_entries_beside_the_catalog(good_catalog: Path,
                                                          tmp_path: Path) -> None:
    entry = good_catalog / "entries/meshcert/tiny-llama.json"
    before = entry.read_text()
    result = invoke(str(good_catalog), "--write-pins", str(tmp_path / "pins"))
    assert result.exit_code == 0
    assert entry.read_text() == before  # the catalog itself is untouched
    pinned = json.loads((tmp_path / "pins/entries/meshcert/tiny-llama.json").read_text())
    refs = pinned["variants"]["F16"]["packages"]
    assert all(len(r["revision"]) == 40 for r in refs)
    assert "pins: 1 reference(s) pinned in 1 entry under" in result.stdout
    inside = invoke(str(good_catalog), "--write-pins", str(good_catalog / "pins"))
    assert inside.exit_code == 2 and "inside the catalog checkout" in inside.stderr


def test_since_reuses_the_unchanged_packages(good_catalog: Path, tmp_path: Path) -> None:
    first = tmp_path / "first"
    assert invoke(str(good_catalog), "--out-dir", str(first), "-q").exit_code == 0
    second = tmp_path / "second"
    result = invoke(str(good_catalog), "--out-dir", str(second), "--since",
                    str(first / "catalog.json"))
    assert result.exit_code == 0
    assert "since " in result.stdout and "0 new, 0 with a new commit, 2 unchanged" in result.stdout
    report = json.loads((second / "catalog.json").read_text())
    assert [r["change"] for r in report["packages"]] == ["unchanged", "unchanged"]
    for row in report["packages"]:  # the re-used reports were copied over
        assert (second / row["cert_json"]).read_text() == (first / row["cert_json"]).read_text()
    assert report["packages"][0]["requests"] == 0  # pinned and unchanged: no request at all


@pytest.mark.parametrize(("args", "message"), [
    (["/no/such/catalog"], "is not a directory"),
    (["hf://meshllm/catalog"], "a catalog on the Hub is a dataset repo"),
    (["ftp://x/y"], "give hf://datasets/ns/name[@revision] or a local checkout"),
    (["{catalog}", "--since", "/no/such/report.json"], "cannot be read"),
])
def test_bad_input_is_a_clear_error(good_catalog: Path, args: list[str], message: str) -> None:
    result = invoke(*[a.replace("{catalog}", str(good_catalog)) for a in args])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and message in result.stderr


@pytest.mark.parametrize(("args", "hint"), [
    (["--concurrency", "0"], "--concurrency"), (["--concurrency", "33"], "--concurrency"),
    (["--runtime-abi", "latest"], "--runtime-abi")])
def test_bad_options_are_usage_errors(good_catalog: Path, args: list[str], hint: str) -> None:
    result = invoke(str(good_catalog), *args)
    assert result.exit_code == 2 and hint in result.stderr


def test_a_catalog_without_entries_folder_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke(str(tmp_path))
    assert result.exit_code == 2 and "has no entries/ folder" in result.stderr


def test_the_catalog_dataset_on_the_hub(hub: FakeHub, catalog: CatalogFixture,  # noqa: F811
                                        tmp_path: Path) -> None:
    """`meshcert catalog certify hf://datasets/ns/catalog` over the test catalog."""
    from tests.support.catalog_packages import catalog_files

    sha = hub.commit("ns/catalog", catalog_files(catalog.root), repo_type="dataset")
    hub.reset_counters()
    out = tmp_path / "out"
    result = invoke("hf://datasets/ns/catalog", "--runtime-abi", RUNTIME_ABI, "--out-dir",
                    str(out), "--quiet")
    assert result.exit_code == 1
    report = json.loads((out / "catalog.json").read_text())
    assert report["catalog"] | {"input": None} == {
        "input": None, "kind": "hf", "location": "ns/catalog", "revision": sha,
        "requested_revision": None, "entry_files": 3}
    assert [r["status"] for r in report["packages"]].count("passed") == 5
    packages = sum(r["requests"] for r in report["packages"])
    # reading the catalog: dataset_info, the tree under entries/, then each of the 3 entry
    # files (a HEAD and a GET); every other request is a package's
    assert hub.count() - packages == 2 + 2 * 3


def test_sarif_holds_a_result_per_catalog_finding_and_package_code(
        catalog: CatalogFixture, tmp_path: Path) -> None:
    sarif_path = tmp_path / "catalog.sarif"
    result = invoke(str(catalog.root), "--runtime-abi", RUNTIME_ABI, "--sarif", str(sarif_path),
                    "--quiet")
    assert result.exit_code == 1 and result.stdout == ""
    doc = json.loads(sarif_path.read_text())
    assert doc["version"] == "2.1.0"
    [run] = doc["runs"]
    assert run["properties"]["status"] == "failed"
    results = run["results"]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert rules == sorted({r["ruleId"] for r in results})
    [entry_invalid] = [r for r in results if r["ruleId"] == "catalog_entry_invalid"]
    assert entry_invalid["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == \
        "entries/broken/model.json"
    gated = [r for r in results if r["ruleId"] == "hub_gated"]
    assert gated and all(r["properties"]["repo"] == "ns/gated" for r in gated)
    assert all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
               == "entries/meshcert/tiny-llama.json" for r in gated)
