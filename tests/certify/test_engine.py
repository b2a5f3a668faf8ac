"""The engine: containment of crashing checks, statuses, and the report contract."""

from __future__ import annotations

import json
from pathlib import Path

from meshcert.certify.checks import Check, all_checks
from meshcert.certify.engine import build_report, utc_now
from meshcert.certify.report import CertReport, cert_json_schema
from meshcert.certify.sources.local import load_local_package
from meshcert.certify.view import CertOptions, PackageView
from meshcert.core.findings import Finding
from tests.conftest import PackageFactory

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "docs" / "cert.schema.json"


def _boom(view: PackageView) -> list[Finding]:
    raise RuntimeError("deliberate")


def test_crashing_check_makes_the_report_incomplete_not_passed(packages: PackageFactory) -> None:
    info = packages.build("llama")
    view = load_local_package(str(info.root), display_ref="x", options=CertOptions())
    checks = [*all_checks(), Check("exploding", frozenset(), _boom, 999)]
    report = build_report(view, input_text="x", started_at=utc_now(), checks=checks)
    assert report.status == "incomplete" and report.package_gate.status == "incomplete"
    crash = next(f for f in report.findings if f.code == "internal_error")
    assert "exploding" in crash.message and crash.check == "exploding"
    run = next(c for c in report.checks if c.name == "exploding")
    assert run.status == "error"


def test_crash_plus_real_error_is_failed(packages: PackageFactory) -> None:
    info = packages.build("llama")
    (info.root / "layers" / "layer-001.gguf").unlink()
    view = load_local_package(str(info.root), display_ref="x", options=CertOptions())
    checks = [*all_checks(), Check("exploding", frozenset(), _boom, 999)]
    report = build_report(view, input_text="x", started_at=utc_now(), checks=checks)
    assert report.status == "failed"


def test_every_check_declares_catalogued_codes_and_emits_only_those(
        packages: PackageFactory) -> None:
    info = packages.build("glm")
    packages.edit_manifest(info, lambda m: m.update(format="x", layer_count=1))
    view = load_local_package(str(info.root), display_ref="x", options=CertOptions())
    for check in all_checks():
        for produced in check.func(view):
            assert produced.code in check.codes, (check.name, produced.code)


def test_package_only_runtime_gates_are_not_required(packages: PackageFactory) -> None:
    info = packages.build("llama")
    view = load_local_package(str(info.root), display_ref="x", options=CertOptions())
    report = build_report(view, input_text="x", started_at=utc_now())
    assert [g.name for g in report.runtime_gates] == ["v1_models", "v1_chat_completions",
                                                     "v1_responses"]
    assert {g.status for g in report.runtime_gates} == {"not_required"}
    assert {g.details for g in report.runtime_gates} == {"package-only certification requested"}
    assert report.package_gate.name == "package_materialization"


def test_report_json_round_trips_and_keeps_mesh_llm_fields(packages: PackageFactory) -> None:
    info = packages.build("llama")
    view = load_local_package(str(info.root), display_ref="x", options=CertOptions())
    report = build_report(view, input_text="x", started_at=utc_now())
    data = json.loads(report.to_json())
    for key in ("schema_version", "status", "input", "resolved_package_ref", "local_package_dir",
                "model_id", "manifest_sha256", "source_model_path", "source_model_sha256",
                "source_model_bytes", "layer_count", "package_gate", "materialized_stages",
                "runtime_gates", "findings", "checks", "ref", "tool", "started_at",
                "finished_at"):
        assert key in data, key
    assert report.to_json().endswith("}\n")
    assert CertReport.model_validate(data) == report


def test_checked_in_schema_matches_the_models() -> None:
    """Regenerate with: python3 scripts/generate.py cert-schema"""
    assert json.loads(SCHEMA_FILE.read_text()) == json.loads(json.dumps(cert_json_schema()))


def test_strict_fails_the_package_gate_on_a_warning_and_says_which(
        packages: PackageFactory) -> None:
    """A stray .gguf the manifest does not name is a warning (undeclared_artifact): passed by
    default, failed with --strict (any warning fails), and the gate names the code."""
    info = packages.build("llama")
    (info.root / "layers" / "stray.gguf").write_bytes(b"GGUF")
    loose = build_report(load_local_package(str(info.root), display_ref="x",
                                            options=CertOptions()),
                         input_text="x", started_at=utc_now())
    assert loose.status == "passed" and loose.package_gate.details == "1 warning(s)"
    assert [f.code for f in loose.findings if f.severity == "warning"] == ["undeclared_artifact"]
    strict = build_report(load_local_package(str(info.root), display_ref="x",
                                             options=CertOptions(strict=True)),
                          input_text="x", started_at=utc_now())
    assert strict.status == "failed" and strict.package_gate.status == "failed"
    assert strict.package_gate.details == "--strict: 1 warning finding(s): undeclared_artifact"


def test_strict_changes_nothing_without_a_warning(packages: PackageFactory) -> None:
    info = packages.build("llama")
    view = load_local_package(str(info.root), display_ref="x", options=CertOptions(strict=True))
    assert build_report(view, input_text="x", started_at=utc_now()).status == "passed"
