"""A/B decisions (spec section 9, issue 42): exact sign-flip tests of the paired round deltas,
Holm over the report, the minimum rounds k, the minimum practical effect, short subjects.

Every comparison is the shipped adaptive sample (tests/evidence/data/mesh/
comparison-adaptive.json) with its paired deltas (and for subjects its metadata) edited, as the
issue's reviewer did; the p-values are derived by hand in each test."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from typer.testing import CliRunner

from meshcert.cli import app
from meshcert.evidence.ab import decide_ab
from meshcert.evidence.ingest import ingest_texts
from meshcert.evidence.report import ABDecision
from meshcert.evidence.rules import AB_RULE
from meshcert.evidence.stats import records
from tests.evidence.parsers.helpers import DATA

SHIPPED = json.loads((DATA / "comparison-adaptive.json").read_text(encoding="utf-8"))


def edited(deltas: dict[str, list[float]], ci95: list[float] | None = None,
           **metadata: Any) -> str:
    """The shipped sample with these paired deltas (median and ci95 as a producer gives)."""
    doc = json.loads(json.dumps(SHIPPED))
    doc["comparison"]["paired_delta_percent"] = {
        m: {"round_deltas": d, "median": float(np.median(d)) if d else (ci95 or [0, 0])[0],
            "ci95": ci95 or [min(d), max(d)]} for m, d in deltas.items()}
    doc["metadata"].update(metadata)
    return json.dumps(doc)


def decide(**files: str) -> dict[str, ABDecision]:
    result = ingest_texts({f"{k}.json": v for k, v in files.items()})
    assert result.problems == []
    return {d.file.removesuffix(".json"): d for d in decide_ab(records(result.table))}


TOKS = "output_tokens_per_second"


def test_the_shipped_sample_is_undecided_five_rounds_under_k_seven() -> None:
    """3 metrics with round deltas: Holm's smallest adjusted p at n is 3 * 2/2^n, <= 0.05 from
    n = 7; 5 rounds cannot reach it, so nothing is tested and nothing promotes."""
    (d,) = decide(shipped=json.dumps(SHIPPED)).values()
    assert d.verdict == "undecided"
    assert [(m.rounds, m.min_rounds, m.verdict, m.p_value) for m in d.metrics] == [
        (5, 7, "undecided", None)] * 3
    assert d.reason.startswith(f"{TOKS}: undecided (insufficient rounds: n = 5 < k = 7); "
                               "n = 5, median +5.10%, interval [+4.80%, +5.40%] (sign test, "
                               "93.8%); not tested; MDE none below k")


def test_one_two_or_three_rounds_are_undecided() -> None:
    """The issue's edits: [0.2] with a degenerate ci95, [0.2, 0.3], [0.01, 0.02, 0.03]. One
    metric alone: k = 6 (2/2^5 = 0.0625 > 0.05 >= 2/2^6)."""
    files = {"one": edited({TOKS: [0.2]}, [0.2, 0.2]), "two": edited({TOKS: [0.2, 0.3]}),
             "three": edited({TOKS: [0.01, 0.02, 0.03]})}
    for (name, text), n in zip(files.items(), (1, 2, 3), strict=True):
        (d,) = decide(**{name: text}).values()
        (m,) = d.metrics
        assert (d.verdict, m.verdict, m.rounds, m.min_rounds) == (
            "undecided", "undecided", n, 6)
        assert m.reason == f"insufficient rounds: n = {n} < k = 6"
        assert m.p_value is None and m.p_adjusted is None and m.mde_percent is None


def test_ten_percent_over_eight_positive_rounds_promotes_with_an_exact_p() -> None:
    """Hand-derived: all 8 deltas positive, so of the 2^8 = 256 equally likely sign vectors only
    the observed one and its mirror reach |sum| >= the observed sum: p = 2/256 = 0.0078125
    two-sided, before Holm; one metric in the family, so Holm leaves it. The median +10.05% is
    above the 1% minimum effect: promote."""
    deltas = [9.6, 10.1, 10.4, 9.8, 10.0, 10.2, 9.9, 10.3]
    (d,) = decide(big=edited({TOKS: deltas})).values()
    (m,) = d.metrics
    assert (d.verdict, m.verdict) == ("promote", "promote")
    assert m.p_value == 2 / 256 == 0.0078125 and m.p_adjusted == 2 / 256 and m.holm_m == 1
    assert m.test == ("exact sign-flip permutation test of the mean, two-sided "
                      "(all 2^8 = 256 sign vectors)")
    assert (m.rounds, m.min_rounds, m.median) == (8, 6, 10.05)
    # n = 8: P(Bin(8, 1/2) <= 1) = 9/256, doubled 0.07 > 0.05, so [x_(1), x_(8)] at 1 - 2/256
    assert (m.interval_low, m.interval_high) == (9.6, 10.4)
    assert m.interval_coverage == 1 - 2 / 256
    sd = float(np.std(deltas, ddof=1))
    assert m.mde_percent is not None and math.isclose(
        m.mde_percent, (1.959964 + 0.841621) * sd / math.sqrt(8), rel_tol=1e-5)
    assert d.reason == (f"{TOKS}: promote (significantly better by +10.05%); n = 8, "
                        "median +10.05%, interval [+9.60%, +10.40%] (sign test, 99.2%); exact "
                        f"sign-flip p 0.007812, Holm p 0.007812 (m = 1); MDE {m.mde_percent:.2f}%"
                        "; min effect 1%")


def test_two_hundredths_of_a_percent_over_twenty_rounds_is_no_practical_change() -> None:
    """20 positive rounds around +0.02%: p = 2/2^20, significant; the median is below the 1%
    minimum practical effect, so it never promotes."""
    deltas = [0.02 + 0.001 * ((i % 5) - 2) for i in range(20)]
    (d,) = decide(tiny=edited({TOKS: deltas})).values()
    (m,) = d.metrics
    assert m.p_value == 2 / 2**20 and m.p_adjusted is not None and m.p_adjusted < 0.05
    assert (d.verdict, m.verdict) == ("no-practical-change", "no-practical-change")
    assert m.reason == ("significant, but the median +0.02% is smaller than the minimum "
                        "practical effect 1%")


def test_an_insignificant_change_inside_the_minimum_effect_is_no_practical_change() -> None:
    """Mixed signs within +-0.3% over 20 rounds: not significant, but the 95.9% sign-test
    interval of the median lies wholly inside +-1% (an equivalence conclusion)."""
    deltas = [0.3, -0.2, 0.1, -0.3, 0.2, -0.1, 0.25, -0.25, 0.05, -0.05] * 2
    (m,) = next(iter(decide(flat=edited({TOKS: deltas})).values())).metrics
    assert m.p_value is not None and m.p_value > 0.05
    assert m.verdict == "no-practical-change"
    assert m.interval_low is not None and m.interval_high is not None
    assert m.interval_low > -1 and m.interval_high < 1


def test_mixed_signs_are_inconclusive_and_a_worse_metric_rejects() -> None:
    """Mixed signs over 8 rounds: not significant, interval past +-1%: inconclusive. TTFT up
    6% over 8 rounds (lower is better): p = 2/256, Holm over 2 metrics 4/256 < 0.05: reject,
    and any rejected metric rejects the comparison."""
    mixed = [3.0, -2.0, 1.0, -1.5, 2.0, -2.5, 1.5, -1.0]
    worse = [6.0, 5.5, 7.0, 6.2, 5.9, 6.4, 6.1, 5.7]
    (d,) = decide(ab=edited({TOKS: mixed, "ttft_ms_p95": worse})).values()
    toks, ttft = d.metrics
    assert toks.verdict == "inconclusive" and toks.p_value is not None and toks.p_value > 0.5
    assert (ttft.verdict, ttft.p_value, ttft.p_adjusted) == ("reject", 2 / 256, 4 / 256)
    assert d.verdict == "reject" and d.reason.startswith(
        "ttft_ms_p95: reject (significantly worse by +6.05%)")


def test_holm_spans_the_report_and_raises_k() -> None:
    """Alone, 8 positive rounds promote (k = 6). With four more comparisons of two metrics each
    in the report, the family is m = 9: k = 9 (9 * 2/2^8 = 0.07 > 0.05 >= 9 * 2/2^9), so the
    same 8 rounds are undecided, and 9 of them are tested with Holm's multiplier."""
    strong = {TOKS: [4.8, 5.1, 5.4, 4.9, 5.2, 5.0, 5.3, 4.7]}
    others = {f"n{i}": edited({TOKS: [1.0, -1.0, 0.5, -0.4, 0.2, 0.1, -0.3, 0.6, -0.2 - i],
                               "makespan_ms": [0.3, -0.2, 0.1, -0.1, 0.2, 0.4, -0.5, 0.1, -0.3]})
              for i in range(4)}
    assert decide(a=edited(strong))["a"].verdict == "promote"
    crowded = decide(a=edited(strong), **others)["a"].metrics[0]
    assert (crowded.verdict, crowded.min_rounds, crowded.holm_m) == ("undecided", 9, None)
    nine = decide(a=edited({TOKS: [*strong[TOKS], 5.05]}), **others)["a"].metrics[0]
    assert nine.p_value == 2 / 512 and nine.holm_m == 9
    assert nine.p_adjusted == 9 * 2 / 512 and nine.verdict == "promote"


def test_a_producer_only_interval_is_reported_and_never_decides() -> None:
    (d,) = decide(producer=edited({TOKS: []}, [4.0, 6.0])).values()
    (m,) = d.metrics
    assert (d.verdict, m.verdict, m.ci95, m.rounds) == ("undecided", "undecided", [4.0, 6.0], 0)
    assert m.reason == ("no round deltas: the producer's ci95 [+4, +6]% is reported, not "
                        "tested; it never decides alone")


def test_non_finite_round_deltas_are_named_with_their_file_and_field_never_used() -> None:
    """The parser refuses NaN / Infinity tokens (tests/evidence/parsers/test_ab_comparison.py);
    rows reaching the rules another way (a merged evidence JSON) are checked again."""
    rows = records(ingest_texts({"ab.json": edited({TOKS: [1.0] * 8})}).table)
    for r in rows:
        if r.get("kind") == "ab_delta":
            r["extra"] = {**r["extra"], "round_deltas": [1.0, math.nan, 2.0, 3.0, 4.0, 5.0]}
    (d,) = decide_ab(rows)
    (m,) = d.metrics
    assert (d.verdict, m.verdict, m.p_value) == ("undecided", "undecided", None)
    assert m.reason == (f"ab.json: /comparison/paired_delta_percent/{TOKS}/round_deltas holds "
                        "nan (not finite): not used")
    for r in rows:
        if r.get("kind") == "ab_delta":
            r["extra"] = {**r["extra"], "round_deltas": [1.0, math.inf, None]}
    assert decide_ab(rows)[0].metrics[0].reason == (
        f"ab.json: /comparison/paired_delta_percent/{TOKS}/round_deltas holds None, not a "
        "number: not used")


def test_ten_thousand_rounds_are_tested_by_a_seeded_monte_carlo() -> None:
    deltas = [round(5.0 + 3.0 * math.sin(i), 3) for i in range(10_000)]
    (m,) = next(iter(decide(long=edited({TOKS: deltas})).values())).metrics
    assert m.rounds == 10_000 and m.test is not None
    assert m.test.startswith("Monte Carlo sign-flip permutation test of the mean, two-sided "
                             f"({AB_RULE.resamples:,} random sign vectors, seed ")
    assert m.p_value == 1 / (AB_RULE.resamples + 1) and m.verdict == "promote"


SERVER = {"binary": "/opt/mesh/bin/skippy-server", "version": "0.79.0",
          "commit": "8baeeca1f2d3c4b5a6978877665544332211aabb",
          "binary_sha256": "3f" * 32, "round": 1,
          "args": ["--port", "9337", "--ctx-size", "32768", "--parallel", "4", "--metrics"],
          "env": {"SKIPPY_ADAPTIVE_PREFILL": "1", "SKIPPY_LOG": "info"},
          "host": {"name": "bench-h100-01", "gpu": "NVIDIA H100 80GB HBM3",
                   "driver": "550.54.15", "cuda": "12.4"},
          "model": {"id": "Qwen/Qwen3-8B", "revision": "b968826d9c46dd6066d109eabc6255188de91218",
                    "file": "Qwen3-8B-Q4_K_M.gguf"}}
NEW_SERVER = {**SERVER, "version": "0.79.1",
              "commit": "8eda2ee0c1b2a3948576f6e5d4c3b2a190817263", "binary_sha256": "a1" * 32}


def test_the_subject_names_only_what_differs_on_one_line() -> None:
    """Two whole setups (~900 characters of JSON with `"round": 1`) -> the fields that differ;
    the rest stays in the decision's details."""
    assert len(json.dumps(SERVER)) + len(json.dumps(NEW_SERVER)) > 900
    (d,) = decide(srv=edited({TOKS: [5.0] * 8}, old=SERVER, new=NEW_SERVER)).values()
    assert d.comparison == "skippy-server 8baeeca -> 8eda2ee (commit, version, binary_sha256)"
    assert "\n" not in d.comparison and len(d.comparison) <= 100
    assert [(x.field, x.old, x.new) for x in d.differences] == [
        ("binary_sha256", "3f" * 32, "a1" * 32),
        ("commit", SERVER["commit"], NEW_SERVER["commit"]), ("version", "0.79.0", "0.79.1")]
    assert d.old is not None and json.loads(d.old) == SERVER      # the whole setup: details


def test_identical_setups_say_so_and_plain_labels_stay_as_they_are() -> None:
    got = decide(same=edited({TOKS: [5.0] * 8}, old=SERVER, new=SERVER),
                 labels=edited({TOKS: [5.0] * 8}),
                 label=edited({TOKS: [5.0] * 8}, old="v0.79.0"))
    assert got["same"].comparison == "skippy-server: no setup difference recorded"
    assert got["same"].differences == []
    assert got["labels"].comparison == "v0.78.0 -> v0.79.0"
    assert got["label"].comparison == "v0.79.0: no setup difference recorded"


def test_every_format_names_the_short_subject_not_the_whole_setups(tmp_path: Path) -> None:
    """Console headline, Markdown (the measurements' setup column too), SARIF: the subject,
    never `"round": 1` and the rest (in decisions.json and the setup differences table)."""
    worse = [-6.0, -5.5, -7.0, -6.2, -5.9, -6.4, -6.1, -5.7]
    (tmp_path / "srv.json").write_text(edited({TOKS: worse}, old=SERVER, new=NEW_SERVER))
    result = CliRunner().invoke(app, [
        "evidence", "report", str(tmp_path / "srv.json"), "--out-dir", str(tmp_path / "out"),
        "--md", str(tmp_path / "r.md"), "--sarif", str(tmp_path / "r.sarif")])
    assert result.exit_code == 0, result.output
    subject = "skippy-server 8baeeca -> 8eda2ee (commit, version, binary_sha256)"
    item = result.stdout.splitlines()[1]
    assert item.split(None, 1)[1].startswith(f"A/B {subject} reject")
    md = (tmp_path / "r.md").read_text()
    sarif = json.loads((tmp_path / "r.sarif").read_text())
    (message,) = [r["message"]["text"] for r in sarif["runs"][0]["results"]
                  if r["ruleId"] == "ab-comparison"]
    assert message.startswith(f"A/B {subject} reject: {TOKS}: reject (significantly worse")
    for text in (item, message, md):
        assert '"round"' not in text and "bench-h100-01" not in text
    # the measurements behind it: each row's setup is the subject and what is its own
    rows = md.split("## mesh-llm measurements")[1].split("\n## ")[0].splitlines()[4:]
    assert rows and all(row.split(" | ")[2].startswith(subject) for row in rows)
    assert f"| A/B cell | {subject}; version=old,round=1 | {TOKS} | 1 | 400 |" in md


def test_one_sided_tests_towards_the_better_side_and_never_reject() -> None:
    """sides = 1: k = 5 for one metric (1/2^5 = 0.031 <= 0.05); 5 positive rounds give
    p = 1/32; 5 negative rounds give p = 1 (the test only looks the better way)."""
    one_sided = replace(AB_RULE, sides=1)
    for deltas, verdict, p in (([4.8, 5.1, 5.4, 4.9, 5.2], "promote", 1 / 32),
                               ([-4.8, -5.1, -5.4, -4.9, -5.2], "inconclusive", 1.0)):
        result = ingest_texts({"one.json": edited({TOKS: deltas})})
        (d,) = decide_ab(records(result.table), one_sided)
        (m,) = d.metrics
        assert (m.min_rounds, m.p_value, m.verdict) == (5, p, verdict)
        assert m.test is not None and "one-sided" in m.test


def test_a_median_against_the_tested_mean_is_inconclusive() -> None:
    """The test is of the mean. 9 rounds at +12% and 11 at -1.5%: mean +4.58%, median -1.50%.
    Hand-derived two-sided p: the sign vectors with |sum s_i |d_i|| >= 91.5 keep all nine 12s
    one way (2^11) or eight of them with at least 8 of the eleven 1.5s (9 x 232 = 2088), each
    mirrored: 2 x 4136 / 2^20 = 0.0079 < 0.05. Significant, but the median says worse while the
    mean says better: neither promote nor 'significantly worse by -1.50%'."""
    deltas = [12.0] * 9 + [-1.5] * 11
    for rule in (AB_RULE, replace(AB_RULE, sides=1)):
        result = ingest_texts({"split.json": edited({TOKS: deltas})})
        (d,) = decide_ab(records(result.table), rule)
        (m,) = d.metrics
        assert m.p_value == (2 * 4136 if rule.sides == 2 else 4136) / 2**20
        assert (m.median, d.verdict, m.verdict) == (-1.5, "inconclusive", "inconclusive")
        assert m.reason == ("significant by the test of the mean (+4.58%), but the median "
                            "-1.50% points the other way: the rounds disagree")


def test_a_subject_shows_where_long_labels_differ_and_says_when_no_setup_was_recorded() -> None:
    """Two labels alike for their first 100 characters were both cut to the same 32 ('... ->'
    the same text); a comparison.json without metadata was 'A/B: no setup difference
    recorded', which the headline printed as 'A/B A/B: ...'."""
    label = "skippy-server built from a long descriptive label that goes on for a while, "
    no_meta = json.loads(edited({TOKS: [5.0] * 8}))
    del no_meta["metadata"]
    got = decide(long=edited({TOKS: [5.0] * 8}, old=label + "v1", new=label + "v2"),
                 bare=json.dumps(no_meta))
    assert got["long"].comparison == "...v1 -> ...v2"
    assert got["bare"].comparison == ("no setup recorded (comparison.json has no metadata.old / "
                                      "metadata.new)")
    assert got["bare"].differences == []


def test_the_method_names_the_statistics_that_decided(tmp_path: Path) -> None:
    """An A/B-only report's Method (Markdown) and provenance (HTML) name the sign-flip test, its
    m and k, never the Phase E bootstrap it did not run; with Phase E rows beside it, both."""
    phase_e = Path(__file__).parent / "samples" / "phase-e-perf.console.log"
    (tmp_path / "ab.json").write_text(edited({TOKS: [5.0, 5.2, 4.9, 5.1, 5.3, 4.8, 5.0, 5.1]}))
    for name, extra in (("ab", []), ("both", [str(phase_e)])):
        out = tmp_path / name
        result = CliRunner().invoke(app, [
            "evidence", "report", str(tmp_path / "ab.json"), *extra, "--out-dir", str(out),
            "--html", str(out / "r.html"), "-q"])
        assert result.exit_code == 0, result.output
        method = (out / "summary.md").read_text().split("## Method\n", 1)[1]
        html = (out / "r.html").read_text()
        assert ("- A/B: sign-flip permutation test of the mean of each metric's paired round "
                "deltas") in method
        assert "Holm over the report&#39;s m = 1 A/B metric(s); at least k = 6 rounds" in html
        bootstrap = "bootstrap: 10000 replicates"
        assert (bootstrap in method) is (name == "both")
        assert ("bootstrap replicates" in html) is (name == "both")
