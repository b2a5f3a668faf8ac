"""`evidence run`: real processes (tiny `python -c` fixtures that print test-backend-ops lines),
run interleaved per variant, recorded with provenance, fed to ingest -> gate -> decisions.

The real llama.cpp tools run in tests/evidence/test_run_real_llama.py (slow tier).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meshcert.cli import app
from meshcert.evidence.rules import RULES
from meshcert.evidence.run import RunPlan, Variant, build_variants, evidence_from_runs, run_plan
from meshcert.evidence.run.execute import Execution, SubprocessExecutor
from meshcert.evidence.run.plan import PlanError
from meshcert.evidence.run.provenance import version_in
from meshcert.evidence.settings import load_settings
from tests.evidence.gate_logs import PASSING_US, parity_console, row_name
from tests.support.interrupt import python_sigint

PY = sys.executable

# A fixture that prints one test-backend-ops perf row; its time comes from $US, with jitter.
PERF_ROW = (
    "import os, random\n"
    "us = float(os.environ.get('US', '100')) * random.uniform(0.99, 1.01)\n"
    "print('Testing 1 devices'); print(); print('Backend 1/1: CPU')\n"
    "print(f'  ADD(type=f32,ne=[4096,1,1,1],nr=[1,1,1,1]):   1000 runs - {us:8.3f} us/run - "
    "48 kB/run - 0.37 GB/s')\n"
    "print('  Backend CPU: OK'); print('1/1 backends passed'); print('OK')\n"
)

# The GLM Phase E fixture rows, as the patched test-backend-ops prints them; $SCALE_MERGED
# scales the merged shared-expert row (what an environment switch of the kernel would do).
GLM_FIXTURE = (
    "import json, os, random, sys\n"
    "rows = json.loads(sys.argv[1])\n"
    "merged = sys.argv[2]\n"
    "scale = float(os.environ.get('SCALE_MERGED', '1'))\n"
    "print('Testing 2 devices'); print('Backend 1/2: Metal')\n"
    "for name, us in rows.items():\n"
    "    us = us * (scale if name == merged else 1.0) * random.uniform(0.998, 1.002)\n"
    "    print(f'  {name}:   2048 runs - {us:9.3f} us/run - 100.66 MFLOP/run - 612 GFLOPS')\n"
    "print('  Backend Metal: OK'); print('Backend 2/2: CPU'); print('  Skipping CPU backend')\n"
    "print('2/2 backends passed'); print('OK')\n"
)


def perf_plan(repeats: int = 3) -> RunPlan:
    variants = build_variants(env=["baseline:US=100", "candidate:US=80"])
    return RunPlan((PY, "-c", PERF_ROW), variants, repeats=repeats)


# ---- the plan --------------------------------------------------------------------------------


def test_runs_interleave_the_variants_a_b_a_b() -> None:
    order = perf_plan(repeats=3).order()
    assert [(r.index, r.variant.name, r.repeat) for r in order] == [
        (1, "baseline", 1), (2, "candidate", 1), (3, "baseline", 2), (4, "candidate", 2),
        (5, "baseline", 3), (6, "candidate", 3)]


def test_checks_run_once_per_variant_before_the_timed_runs() -> None:
    plan = RunPlan(("tbo", "perf"), build_variants(args=["a:-p x", "b:-p y"]), repeats=2,
                   checks=(("tbo", "test"),))
    assert [(r.index, r.variant.name, r.role, r.argv) for r in plan.order()] == [
        (1, "a", "check", ("tbo", "test", "-p", "x")),
        (2, "b", "check", ("tbo", "test", "-p", "y")),
        (3, "a", "timed", ("tbo", "perf", "-p", "x")),
        (4, "b", "timed", ("tbo", "perf", "-p", "y")),
        (5, "a", "timed", ("tbo", "perf", "-p", "x")),
        (6, "b", "timed", ("tbo", "perf", "-p", "y"))]


def test_variants_from_env_args_and_command_specs() -> None:
    variants = build_variants(
        names=["q3"], env=["q3:GGML_X=1", "q3:GGML_Y=a=b", "q2:GGML_X=2"],
        args=["q2:-p 'type_a=q2_K'"], commands=["old:/opt/old/test-backend-ops perf"])
    assert [v.name for v in variants] == ["q3", "q2", "old"]
    assert variants[0].env == {"GGML_X": "1", "GGML_Y": "a=b"}
    assert variants[1].argv(("tbo", "perf")) == ("tbo", "perf", "-p", "type_a=q2_K")
    assert variants[2].argv(("tbo", "perf")) == ("/opt/old/test-backend-ops", "perf")
    assert build_variants() == (Variant("default"),)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"env": ["nocolon"]}, "expected VARIANT:VALUE"),
    ({"env": ["a:1BAD=x"]}, "valid variable name"),
    ({"names": ["has space"]}, "must be 1-80 characters"),
    ({"names": ["../up"]}, "must be 1-80 characters"),
    ({"args": ["a:'unclosed"]}, "No closing quotation"),
    ({"commands": ["a:"]}, "empty command"),
])
def test_bad_variant_specs_are_refused_with_the_reason(kwargs: dict[str, list[str]],
                                                       message: str) -> None:
    with pytest.raises(PlanError, match=message):
        build_variants(**kwargs)


def test_a_plan_refuses_duplicate_variants_and_zero_repeats() -> None:
    with pytest.raises(PlanError, match="variant given twice: a"):
        RunPlan(("true",), (Variant("a"), Variant("a")))
    with pytest.raises(PlanError, match="repeats must be at least 1"):
        RunPlan(("true",), (Variant("a"),), repeats=0)


# ---- running and recording -------------------------------------------------------------------


def test_every_run_is_recorded_with_its_provenance(tmp_path: Path) -> None:
    session = run_plan(perf_plan(repeats=2), tmp_path)
    exe_sha = hashlib.sha256(Path(PY).resolve().read_bytes()).hexdigest()
    assert [r.status for r in session.records] == ["ok"] * 4
    for record in session.records:
        assert record.command == [PY, "-c", PERF_ROW]
        assert record.exit_status == 0 and record.duration_s is not None
        assert record.binary == str(Path(PY).resolve()) and record.binary_sha256 == exe_sha
        assert record.host and record.started and record.started.endswith("Z")
        assert record.stream == "merged" and record.evidence_log == record.log
        assert "us/run" in (tmp_path / str(record.log)).read_text()
    assert session.records[1].env == {"US": "80"}
    manifest = json.loads((tmp_path / "runs.json").read_text())
    assert manifest["schema"] == "meshcert.evidence-runs"
    assert manifest["counts"] == {"ok": 4} and len(manifest["runs"]) == 4
    assert [v["name"] for v in manifest["plan"]["variants"]] == ["baseline", "candidate"]


def test_rows_carry_the_variant_of_their_run(tmp_path: Path) -> None:
    evidence = evidence_from_runs(run_plan(perf_plan(repeats=3), tmp_path),
                                  settings=load_settings({}))
    table = evidence.ingest.table
    perf = table[table["kind"] == "perf"]
    assert sorted(perf.groupby("variant").size().items()) == [("baseline", 3), ("candidate", 3)]
    assert sorted(perf["sample"].tolist()) == [1, 1, 2, 2, 3, 3]
    base = perf[perf["variant"] == "baseline"]["us_per_run"]
    assert base.between(98.9, 101.1).all()
    assert evidence.ingest.problems == []
    for name in ("evidence.json", "evidence-baseline.json", "evidence-candidate.json"):
        assert (tmp_path / name).is_file()


def test_repeats_that_print_the_same_numbers_are_all_kept(tmp_path: Path) -> None:
    """Two runs can print byte-identical logs (a coarse timer, a cached result): each is still
    a sample of its own, not a file given twice (this once dropped a random repeat's row)."""
    fixed = PERF_ROW.replace("* random.uniform(0.99, 1.01)", "")
    plan = RunPlan((PY, "-c", fixed), build_variants(env=["baseline:US=100",
                                                          "candidate:US=80"]), repeats=3)
    evidence = evidence_from_runs(run_plan(plan, tmp_path), settings=load_settings({}))
    perf = evidence.ingest.table[evidence.ingest.table["kind"] == "perf"]
    assert sorted(perf.groupby("variant").size().items()) == [("baseline", 3), ("candidate", 3)]
    assert evidence.ingest.problems == []


def test_a_failed_run_is_recorded_and_its_rows_kept(tmp_path: Path) -> None:
    failing = PERF_ROW + "raise SystemExit(3)\n"
    plan = RunPlan((PY, "-c", PERF_ROW), (Variant("good"), Variant(
        "bad", command=(PY, "-c", failing))), repeats=2)
    session = run_plan(plan, tmp_path)
    assert [(r.variant, r.status, r.exit_status) for r in session.records] == [
        ("good", "ok", 0), ("bad", "failed", 3), ("good", "ok", 0), ("bad", "failed", 3)]
    evidence = evidence_from_runs(session, settings=load_settings({}))
    kinds = [p.kind for p in evidence.ingest.problems]
    assert kinds == ["run-failed", "run-failed"]
    assert "run 2 (bad, repeat 1) exited with status 3" in evidence.ingest.problems[0].reason
    table = evidence.ingest.table
    assert len(table[(table["variant"] == "bad") & (table["kind"] == "perf")]) == 2
    reported = " ".join(evidence.report.inputs.problems)
    assert "exited with status 3" in reported


def test_a_run_past_its_timeout_is_stopped_and_recorded(tmp_path: Path) -> None:
    plan = RunPlan((PY, "-c", "import time; print('started', flush=True); time.sleep(30)"),
                   (Variant("slow"),), repeats=1, timeout_s=0.5)
    (record,) = run_plan(plan, tmp_path).records
    assert record.status == "timeout" and record.exit_status is None
    assert record.error == "stopped after the 0.5s timeout"
    assert (tmp_path / str(record.log)).read_text() == "started\n"


def test_a_command_that_does_not_exist_is_an_error_record(tmp_path: Path) -> None:
    plan = RunPlan(("/nonexistent/test-backend-ops", "perf"), (Variant("a"),), repeats=2)
    records = run_plan(plan, tmp_path).records
    assert [r.status for r in records] == ["error", "error"]
    assert records[0].error is not None and "cannot start" in records[0].error
    assert records[0].binary is None and records[0].log is None


def test_ctrl_c_stops_the_run_and_the_rest_are_recorded_as_not_run(tmp_path: Path) -> None:
    # The fixture sends SIGINT to us (its parent) while we wait for it: a real Ctrl-C. It then
    # blocks until the runner stops its process group (no time that load could outlast).
    interrupter = ("import os, signal, time; print('partial', flush=True); "
                   "os.kill(os.getppid(), signal.SIGINT); time.sleep(3600)")
    plan = RunPlan((PY, "-c", PERF_ROW), (Variant("a"), Variant(
        "b", command=(PY, "-c", interrupter))), repeats=2)
    with python_sigint():  # a real Ctrl-C even when the suite was started with it ignored
        session = run_plan(plan, tmp_path)
    assert [(r.variant, r.status) for r in session.records] == [
        ("a", "ok"), ("b", "interrupted"), ("a", "not-run"), ("b", "not-run")]
    assert session.interrupted
    assert (tmp_path / str(session.records[1].log)).read_text() == "partial\n"
    evidence = evidence_from_runs(session, settings=load_settings({}))
    # "partial" is no format at all: ingest says so, then the run problems follow
    assert [p.kind for p in evidence.ingest.problems] == [
        "unknown", "run-interrupted", "run-not-run", "run-not-run"]
    assert json.loads((tmp_path / "runs.json").read_text())["counts"] == {
        "ok": 1, "interrupted": 1, "not-run": 2}


def test_stdout_alone_feeds_ingest_when_it_is_a_machine_format(tmp_path: Path) -> None:
    bench = json.dumps([{"model_type": "llama 135M", "n_prompt": 16, "n_gen": 0,
                         "avg_ns": 1000000, "stddev_ns": 1000, "avg_ts": 16000.0,
                         "stddev_ts": 10.0, "samples_ns": [999000, 1001000],
                         "samples_ts": [16016.0, 15984.0], "build_commit": "abc1234"}])
    code = (f"import sys; print('load_tensors: chatter', file=sys.stderr, flush=True); "
            f"print({bench!r}, flush=True); print('llama_perf: more', file=sys.stderr)")
    (record,) = run_plan(RunPlan((PY, "-c", code), (Variant("a"),), repeats=1),
                         tmp_path).records
    assert record.stream == "stdout" and record.evidence_log == record.stdout_log
    assert "chatter" in (tmp_path / str(record.log)).read_text()
    assert "chatter" in (tmp_path / str(record.stderr_log)).read_text()


def test_the_merged_log_keeps_stderr_lines_where_they_arrived(tmp_path: Path) -> None:
    # two pipes: the order is the order of arrival, exact for writes that are not
    # microseconds apart (a terminal shows the same)
    code = ("import sys, time\nfor i in range(3):\n"
            "    print(f'out {i}', flush=True); time.sleep(0.1)\n"
            "    print(f'err {i}', file=sys.stderr, flush=True); time.sleep(0.1)\n")
    (record,) = run_plan(RunPlan((PY, "-c", code), (Variant("a"),), repeats=1),
                         tmp_path).records
    assert (tmp_path / str(record.log)).read_text().split() == [
        "out", "0", "err", "0", "out", "1", "err", "1", "out", "2", "err", "2"]
    assert (tmp_path / str(record.stdout_log)).read_text() == "out 0\nout 1\nout 2\n"


def test_secret_looking_environment_values_are_masked_in_the_record(tmp_path: Path) -> None:
    plan = RunPlan((PY, "-c", "print(1)"), (Variant("a", env={"HF_TOKEN": "hf_abcdefgh123",
                                                              "GGML_X": "1"}),), repeats=1)
    run_plan(plan, tmp_path)
    text = (tmp_path / "runs.json").read_text()
    assert "hf_abcdefgh123" not in text and '"HF_TOKEN": "***"' in text
    assert '"GGML_X": "1"' in text


def test_version_lines_are_read_from_the_output() -> None:
    assert version_in("blah\nversion: 11434 (abc1234)\n") == "version: 11434 (abc1234)"
    assert version_in("0.00.012.345 I build: 4567 (deadbee) with gcc\n") == \
        "build: 4567 (deadbee) with gcc"
    assert version_in("no version here\n") is None


def test_the_executor_keeps_a_process_that_closes_stdout_early() -> None:
    code = "import os, sys; print('x', flush=True); os.close(1); print('e', file=sys.stderr)"
    run = SubprocessExecutor().execute([PY, "-c", code], dict(os.environ), None, 10)
    assert (run.status, run.stdout, run.stderr) == ("ok", b"x\n", b"e\n")


# ---- into the gate and the decisions ---------------------------------------------------------


def glm_plan(repeats: int, parity: dict[str, bool] | None = None) -> RunPlan:
    rows = {row_name(label): us for label, us in PASSING_US.items()}
    merged = row_name("ffn_q3_down_merged_shexp")
    command = (PY, "-c", GLM_FIXTURE, json.dumps(rows), merged)
    checks = () if parity is None else (
        (PY, "-c", "import sys; print(sys.argv[1], end='')", parity_console(parity)),)
    return RunPlan(command, (Variant("default", env={"SCALE_MERGED": "0.8"}),),
                   repeats=repeats, checks=checks)


def test_runs_of_the_glm_fixtures_reach_the_glm_decisions(tmp_path: Path) -> None:
    evidence = evidence_from_runs(run_plan(glm_plan(repeats=4), tmp_path),
                                  settings=load_settings({}))
    report = evidence.report
    assert report.gate.missing_rows == []
    verdicts = {d.policy: d.verdict for d in report.decisions}
    # merged shared gate/up 25% faster than separate, but no parity evidence from these runs
    assert verdicts["moe_merged_shared_gate_up"] == "needs-parity"
    (comparison,) = next(d for d in report.decisions
                         if d.policy == "moe_merged_shared_gate_up").comparisons
    assert comparison.speedup is not None and 1.2 < comparison.speedup < 1.3
    assert {r.policy for r in report.decisions} <= {d.policy for d in RULES.decisions}


@pytest.mark.parametrize(("ok", "verdict"), [(True, "needs-quality"), (False, "reject")])
def test_a_check_run_gives_the_parity_the_decision_needs(tmp_path: Path, ok: bool,
                                                         verdict: str) -> None:
    parity = {"ffn_q3_down": True, "ffn_q2_down": ok}
    session = run_plan(glm_plan(repeats=3, parity=parity), tmp_path)
    assert [r.role for r in session.records] == ["check", "timed", "timed", "timed"]
    assert session.records[0].status == "ok"
    report = evidence_from_runs(session, settings=load_settings({})).report
    (decision,) = [d for d in report.decisions if d.policy == "q2_K_routed_down"]
    # q3_K / q2_K routed down = 1147.21 / 817.38 = 1.40, well past 1.08: parity decides
    assert decision.verdict == verdict, decision.reason


def test_too_few_runs_are_inconclusive(tmp_path: Path) -> None:
    evidence = evidence_from_runs(run_plan(glm_plan(repeats=2), tmp_path),
                                  settings=load_settings({}))
    verdicts = {d.policy: d.verdict for d in evidence.report.decisions}
    assert verdicts["moe_merged_shared_gate_up"] == "inconclusive"


# ---- the command line ------------------------------------------------------------------------

cli = CliRunner()


def test_cli_run_prints_progress_and_the_report(tmp_path: Path) -> None:
    result = cli.invoke(app, ["evidence", "run", "--out-dir", str(tmp_path), "-n", "2",
                              "--env", "baseline:US=100", "--env", "candidate:US=80",
                              "--", PY, "-c", PERF_ROW])
    assert result.exit_code == 0, result.output
    assert "runs: 4 ok (2 variant(s) x 2, interleaved)" in result.stdout
    assert "[4/4] candidate #2 ok" in result.stderr
    for name in ("decisions.json", "summary.md"):  # the report beside the evidence files
        assert f"wrote {tmp_path / name}" in result.stdout
        assert (tmp_path / name).is_file()


def test_cli_run_json_is_quiet_on_stderr_and_parses(tmp_path: Path) -> None:
    result = cli.invoke(app, ["evidence", "run", "--out-dir", str(tmp_path), "-n", "1",
                              "--json", "--", PY, "-c", PERF_ROW])
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    data = json.loads(result.stdout)
    assert data["runs"]["counts"] == {"ok": 1}
    assert data["report"]["gate"]["enforced"] is False


def test_cli_run_with_a_missing_command_exits_2(tmp_path: Path) -> None:
    result = cli.invoke(app, ["evidence", "run", "--out-dir", str(tmp_path), "-q", "--",
                              "/nonexistent/llama-bench"])
    assert result.exit_code == 2
    assert "error: no run started: cannot start '/nonexistent/llama-bench'" in result.stderr
    assert json.loads((tmp_path / "runs.json").read_text())["counts"] == {"error": 5}


def test_cli_run_refuses_a_bad_variant_spec(tmp_path: Path) -> None:
    result = cli.invoke(app, ["evidence", "run", "--out-dir", str(tmp_path), "--env", "x",
                              "--", PY, "-c", "print(1)"])
    assert result.exit_code == 2 and "expected VARIANT:VALUE" in result.stderr
    assert not (tmp_path / "runs.json").exists()


def test_cli_run_refuses_an_unknown_stream(tmp_path: Path) -> None:
    result = cli.invoke(app, ["evidence", "run", "--out-dir", str(tmp_path), "--stream",
                              "both", "--", PY, "-c", "print(1)"])
    assert result.exit_code == 2 and "stream must be one of auto, merged" in result.stderr


class _CtrlCBetweenProcesses:
    """Ctrl-C landing outside any child process (while hashing or writing): a real process
    cannot time that, so this executor raises it on its second call."""

    def __init__(self) -> None:
        self.calls = 0
        self.real = SubprocessExecutor()

    def execute(self, argv: Sequence[str], env: Mapping[str, str], cwd: str | None,
                timeout_s: float | None) -> Execution:
        self.calls += 1
        if self.calls == 2:
            raise KeyboardInterrupt
        return self.real.execute(argv, env, cwd, timeout_s)


def test_ctrl_c_between_processes_is_recorded_too(tmp_path: Path) -> None:
    session = run_plan(perf_plan(repeats=2), tmp_path, executor=_CtrlCBetweenProcesses())
    assert [r.status for r in session.records] == ["ok", "interrupted", "not-run", "not-run"]
    assert session.records[1].error == "interrupted (Ctrl-C) before this run finished"
