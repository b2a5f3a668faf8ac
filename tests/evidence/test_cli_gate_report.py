"""`meshcert evidence gate` / `report`: the script's exit codes and `error: ...` lines."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from gguf import GGMLQuantizationType as Q
from typer.testing import CliRunner

from meshcert.cli import app
from meshcert.evidence.report import EvidenceReport
from meshcert.testing import glm_dsa_spec, write_package
from tests.evidence.gate_logs import PASSING_US, SWEEP_US, perf_console, repeated, sweep_logs

runner = CliRunner()


def write(tmp: Path, texts: Mapping[str, str]) -> list[str]:
    paths = []
    for name, text in texts.items():
        path = tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        paths.append(str(path))
    return paths


def logs(tmp: Path, **changes: float) -> list[str]:
    return write(tmp, {"run-1.console.log": perf_console({**PASSING_US, **changes})})


def without(tmp: Path, label: str) -> list[str]:
    us = {k: v for k, v in PASSING_US.items() if k != label}
    return write(tmp, {"run-1.console.log": perf_console(us)})


def err_lines(result: object) -> list[str]:
    return [line for line in result.stderr.splitlines() if line]  # type: ignore[attr-defined]


def test_gate_passes_with_exit_0(tmp_path: Path) -> None:
    result = runner.invoke(app, ["evidence", "gate", *logs(tmp_path), "--require-gates"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Phase E MoE gate: passed (enforced; kernel sweep off "
                                    "(GLM52_PHASE_E_KERNEL_SWEEP=0))")
    assert "estimate: routed FFN decode 399.30 us (matmuls 96.2%, SwiGLU 1.3%, route+sum " \
        "2.5%); shared expert 50.4% of routed+shared" in result.stdout
    assert result.stderr == ""


def test_missing_rows_exit_2_with_the_scripts_message(tmp_path: Path) -> None:
    result = runner.invoke(app, ["evidence", "gate", *without(tmp_path, "routed_down_q2_K"),
                                 "--require-gates"])
    assert result.exit_code == 2
    assert err_lines(result) == ["error: missing Phase E MoE gate rows: routed q2_K down"]


def test_the_environment_variable_enforces_the_gate(tmp_path: Path) -> None:
    files = logs(tmp_path, ffn_q3_down_merged_shexp=868.59)
    advisory = runner.invoke(app, ["evidence", "gate", *files])
    assert advisory.exit_code == 0 and advisory.stderr == ""
    assert "failed   combined FFN q3_K / q3_K merged shared gate/up" in advisory.stdout
    enforced = runner.invoke(app, ["evidence", "gate", *files],
                             env={"GLM52_PHASE_E_REQUIRE_GATES": "1"})
    assert enforced.exit_code == 2
    assert err_lines(enforced) == [
        "error: combined FFN q3_K / q3_K merged shared gate/up speedup 1.321x is above "
        "GLM52_PHASE_E_MERGED_SHEXP_REVIEW_SPEEDUP=1.02: revisit disabled merged shared-expert "
        "policy"]


def test_threshold_and_sweep_variables(tmp_path: Path) -> None:
    files = logs(tmp_path)
    strict = runner.invoke(app, ["evidence", "gate", *files, "--require-gates"],
                           env={"GLM52_PHASE_E_Q2_FFN_MIN_SPEEDUP": "1.6"})
    assert strict.exit_code == 2
    assert err_lines(strict) == ["error: combined FFN q3_K-down / q2_K-down speedup 1.404x is "
                                 "below GLM52_PHASE_E_Q2_FFN_MIN_SPEEDUP=1.6"]
    sweep = runner.invoke(app, ["evidence", "gate", *files, "--require-gates"],
                          env={"GLM52_PHASE_E_KERNEL_SWEEP": "1"})
    assert sweep.exit_code == 2
    assert err_lines(sweep)[0].startswith("error: missing Phase E MoE gate rows: forced "
                                          "mul_mm_id q3_K down, q3_K mul_mv_id nsg=1")


def test_every_setting_that_changed_a_rule_is_named_where_it_changed_it(tmp_path: Path) -> None:
    """Kernel-sweep logs given with the sweep off: the gate line, the skipped checks and a note
    name GLM52_PHASE_E_KERNEL_SWEEP (console and summary.md); a threshold set from the
    environment names its variable beside the threshold."""
    files = logs(tmp_path) + write(tmp_path, sweep_logs())
    out = tmp_path / "out"
    env = {"GLM52_PHASE_E_KERNEL_SWEEP": None, "GLM52_PHASE_E_Q2_FFN_MIN_SPEEDUP": "1.2"}
    result = runner.invoke(app, ["evidence", "report", *files, "--out-dir", str(out)], env=env)
    assert result.exit_code == 0, result.stderr
    summary = (out / "summary.md").read_text()
    for text in (result.stdout, summary):
        assert "kernel sweep off (GLM52_PHASE_E_KERNEL_SWEEP=0)" in text
        assert (f"{len(SWEEP_US)} kernel-sweep row(s) given but not gated: "
                "GLM52_PHASE_E_KERNEL_SWEEP=0 (set GLM52_PHASE_E_KERNEL_SWEEP=1") in text
        assert ">= 1.2 (GLM52_PHASE_E_Q2_FFN_MIN_SPEEDUP)" in text
    skipped = [line for line in result.stdout.splitlines() if line.startswith("skipped ")
               and "sanity" not in line]
    assert skipped and all(line.endswith("kernel sweep off (GLM52_PHASE_E_KERNEL_SWEEP=0)")
                           for line in skipped)
    swept = runner.invoke(app, ["evidence", "report", *files, "--out-dir", str(out)],
                          env={"GLM52_PHASE_E_KERNEL_SWEEP": "1"})
    assert "kernel sweep on (GLM52_PHASE_E_KERNEL_SWEEP non-zero)" in swept.stdout
    assert "not gated" not in swept.stdout


def test_invalid_variable_is_a_clear_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["evidence", "gate", *logs(tmp_path)],
                           env={"GLM52_PHASE_E_KERNEL_SWEEP": "on"})
    assert result.exit_code == 2
    assert err_lines(result) == ["error: invalid GLM52_PHASE_E_KERNEL_SWEEP='on': expected an "
                                 "integer (0 = off, non-zero = on)"]


def test_unknown_backend_is_an_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["evidence", "gate", *logs(tmp_path), "--backend", "CUDA0"])
    assert result.exit_code == 2
    assert err_lines(result) == ["error: backend 'CUDA0' has no benchmark rows (found: Metal)"]


def test_gate_json_and_ingest_warnings(tmp_path: Path) -> None:
    files = logs(tmp_path)
    bad = write(tmp_path, {"bad.console.log": perf_console({"route": 3.3}).replace(
        "3.30 us/run", "x us/run")})
    result = runner.invoke(app, ["evidence", "gate", *files, *bad, "--json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["passed"] is True
    assert result.stderr.startswith("warning: ")
    assert "bad.console.log:" in result.stderr


# -- report -----------------------------------------------------------------------------------


def test_report_writes_decisions_json_and_summary(tmp_path: Path) -> None:
    files = write(tmp_path, repeated(PASSING_US, 3))
    out = tmp_path / "out"
    result = runner.invoke(app, ["evidence", "report", *files, "--out-dir", str(out),
                                 "--replicates", "2000"])
    assert result.exit_code == 0, result.output
    report = EvidenceReport.model_validate_json((out / "decisions.json").read_text())
    assert [d.policy for d in report.decisions] == ["moe_merged_shared_gate_up",
                                                    "moe_weighted_down", "q2_K_routed_down"]
    assert report.method.replicates == 2000
    assert (out / "summary.md").read_text().startswith("# GLM-5.2 Benchmark Evidence")
    assert f"wrote {out / 'decisions.json'}" in result.stdout
    assert "q2_K_routed_down             keep-evidence-gated" in result.stdout


def test_report_json_is_the_decisions_alone_and_quiet_prints_nothing(tmp_path: Path) -> None:
    files = write(tmp_path, repeated(PASSING_US, 3))
    as_json = runner.invoke(app, ["evidence", "report", *files, "--out-dir",
                                  str(tmp_path / "j"), "--replicates", "2000", "--json"])
    assert as_json.exit_code == 0, as_json.output
    assert as_json.stdout == (tmp_path / "j" / "decisions.json").read_text()
    quiet = runner.invoke(app, ["evidence", "report", *files, "--out-dir", str(tmp_path / "q"),
                                "--replicates", "2000", "--quiet"])
    assert (quiet.exit_code, quiet.stdout) == (0, "")
    assert (tmp_path / "q" / "decisions.json").is_file()


def test_report_exits_2_when_the_enforced_gate_fails_but_still_writes(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(app, ["evidence", "report", *without(tmp_path, "route"),
                                 "--out-dir", str(out), "--require-gates"])
    assert result.exit_code == 2
    assert err_lines(result) == ["error: missing Phase E MoE gate rows: route"]
    assert (out / "decisions.json").is_file() and (out / "summary.md").is_file()


def _package(tmp: Path, name: str, **spec: object) -> str:
    info = write_package(glm_dsa_spec(**spec), tmp / name,  # type: ignore[arg-type]
                         source_dir=tmp / f"{name}-src")
    return str(info.root)


def test_report_package_rule_nextn_keeps_its_down_type(tmp_path: Path) -> None:
    files = logs(tmp_path)
    good = _package(tmp_path, "good", down_type=Q.Q2_K, nextn_down_type=Q.Q3_K)
    result = runner.invoke(app, ["evidence", "report", *files, "--out-dir",
                                 str(tmp_path / "a"), "--package", good])
    assert result.exit_code == 0, result.output
    assert f"package rule: passed ({good})" in result.stdout
    bad = _package(tmp_path, "bad", down_type=Q.Q2_K)
    result = runner.invoke(app, ["evidence", "report", *files, "--out-dir",
                                 str(tmp_path / "b"), "--package", bad])
    assert result.exit_code == 2
    assert err_lines(result) == [
        "error: q2_K routed down: NextN/MTP layers keep their original routed down-projection "
        "type: blk.3.ffn_down_exps.weight is q2_K: the NextN/MTP layer must keep its original "
        "down-projection type"]
    report = EvidenceReport.model_validate_json((tmp_path / "b" / "decisions.json").read_text())
    assert report.package_check is not None and report.package_check.status == "failed"


def test_report_package_ref_errors(tmp_path: Path) -> None:
    result = runner.invoke(app, ["evidence", "report", *logs(tmp_path), "--out-dir",
                                 str(tmp_path / "o"), "--package", "model.gguf"])
    assert result.exit_code == 2
    assert err_lines(result)[0].startswith("error: 'model.gguf' is a GGUF file")
