"""`--decisions FILE`: a user's own decision rules (TOML or JSON, schema-checked) decided the
same way as the built-in GLM rules; a bad file is a clear `error: ...` and exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from meshcert.cli import app
from meshcert.evidence.decision_rules import (
    DecisionRulesError,
    load_decision_rules,
    load_user_rules,
    schema_json,
)
from meshcert.evidence.decisions import DecisionOptions, decide_all
from meshcert.evidence.matching import resolve_rules
from meshcert.evidence.report import EvidenceReport
from meshcert.evidence.settings import load_settings
from tests.evidence.gate_logs import table

runner = CliRunner()
DOCS = Path(__file__).resolve().parents[2] / "docs"
SCHEMA = DOCS / "evidence-rules.schema.json"
DATA = Path(__file__).resolve().parent / "data" / "mesh"
BASE = "RMS_NORM(type=f32,ne=[4096,512,1,1],v=0,eps=0.000001)"
CAND = "RMS_NORM_MUL(type=f32,ne=[4096,512,1,1],v=0,eps=0.000001)"

RULES_TOML = """
schema_version = 1

[[decisions]]
policy = "fused_rms_norm"
title = "fused RMS norm + mul"
threshold = 1.05
threshold_env = "MYPROJ_FUSED_RMS_MIN_SPEEDUP"

[[decisions.baseline]]
op = "RMS_NORM"
params = { type = "f32", ne = [4096, 512, 1, 1] }

[[decisions.candidate]]
op = "RMS_NORM_MUL"
params = { type = "f32", ne = [4096, 512, 1, 1] }
"""


@pytest.fixture(autouse=True)
def _clean_own_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Also this file's own threshold variable (conftest clears meshcert's)."""
    monkeypatch.delenv("MYPROJ_FUSED_RMS_MIN_SPEEDUP", raising=False)


def perf_logs(base_us: float, cand_us: float, runs: int = 5, seed: int = 7) -> dict[str, str]:
    rng = np.random.default_rng(seed)
    out = {}
    for i in range(runs):
        rows = [f"  {name}:      8192 runs - {us * (1 + 0.005 * rng.standard_normal()):8.2f} "
                "us/run -    16384 kB/run -   90.00 GB/s" for name, us in ((BASE, base_us),
                                                                          (CAND, cand_us))]
        out[f"rms-{i + 1}.console.log"] = "\n".join(
            ["Testing 2 devices", "", "Backend 1/2: Vulkan0", "  Device description: RX 7900",
             "", *rows, "  Backend Vulkan0: OK", "Backend 2/2: CPU", "  Skipping CPU backend",
             "2/2 backends passed", "OK"]) + "\n"
    return out


PARITY = {"rms-parity.console.log": "\n".join(
    ["Testing 2 devices", "", "Backend 1/2: Vulkan0", f"  {BASE}: OK", f"  {CAND}: OK",
     "  2/2 tests passed", "  Backend Vulkan0: OK", "Backend 2/2: CPU", "  Skipping CPU backend",
     "2/2 backends passed", "OK"]) + "\n"}


def write(tmp: Path, texts: dict[str, str]) -> list[str]:
    for name, text in texts.items():
        (tmp / name).write_text(text, encoding="utf-8")
    return [str(tmp / n) for n in texts]


def report(tmp: Path, rules: str, name: str = "cat.toml", *files: str) -> tuple[int, str, str]:
    (tmp / name).write_text(rules, encoding="utf-8")
    result = runner.invoke(app, ["evidence", "report", *files, "--out-dir", str(tmp / "out"),
                                 "--decisions", str(tmp / name)])
    return result.exit_code, result.stdout, result.stderr


def user_decision(tmp: Path) -> dict[str, Any]:
    doc = EvidenceReport.model_validate_json((tmp / "out" / "decisions.json").read_text())
    d = next(x for x in doc.decisions if x.policy == "fused_rms_norm")
    return d.model_dump()


def test_a_user_decision_from_toml_is_decided_with_parity(tmp_path: Path) -> None:
    files = write(tmp_path, {**perf_logs(1000.0, 800.0), **PARITY})
    code, out, err = report(tmp_path, RULES_TOML, "cat.toml", *files)
    assert code == 0, err
    d = user_decision(tmp_path)
    assert d["verdict"] == "promote", d["reason"]
    assert d["phase"] == "user" and d["threshold"] == 1.05
    assert d["threshold_env"] == "MYPROJ_FUSED_RMS_MIN_SPEEDUP"
    assert d["comparisons"][0]["speedup"] == pytest.approx(1.25, rel=0.02)
    assert "fused_rms_norm" in out
    builtin = EvidenceReport.model_validate_json((tmp_path / "out" / "decisions.json")
                                                 .read_text())
    assert {x.policy for x in builtin.decisions} >= {"moe_merged_shared_gate_up",
                                                     "q2_K_routed_down"}  # still there


def test_the_threshold_env_var_overrides_the_file(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MYPROJ_FUSED_RMS_MIN_SPEEDUP", "1.5")
    files = write(tmp_path, {**perf_logs(1000.0, 800.0), **PARITY})
    code, _, err = report(tmp_path, RULES_TOML, "cat.toml", *files)
    assert code == 0, err
    d = user_decision(tmp_path)
    assert d["threshold"] == 1.5 and d["threshold_source"] == "env"
    assert d["verdict"] == "keep-evidence-gated"


def test_json_decision_rules_and_parity_requirements(tmp_path: Path) -> None:
    import tomllib

    data = tomllib.loads(RULES_TOML)
    (tmp_path / "cat.json").write_text(json.dumps(data))
    rules, extra = load_user_rules(tmp_path / "cat.json")
    ev = resolve_rules(table(perf_logs(1000.0, 800.0)), rules)
    s = load_settings({}, extra=extra)
    decisions, _ = decide_all(ev, s, DecisionOptions(replicates=2000))
    assert next(d for d in decisions if d.policy == "fused_rms_norm").verdict == "needs-parity"
    data["decisions"][0]["parity"] = False
    (tmp_path / "lax.json").write_text(json.dumps(data))
    rules, extra = load_user_rules(tmp_path / "lax.json")
    ev = resolve_rules(table(perf_logs(1000.0, 800.0)), rules)
    decisions, _ = decide_all(ev, load_settings({}, extra=extra),
                              DecisionOptions(replicates=2000))
    lax = next(d for d in decisions if d.policy == "fused_rms_norm")
    assert lax.verdict == "promote" and lax.missing_evidence == []


@pytest.mark.parametrize(("text", "name", "message"), [
    ("schema_version = 1\n[[decisions]\n", "bad.toml", "not valid TOML"),
    ('{"schema_version": 1, "decisions": [', "bad.json", "not valid JSON"),
    ("schema_version = 2\n", "v2.toml", "schema_version"),
    (RULES_TOML.replace("threshold = 1.05", "threshold = -1"), "neg.toml",
     "decisions.0.threshold: Input should be greater than 0"),
    (RULES_TOML.replace('[[decisions.candidate]]\nop = "RMS_NORM_MUL"\n'
                          'params = { type = "f32", ne = [4096, 512, 1, 1] }\n', ""),
     "nocand.toml", "decisions.0.candidate: Field required"),
    (RULES_TOML.replace("fused_rms_norm", "q2_K_routed_down"), "clash.toml",
     "built-in decision"),
    (RULES_TOML.replace("MYPROJ_FUSED_RMS_MIN_SPEEDUP", "lower_case"), "env.toml",
     "UPPER_SNAKE_CASE"),
    ("schema_version = 1\n[sample_policy]\nmin_samples = 0\n", "zero.toml",
     "sample_policy.min_samples: Input should be greater than or equal to 1"),
    ("schema_version = 1\n[ab]\nmin_effect_percent = -1.0\n", "neg-effect.toml",
     "ab.min_effect_percent: Input should be greater than or equal to 0"),
    ("schema_version = 1\n[ab.min_effect_percent_by_metric]\nttft_ms_p95 = -2\n",
     "neg-metric.toml",
     "ab.min_effect_percent_by_metric.ttft_ms_p95: Input should be greater than or equal to 0"),
])
def test_an_invalid_decision_rules_file_is_a_clear_error_and_exit_2(
        tmp_path: Path, text: str, name: str, message: str) -> None:
    files = write(tmp_path, perf_logs(1000.0, 800.0, runs=1))
    code, _, err = report(tmp_path, text, name, *files)
    assert code == 2
    assert err.startswith(f"error: decision rules {tmp_path / name}: ")
    assert message in err and "Traceback" not in err
    with pytest.raises(DecisionRulesError):
        load_decision_rules(tmp_path / name)


def _ab_file(tmp: Path, deltas: list[float]) -> str:
    """The shipped adaptive A/B sample with one metric's round deltas replaced."""
    doc = json.loads((DATA / "comparison-adaptive.json").read_text(encoding="utf-8"))
    doc["comparison"]["paired_delta_percent"] = {"output_tokens_per_second": {
        "round_deltas": deltas, "median": float(np.median(deltas)),
        "ci95": [min(deltas), max(deltas)]}}
    (tmp / "ab.json").write_text(json.dumps(doc), encoding="utf-8")
    return str(tmp / "ab.json")


def test_phase_e_and_ab_read_one_minimum_sample_policy(tmp_path: Path) -> None:
    """`[sample_policy] min_samples = 8`: the user decision's 5 samples a side and the A/B
    comparison's 7 rounds (enough for the exact test's own k = 6) are both short of it."""
    files = write(tmp_path, {**perf_logs(1000.0, 800.0), **PARITY})
    ab = _ab_file(tmp_path, [9.6, 10.1, 10.4, 9.8, 10.0, 10.2, 9.9])
    policy = RULES_TOML.replace("schema_version = 1\n",
                                  "schema_version = 1\n[sample_policy]\nmin_samples = 8\n")
    code, _, err = report(tmp_path, policy, "policy.toml", *files, ab)
    assert code == 0, err
    doc = EvidenceReport.model_validate_json((tmp_path / "out" / "decisions.json").read_text())
    d = next(x for x in doc.decisions if x.policy == "fused_rms_norm")
    # the setting that changed the rule is named where it changed it
    assert (d.verdict, d.reason, d.min_samples) == (
        "inconclusive", "fewer than 8 samples on a side (sample_policy.min_samples)", 8)
    assert doc.method.min_samples == 8
    (m,) = doc.ab_decisions[0].metrics
    assert (m.verdict, m.reason, m.min_rounds) == (
        "undecided", "insufficient rounds: n = 7 < k = 8 (sample_policy.min_samples)", 8)
    # without the file: 3 samples a side, and the A/B rounds need only the test's k = 6
    code, _, err = report(tmp_path, RULES_TOML, "cat.toml", *files, ab)
    doc = EvidenceReport.model_validate_json((tmp_path / "out" / "decisions.json").read_text())
    assert doc.method.min_samples == 3
    assert (doc.ab_decisions[0].verdict, doc.ab_decisions[0].metrics[0].min_rounds) == (
        "promote", 6)


def test_the_ab_settings_of_a_rules_file_without_decisions(tmp_path: Path) -> None:
    """A file may set only the A/B rules: a 20% minimum effect turns a significant +10% into
    no practical change."""
    ab = _ab_file(tmp_path, [9.6, 10.1, 10.4, 9.8, 10.0, 10.2, 9.9, 10.3])
    code, _, err = report(tmp_path, "schema_version = 1\n[ab]\nmin_effect_percent = 20\n",
                          "ab.toml", ab)
    assert code == 0, err
    doc = EvidenceReport.model_validate_json((tmp_path / "out" / "decisions.json").read_text())
    (m,) = doc.ab_decisions[0].metrics
    assert (m.verdict, m.p_value, m.min_effect_percent) == ("no-practical-change", 2 / 256, 20)


def test_a_missing_decision_rules_file_is_a_clear_error(tmp_path: Path) -> None:
    files = write(tmp_path, perf_logs(1000.0, 800.0, runs=1))
    result = runner.invoke(app, ["evidence", "report", *files, "--out-dir", str(tmp_path),
                                 "--decisions", str(tmp_path / "nope.toml")])
    assert result.exit_code == 2 and "cannot read decision rules" in result.stderr


def test_catalog_is_a_deprecated_alias_of_decisions(tmp_path: Path) -> None:
    files = write(tmp_path, perf_logs(1000.0, 800.0, runs=1))
    (tmp_path / "cat.toml").write_text(RULES_TOML, encoding="utf-8")
    old = runner.invoke(app, ["evidence", "report", *files, "--out-dir", str(tmp_path / "old"),
                              "--catalog", str(tmp_path / "cat.toml")])
    new = runner.invoke(app, ["evidence", "report", *files, "--out-dir", str(tmp_path / "new"),
                              "--decisions", str(tmp_path / "cat.toml")])
    assert old.exit_code == new.exit_code
    assert old.stderr == ("warning: --catalog is deprecated on the evidence commands; use "
                          "--decisions FILE\n" + new.stderr)
    old_report, new_report = (EvidenceReport.model_validate_json(
        (tmp_path / run / "decisions.json").read_text()) for run in ("old", "new"))
    assert old_report.decisions == new_report.decisions  # generated_at may differ
    both = runner.invoke(app, ["evidence", "report", *files, "--out-dir", str(tmp_path),
                               "--decisions", str(tmp_path / "cat.toml"),
                               "--catalog", str(tmp_path / "cat.toml")])
    assert both.exit_code == 2 and "give --decisions only" in both.stderr


def test_published_schema_is_current() -> None:
    """Regenerate with `python3 scripts/generate.py decision-rules-schema`."""
    for name in ("evidence-rules.schema.json", "evidence-catalog.schema.json"):  # old name kept
        assert (DOCS / name).read_text(encoding="utf-8") == schema_json()
