"""`evidence run` on the real llama.cpp tools (scripts/build_llama_cpp.py), on this CPU.

- test-backend-ops perf: two PAD_REFLECT_1D cases (the two that both perf and test mode have)
  as the variants `small` and `large` (they differ by their `-p` filter), 3 interleaved runs
  each, plus one `test` mode check per variant for parity, decided by a small set of rules: the
  small case has ~66x less data, so the verdicts are certain from real timings.
- test-backend-ops test mode: with only the CPU backend, test mode skips CPU (it is the
  reference), so there is nothing to compare and no case row; `-b CPU` makes it test the CPU
  backend against the CPU reference: real `OK` rows in today's format.
- llama-bench (markdown default and -o json) and llama-perplexity on SmolLM2 with tiny
  settings (the text: llama_inputs/perplexity-text.txt, written for this test).

Tools missing: skip, or fail with MESHCERT_REQUIRE_LIVE=1 (CI).
"""

from __future__ import annotations

import json
import shlex
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meshcert.cli import app
from meshcert.evidence import ingest_texts
from meshcert.evidence.rules import _PROMOTE_RULE, RULES, ComparisonSpec, DecisionSpec, RowSpec
from meshcert.evidence.run import RunPlan, RunSession, build_variants, evidence_from_runs, run_plan
from meshcert.evidence.settings import load_settings
from tests.support.llama_tools import build_info, llama_tool
from tests.support.real_models import smollm2_path

pytestmark = [pytest.mark.slow]

TEXT = Path(__file__).resolve().parent / "llama_inputs" / "perplexity-text.txt"

OP = "PAD_REFLECT_1D"
SMALL = r"ne_a=\[512,34,2,1\]"
LARGE = r"ne_a=\[3000,384,4,1\]"
ROWS = (
    RowSpec("pad_small", "PAD_REFLECT_1D 512x34x2", "E", OP, {"ne_a": (512, 34, 2, 1)},
            variant="small"),
    RowSpec("pad_large", "PAD_REFLECT_1D 3000x384x4", "E", OP, {"ne_a": (3000, 384, 4, 1)},
            variant="large"),
)


def decision(policy: str, baseline: str, candidate: str) -> DecisionSpec:
    return DecisionSpec(policy, policy, "E", "experimental",
                        (ComparisonSpec(f"{baseline} -> {candidate}", (baseline,),
                                        (candidate,)),), _PROMOTE_RULE, threshold=1.0)


# The built-in tables (the GLM gate stays, advisory: its rows are absent) plus two decisions:
# small work vs large work, so the large case as a candidate is a real, certain slowdown.
CPU_RULES = replace(RULES, rows=(*RULES.rows, *ROWS), decisions=(
    decision("pad_shrink", "pad_large", "pad_small"),
    decision("pad_grow", "pad_small", "pad_large")))


@pytest.fixture(scope="module")
def perf_session(tmp_path_factory: pytest.TempPathFactory) -> RunSession:
    tbo = str(llama_tool("test-backend-ops"))
    plan = RunPlan((tbo, "perf", "-b", "CPU", "-o", OP),
                   build_variants(args=[f"small:-p '{SMALL}'", f"large:-p '{LARGE}'"]),
                   repeats=3, timeout_s=120, checks=((tbo, "test", "-b", "CPU", "-o", OP),))
    return run_plan(plan, tmp_path_factory.mktemp("tbo-run"))


def test_real_perf_runs_are_recorded_with_provenance(perf_session: RunSession) -> None:
    records = perf_session.records
    assert [(r.role, r.variant, r.status) for r in records] == [
        ("check", "small", "ok"), ("check", "large", "ok"),
        *[("timed", v, "ok") for _ in range(3) for v in ("small", "large")]]
    info = build_info()
    for r in records:
        assert r.binary_sha256 == info["binaries"]["test-backend-ops"]
        assert r.exit_status == 0 and r.duration_s is not None and r.host


def test_real_perf_rows_feed_a_decision(perf_session: RunSession) -> None:
    evidence = evidence_from_runs(perf_session, settings=load_settings({}),
                                  rules=CPU_RULES, backend="CPU")
    table = evidence.ingest.table
    perf = table[table["kind"] == "perf"]
    assert sorted(perf.groupby("variant").size().items()) == [("large", 3), ("small", 3)]
    assert set(perf["backend"]) == {"CPU"} and (perf["us_per_run"] > 0).all()
    parity = table[table["kind"] == "parity"]
    assert set(parity["variant"]) == {"small", "large"} and parity["passed"].all()
    verdicts = {d.policy: d for d in evidence.report.decisions}
    # ~66x less data: faster beyond doubt; parity passed (CPU vs the CPU reference)
    assert verdicts["pad_shrink"].verdict == "promote", verdicts["pad_shrink"].reason
    assert verdicts["pad_grow"].verdict == "reject", verdicts["pad_grow"].reason
    (c,) = verdicts["pad_shrink"].comparisons
    assert c.speedup is not None and c.speedup > 1.0


def test_real_test_mode_rows_in_todays_format(perf_session: RunSession) -> None:
    check = perf_session.records[0]
    text = (perf_session.out_dir / str(check.log)).read_text()
    assert "Backend 1/1: CPU" in text and "1/1 backends passed" in text
    evidence = evidence_from_runs(perf_session, settings=load_settings({}),
                                  rules=CPU_RULES, backend="CPU")
    table = evidence.ingest.table
    small = table[(table["variant"] == "small") & (table["source_file"].str.endswith(
        "-check.log"))]
    kinds = set(small["kind"])
    assert {"parity", "parity_backend", "parity_total"} <= kinds
    assert not [p for p in evidence.ingest.problems if p.file.endswith("-check.log")]


def _bench_session(tmp: Path, extra: list[str]) -> RunSession:
    bench = str(llama_tool("llama-bench"))
    plan = RunPlan((bench, "-m", str(smollm2_path()), "-p", "16", "-n", "4", "-r", "2",
                    *extra), build_variants(args=["t1:-t 1", "t2:-t 2"]), repeats=1,
                   timeout_s=300)
    return run_plan(plan, tmp)


def test_real_llama_bench_json_rows(tmp_path: Path) -> None:
    session = _bench_session(tmp_path, ["-o", "json"])
    assert [r.status for r in session.records] == ["ok", "ok"]
    assert all(r.stream == "stdout" for r in session.records)
    assert all(r.version and r.version.startswith("version: ") for r in session.records)
    table = evidence_from_runs(session, settings=load_settings({})).ingest.table
    bench = table[table["kind"] == "bench"]
    assert set(bench["variant"]) == {"t1", "t2"}
    assert {"pp16", "tg4"} <= set(bench["op"])
    # -r 2: two samples of every test, in ns (us_per_run = ns / 1000) and t/s
    samples = bench[bench["metric"] == "sample_ns"]
    assert samples.groupby(["variant", "op"]).size().tolist() == [2, 2, 2, 2]
    assert (samples["us_per_run"] > 0).all()


def _reads(name: str, text: str) -> bool:
    """Does ingest get a row from this exact excerpt of today's output?"""
    return len(ingest_texts({name: text}).table) > 0


# Exact lines this build prints (stdout of llama-bench; stderr of llama-perplexity, where the
# ETA's continuation went to stdout, so the result sits mid-line behind a log prefix).
BENCH_MD = (
    "| model                          |       size |     params | backend    | threads |"
    "            test |                  t/s |\n"
    "| ------------------------------ | ---------: | ---------: | ---------- | ------: |"
    " --------------: | -------------------: |\n"
    "| llama 256M Q4_1                |  92.10 MiB |   134.52 M | CPU        |       2 |"
    "            pp16 |        24.81 ± 17.23 |\n")
PPL_LINE = ("0.05.468.151 I perplexity: 4.80 seconds per pass - ETA 0.05.503.275 I Final "
            "estimate: PPL = 18.3267 +/- 4.18239\n")


def test_real_llama_bench_markdown_rows(tmp_path: Path) -> None:
    assert _reads("bench.md", BENCH_MD)  # today's default markdown row, read as a value
    session = _bench_session(tmp_path, [])
    assert [r.status for r in session.records] == ["ok", "ok"]
    assert all(r.stream == "stdout" for r in session.records)
    table = evidence_from_runs(session, settings=load_settings({})).ingest.table
    bench = table[table["kind"] == "bench"]
    assert set(bench["variant"]) == {"t1", "t2"}
    assert {"pp16", "tg4"} <= set(bench["op"])


def test_real_llama_perplexity_quality_row(tmp_path: Path) -> None:
    ppl = str(llama_tool("llama-perplexity"))
    assert _reads("ppl.log", PPL_LINE)  # the log-prefixed, mid-line `Final estimate`
    plan = RunPlan((ppl, "-m", str(smollm2_path()), "-f", str(TEXT),
                    "-c", "128", "-b", "128", "--chunks", "2", "-t", "2"),
                   build_variants(names=["smollm2"]), repeats=1, timeout_s=300)
    session = run_plan(plan, tmp_path)
    (record,) = session.records
    assert record.status == "ok", (tmp_path / str(record.log)).read_text()[-2000:]
    evidence = evidence_from_runs(session, settings=load_settings({}))
    quality = evidence.ingest.table
    ppl_rows = quality[(quality["kind"] == "quality") & (quality["metric"] == "ppl")]
    assert len(ppl_rows) == 1
    value = float(ppl_rows["value"].iloc[0])
    assert 1.0 < value < 1000.0


def test_real_test_mode_without_a_backend_filter_has_nothing_to_compare(tmp_path: Path) -> None:
    # only the CPU backend: it is the reference, so test mode skips it and prints no case
    tbo = str(llama_tool("test-backend-ops"))
    plan = RunPlan((tbo, "test", "-o", OP), build_variants(), repeats=1, timeout_s=120)
    session = run_plan(plan, tmp_path)
    (record,) = session.records
    assert record.status == "ok"
    assert "Skipping CPU backend" in (tmp_path / str(record.log)).read_text()
    ingest = evidence_from_runs(session, settings=load_settings({})).ingest
    assert "parity" not in set(ingest.table["kind"])
    # not silently "passed": the run is flagged as holding no evidence
    assert [p.reason for p in ingest.problems] == [
        "no evidence rows found in this tbo-console file"]


def test_real_run_through_the_command_line(tmp_path: Path) -> None:
    tbo = str(llama_tool("test-backend-ops"))
    result = CliRunner().invoke(app, [
        "evidence", "run", "--out-dir", str(tmp_path), "-n", "1", "--json", "--",
        tbo, "perf", "-b", "CPU", "-o", OP, "-p", SMALL])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    (run,) = data["runs"]["runs"]
    assert run["status"] == "ok" and run["binary_sha256"] == build_info()["binaries"][
        "test-backend-ops"]
    rows = [r for r in data["report"]["rows"] if r["op"] == OP]
    assert [(r["variant"], r["backend"]) for r in rows] == [("default", "CPU")]


DOCS = Path(__file__).resolve().parents[2] / "docs" / "evidence.md"


def documented_run_example() -> str:
    """The `evidence run --out-dir argmax/` example of docs/evidence.md, as one shell line."""
    text = DOCS.read_text(encoding="utf-8").replace("\\\n", " ")
    (line,) = [ln for ln in text.splitlines()
               if ln.startswith("meshcert evidence run --out-dir argmax/ ")]
    return line


def test_the_documented_run_example_measures_rows(tmp_path: Path) -> None:
    # Issue 35: the example, copied verbatim, used to lose -p's backslashes in --args'
    # shell-split, match no case, print "1/1 backends passed" 8 times and exit 0.
    tbo = str(llama_tool("test-backend-ops"))
    line = documented_run_example().replace("argmax/", str(tmp_path) + "/")
    words = shlex.split(line.replace("test-backend-ops", shlex.quote(tbo)))  # as bash would
    assert words[:3] == ["meshcert", "evidence", "run"]
    result = CliRunner().invoke(app, words[1:])
    assert result.exit_code == 0, result.output + result.stderr
    assert "warning: run" not in result.stderr  # every timed run measured a row
    report = json.loads((tmp_path / "decisions.json").read_text())
    rows = {(r["variant"], r["params"]): r["n"] for r in report["rows"] if r["op"] == "ARGMAX"}
    assert {v: n for (v, _), n in rows.items()} == {"small": 3, "large": 3}
    params = {v: p for (v, p) in rows}
    assert "ne=[32,10,1,1]" in params["small"] and "ne=[1024,10,1,1]" in params["large"]
    runs = json.loads((tmp_path / "runs.json").read_text())["runs"]
    timed = [r for r in runs if r["role"] == "timed"]
    assert len(timed) == 6 and all(r["status"] == "ok" for r in timed)
    assert any(a == "ne=\\[32,10,1,1\\]" for r in timed for a in r["command"])
