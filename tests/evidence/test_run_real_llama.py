"""`evidence run` on the real llama.cpp tools (scripts/build_llama_cpp.py), on this CPU.

- test-backend-ops perf: two small ARGMAX cases as baseline and candidate (the variants differ
  by their `-p` filter), 3 interleaved runs each, plus one `test` mode check per variant for
  parity, decided by a small catalog; the verdicts follow from real timings.
- test-backend-ops test mode: with only the CPU backend, test mode skips CPU (it is the
  reference), so there is nothing to compare and no case row; `-b CPU` makes it test the CPU
  backend against the CPU reference: real `OK` rows in today's format.
- llama-bench (markdown default and -o json) and llama-perplexity on SmolLM2 with tiny
  settings (the text: samples/perplexity-text.txt).

Tools missing: skip, or fail with MESHCERT_REQUIRE_LIVE=1 (CI).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from evidence.catalog import (
    _PROMOTE_RULE,
    Catalog,
    ComparisonSpec,
    DecisionSpec,
    RowSpec,
)
from evidence.run import RunPlan, RunSession, build_variants, evidence_from_runs, run_plan
from evidence.settings import load_settings
from tests.evidence.samples import SAMPLES
from tests.support.llama_tools import build_info, llama_tool
from tests.support.real_models import smollm2_path

pytestmark = [pytest.mark.slow]

SMALL = r"ne=\[32,10,1,1\]"
LARGE = r"ne=\[1024,10,1,1\]"
ROWS = (
    RowSpec("argmax_small", "ARGMAX 32x10", "E", "ARGMAX", {"ne": (32, 10, 1, 1)},
            variant="small"),
    RowSpec("argmax_large", "ARGMAX 1024x10", "E", "ARGMAX", {"ne": (1024, 10, 1, 1)},
            variant="large"),
)


def decision(policy: str, baseline: str, candidate: str) -> DecisionSpec:
    return DecisionSpec(policy, policy, "E", "experimental",
                        (ComparisonSpec(f"{baseline} -> {candidate}", (baseline,),
                                        (candidate,)),), _PROMOTE_RULE, threshold=1.0)


# small work vs large work: the large case as a candidate is a real, certain slowdown
CPU_CATALOG = Catalog(rows=ROWS, dispatch_checks=(), gates=(), estimate_terms=(),
                      estimate_shares={}, shared_expert_row="", decisions=(
                          decision("argmax_shrink", "argmax_large", "argmax_small"),
                          decision("argmax_grow", "argmax_small", "argmax_large")))


@pytest.fixture(scope="module")
def perf_session(tmp_path_factory: pytest.TempPathFactory) -> RunSession:
    tbo = str(llama_tool("test-backend-ops"))
    plan = RunPlan((tbo, "perf", "-b", "CPU", "-o", "ARGMAX"),
                   build_variants(args=[f"small:-p {SMALL}", f"large:-p {LARGE}"]),
                   repeats=3, timeout_s=120,
                   checks=((tbo, "test", "-b", "CPU", "-o", "ARGMAX"),))
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
                                  catalog=CPU_CATALOG, backend="CPU")
    table = evidence.ingest.table
    perf = table[table["kind"] == "perf"]
    assert sorted(perf.groupby("variant").size().items()) == [("large", 3), ("small", 3)]
    assert set(perf["backend"]) == {"CPU"} and (perf["us_per_run"] > 0).all()
    parity = table[table["kind"] == "parity"]
    assert set(parity["variant"]) == {"small", "large"} and parity["passed"].all()
    verdicts = {d.policy: d for d in evidence.report.decisions}
    # 32x less work: faster beyond doubt; parity passed (CPU vs the CPU reference)
    assert verdicts["argmax_shrink"].verdict == "promote", verdicts["argmax_shrink"].reason
    assert verdicts["argmax_grow"].verdict == "reject", verdicts["argmax_grow"].reason
    (c,) = verdicts["argmax_shrink"].comparisons
    assert c.speedup is not None and c.speedup > 1.0


def test_real_test_mode_rows_in_todays_format(perf_session: RunSession) -> None:
    check = perf_session.records[0]
    text = (perf_session.out_dir / str(check.log)).read_text()
    assert "Backend 1/1: CPU" in text and "1/1 backends passed" in text
    evidence = evidence_from_runs(perf_session, settings=load_settings({}),
                                  catalog=CPU_CATALOG, backend="CPU")
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
    assert (bench["us_per_run"] > 0).all()


def test_real_llama_bench_markdown_rows(tmp_path: Path) -> None:
    if importlib.util.find_spec("evidence.parsers.llama_bench_md") is None:
        pytest.skip("this branch refuses llama-bench markdown; the markdown parser (issue 13, "
                    "part a) reads it")
    session = _bench_session(tmp_path, [])
    assert [r.status for r in session.records] == ["ok", "ok"]
    table = evidence_from_runs(session, settings=load_settings({})).ingest.table
    bench = table[table["kind"] == "bench"]
    assert set(bench["variant"]) == {"t1", "t2"}
    assert {"pp16", "tg4"} <= set(bench["op"])


def test_real_llama_perplexity_quality_row(tmp_path: Path) -> None:
    ppl = str(llama_tool("llama-perplexity"))
    plan = RunPlan((ppl, "-m", str(smollm2_path()), "-f", str(SAMPLES / "perplexity-text.txt"),
                    "-c", "128", "--chunks", "2", "-t", "2"),
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
