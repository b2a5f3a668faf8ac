"""One result, one verdict (issue 34): the console's last line, cert.json, the HTML page, the
Markdown summary, JUnit, SARIF and the exit status state the same status, the same counts and
the same skipped checks, for a result whose runtime gates failed (one required, one
warning-level), a package-only result with skipped checks, one whose trust policy failed it,
and an incomplete one.

The counts are derived here from cert.json alone: its findings by severity, a failed
warning-level runtime gate counted as a warning, its checks run and skipped.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from meshcert.attest.policy_check import trust_gate
from meshcert.attest.trust import TrustPolicy
from meshcert.certify.checks import Check, all_checks
from meshcert.certify.engine import build_report, utc_now
from meshcert.certify.report import CertReport
from meshcert.certify.service import CertRequest, RuntimeRequest, certify_package
from meshcert.certify.sources.local import load_local_package
from meshcert.certify.view import CertOptions, PackageView
from meshcert.cli.cert_console import plain_text, render_lines
from meshcert.cli.exit_codes import EXIT_CODES
from meshcert.core.findings import Finding
from meshcert.reports.certification.html import render_cert_html
from meshcert.reports.certification.junit import render_cert_junit
from meshcert.reports.certification.markdown import render_cert_markdown
from meshcert.reports.certification.sarif import build_sarif
from tests.conftest import PackageFactory, certify_dir
from tests.reports.dom import parse
from tests.support.fake_openai import FakeOpenAI

VERDICT = re.compile(r"^certification (passed|failed|incomplete)(?: \((.+?)\))?: (\d+) "
                     r"errors?, (\d+) warnings?, (\d+) notes?; (\d+) checks? run, (\d+) "
                     r"skipped; (.+)$")


@dataclass(frozen=True)
class Said:
    """What one format says: status, errors, warnings, notes, checks run, skipped, gates, and
    the coverage it qualifies the status with ("" when the run verified all it states)."""

    status: str
    counts: tuple[int, int, int, int, int]
    gates: str
    coverage: str = ""

    @classmethod
    def of(cls, sentence: str) -> Said:
        match = VERDICT.match(sentence)
        assert match, sentence
        numbers = tuple(int(n) for n in match.groups()[2:7])
        return cls(match[1], numbers, match[8], match[2] or "")  # type: ignore[arg-type]


def from_json(text: str) -> tuple[str, tuple[int, int, int, int, int], set[str]]:
    data = json.loads(text)
    severities = [f["severity"] for f in data["findings"]]
    failed_warning_gates = sum(g["severity"] == "warning" and g["status"] == "failed"
                               for g in data["runtime_gates"])
    skipped = {c["name"] for c in data["checks"] if c["status"] == "skipped"}
    assert all(c["details"] for c in data["checks"] if c["status"] == "skipped")
    counts = (severities.count("error"), severities.count("warning") + failed_warning_gates,
              severities.count("info"), len(data["checks"]) - len(skipped), len(skipped))
    return data["status"], counts, skipped


def console_says(report: CertReport) -> tuple[Said, str]:
    lines = plain_text(render_lines(report, "cert.json", 100)).splitlines()
    said = Said.of(lines[-1])
    coverage = [x for x in lines if x.startswith("Partial coverage: ")]
    assert coverage == ([f"Partial coverage: {said.coverage}"] if said.coverage else [])
    headings = dict(re.findall(r"^(errors|skipped checks) \((\d+)\)$", "\n".join(lines), re.M))
    assert int(headings.get("errors", 0)) == said.counts[0]
    assert int(headings.get("skipped checks", 0)) == said.counts[4]
    return said, lines[0]


def html_says(report: CertReport) -> tuple[Said, str, set[str]]:
    root = parse(render_cert_html(report))
    banner = root.find("header", cls="banner")
    line = root.find("p", cls="verdict-line").text()
    said = Said.of(line)
    title = root.find("title").text()
    assert title.startswith(f"Certification {said.status}"
                            + (f" ({said.coverage})" if said.coverage else "") + ":"), title
    notes = [n.text() for n in root.find_all("p", cls="coverage-note")]
    assert notes == ([f"Partial coverage: {said.coverage}"] if said.coverage else []), notes
    skipped = {row.attrs["data-check"] or "" for row in root.find_all("tr")
               if row.attrs.get("data-check") and "badge-skipped" in {
                   c for n in row.find_all("span") for c in n.classes}}
    return Said.of(line), banner.attrs["data-status"] or "", skipped


def markdown_says(report: CertReport) -> tuple[Said, set[str]]:
    text = render_cert_markdown(report)
    line = next(x for x in text.splitlines() if x.startswith("**Verdict:** "))
    plain = line.removeprefix("**Verdict:** ").replace("\\", "")
    headline = text.splitlines()[0].replace("\\", "")
    said = Said.of(plain)
    assert f"Certification {said.status}" + (f" ({said.coverage})" if said.coverage else "") \
        + ": " in headline, headline
    skipped = re.findall(r"^\| <code>([\w\\]+)</code> \| \u2796 skipped \|", text, re.M)
    return Said.of(plain), {name.replace("\\", "") for name in skipped}


def junit_says(report: CertReport) -> tuple[Said, ET.Element, set[str]]:
    root = ET.fromstring(render_cert_junit(report))
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    said = Said.of(props["verdict"] or "")
    numbers = tuple(int(props[k] or -1) for k in ("errors", "warnings", "notes", "checks_run",
                                                  "checks_skipped"))
    assert numbers == said.counts
    assert props.get("coverage", "") == said.coverage
    # JUnit's own counts are the verdict's: failures + errors its error findings and the gates
    # it counts beside them, skipped its skipped checks (issue 41 item 9)
    for element in (root, *root.iter("testsuite")):
        assert int(element.get("skipped", "-1")) == (
            said.counts[4] if element is root or element.get("name", "").endswith("checks")
            else 0), element.get("name")
    failing = int(root.get("failures", "-1")) + int(root.get("errors", "-1"))
    assert failing == said.counts[0] + int(props["failed_gates"] or -1)
    skipped = {c.get("name") or "" for c in root.iter("testcase")
               if c.get("classname") == "meshcert.certify.checks"
               and c.find("skipped") is not None}
    return said, root, skipped


def sarif_says(report: CertReport) -> tuple[Said, bool, set[str]]:
    run = build_sarif(report)["runs"][0]
    props = run["properties"]
    said = Said.of(props["verdict"])
    assert (props["errors"], props["warnings"], props["notes"], props["checks_run"],
            props["checks_skipped"]) == said.counts
    assert props["status"] == said.status
    assert "; ".join(props["coverage"]) == said.coverage
    levels = [r["level"] for r in run["results"]]  # as the verdict counts them
    assert (levels.count("error"), levels.count("warning"), levels.count("note")) == (
        said.counts[0] + props["failed_gates"], said.counts[1], said.counts[2])
    notes = run["invocations"][0]["toolExecutionNotifications"]
    return said, run["invocations"][0]["executionSuccessful"], {
        n["descriptor"]["id"] for n in notes}


def assert_one_verdict(report: CertReport) -> Said:
    status, counts, skipped = from_json(report.to_json())
    console, first_line = console_says(report)
    html, html_status, html_skipped = html_says(report)
    markdown, md_skipped = markdown_says(report)
    junit, junit_root, junit_skipped = junit_says(report)
    sarif, execution_successful, sarif_skipped = sarif_says(report)
    assert console == html == markdown == junit == sarif
    assert (console.status, console.counts) == (status, counts)
    assert first_line == f"Skippy package certification: {status}"  # mesh-llm's, kept
    assert html_status == status
    assert skipped == html_skipped == md_skipped == junit_skipped == sarif_skipped
    # JUnit's outcomes and SARIF's success agree with the status, and so does the exit status
    failures, errors = int(junit_root.get("failures", "-1")), int(junit_root.get("errors", "-1"))
    assert (failures > 0) == (status == "failed")
    assert (status == "incomplete") <= (errors > 0)
    assert execution_successful == (status != "incomplete")
    assert EXIT_CODES[status] == {"passed": 0, "failed": 1, "incomplete": 3}[status]
    return console


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI(faults=["responses_404", "nondeterministic"]).start()
    yield server
    server.stop()


def test_a_failed_runtime_gate_is_named_and_a_failed_warning_gate_counted(
        packages: PackageFactory, fake: FakeOpenAI) -> None:
    info = packages.build("llama")
    report = certify_package(CertRequest(model=str(info.root), runtime=RuntimeRequest(
        api_base=fake.base_url, model_id=fake.model_id, timeout_s=5)))
    assert report.package_gate.status == "passed" and report.status == "failed"
    failed_warning = [g for g in report.runtime_gates
                      if g.severity == "warning" and g.status == "failed"]
    assert failed_warning  # the nondeterministic answers
    said = assert_one_verdict(report)
    assert said.counts[1] == sum(f.severity == "warning" for f in report.findings) \
        + len(failed_warning)
    assert "package gate passed" in said.gates
    assert "runtime gate v1_responses failed" in said.gates.split("; ")
    assert f"runtime gate {failed_warning[0].name} (warning) failed" in said.gates


def test_a_package_only_run_says_what_it_skipped(packages: PackageFactory) -> None:
    report = certify_dir(packages.build("llama").root)
    said = assert_one_verdict(report)
    assert said.status == "passed" and said.counts[4] > 0
    assert said.gates == "package gate passed"


def test_a_trust_policy_that_fails_the_package_is_named(packages: PackageFactory) -> None:
    """--trust in mode enforce, and the package has no attestation."""
    info = packages.build("llama")
    report = certify_package(CertRequest(
        model=str(info.root), extra_findings=trust_gate(TrustPolicy(mode="enforce"))))
    said = assert_one_verdict(report)
    assert said.status == "failed"
    assert said.gates == "package gate failed; attestation policy failed"
    case = next(c for c in ET.fromstring(render_cert_junit(report)).iter("testcase")
                if c.get("name") == "attestation_policy")  # its findings are not lost
    assert case.find("failure") is not None


def _boom(view: PackageView) -> list[Finding]:
    raise RuntimeError("deliberate")  # a crash no real check can be made to have


def test_an_incomplete_run_says_incomplete_everywhere(packages: PackageFactory,
                                                      tmp_path: Path) -> None:
    info = packages.build("llama")
    view = load_local_package(str(info.root), display_ref="x", options=CertOptions())
    report = build_report(view, input_text="x", started_at=utc_now(),
                          checks=[*all_checks(), Check("exploding", frozenset(), _boom, 999)])
    said = assert_one_verdict(report)
    assert said.status == "incomplete" and said.gates == "package gate incomplete"


# --- partial coverage: said in words in every format (issue 41 item 1) ----------------------
def test_sizes_only_is_said_in_every_format(packages: PackageFactory) -> None:
    """`--no-verify-sha256`, with one byte of a layer flipped: the sizes still match, so the
    package passes, and every format says the digests were not verified."""
    info = packages.build("llama")
    layer = info.root / "layers" / "layer-001.gguf"
    data = bytearray(layer.read_bytes())
    data[-1] ^= 0xFF
    layer.write_bytes(bytes(data))
    report = certify_dir(info.root, verify_sha256=False)
    said = assert_one_verdict(report)
    assert said.status == "passed"
    assert said.coverage == "sizes only: digests not verified"
    assert report.coverage is not None and report.coverage.digests.mode == "sizes_only"
    hashed = certify_dir(info.root)  # the same bytes hashed: the flip is found
    assert assert_one_verdict(hashed).status == "failed"
    assert hashed.coverage is not None and hashed.coverage.digests.mode == "hashed"


def test_a_slice_says_it_is_a_slice_in_every_format(packages: PackageFactory) -> None:
    from meshcert.certify.scope import parse_layers

    info = packages.build("llama", layers=6)
    report = certify_dir(info.root, scope=parse_layers("0..2"))
    said = assert_one_verdict(report)
    total = len(report.declared_artifacts)
    assert report.scope is not None
    checked = len(report.scope.artifacts)
    assert checked < total
    assert said.coverage == (f"slice layers 0..2: {checked}/{total} artifacts; "
                             "not a package verdict")
    lines = plain_text(render_lines(report, None, 100)).splitlines()
    assert lines[4] == "Layers: 6"  # mesh-llm's line, kept
    assert lines[5] == f"Partial coverage: {said.coverage}"


def test_digests_from_a_verify_cache_are_counted(packages: PackageFactory,
                                                 tmp_path: Path) -> None:
    info = packages.build("llama")
    cache = str(tmp_path / "verify-cache.json")
    first = certify_dir(info.root, verify_cache=cache)
    assert first.coverage is not None and first.coverage.digests.mode == "hashed"
    assert assert_one_verdict(first).coverage == ""
    again = certify_dir(info.root, verify_cache=cache)
    assert again.coverage is not None
    d = again.coverage.digests
    assert d.mode == "cache" and d.cached == d.artifacts > 0
    said = assert_one_verdict(again)
    assert said.coverage == (f"digests: {d.cached} of {d.artifacts} from a verify cache, "
                             "not re-hashed")


def test_a_strict_warning_failure_is_counted_once(packages: PackageFactory) -> None:
    """--strict: warnings fail the package gate with no error finding; JUnit and SARIF count
    that gate once, as the verdict's failed gates."""
    info = packages.build("llama")
    (info.root / "README.md").unlink()  # readme_missing: a warning
    report = certify_dir(info.root, strict=True)
    said = assert_one_verdict(report)
    assert said.status == "failed" and said.counts[0] == 0 and said.counts[1] > 0


def test_two_errors_of_one_check_are_two_junit_failures(packages: PackageFactory) -> None:
    """JUnit once said 2 failures for 1 error (a failed check and the package gate it
    failed): now one failure per error finding, and the package gate adds none."""
    info = packages.build("llama", layers=6)
    for n in (1, 3):
        (info.root / "layers" / f"layer-00{n}.gguf").unlink()
    report = certify_dir(info.root)
    said = assert_one_verdict(report)
    assert said.status == "failed"
    root = ET.fromstring(render_cert_junit(report))
    assert int(root.get("failures", "-1")) + int(root.get("errors", "-1")) == said.counts[0]
    assert said.counts[0] >= 2
