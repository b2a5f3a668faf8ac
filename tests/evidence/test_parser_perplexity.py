"""llama-perplexity output: final PPL, and KL divergence statistics with --kl-divergence."""

from __future__ import annotations

import math

from meshcert.evidence.parsers import detect, perplexity
from meshcert.evidence.parsers.base import INCOMPLETE, MALFORMED, PERPLEXITY
from meshcert.evidence.table import table_from_parsed
from tests.evidence.samples import text


def metrics(body: str, name: str = "ppl.log") -> tuple[perplexity.ParsedFile, dict[str, dict]]:
    parsed = perplexity.parse(body, name)
    rows = table_from_parsed([(parsed, name, "default", "r")]).to_dict("records")
    return parsed, {r["metric"]: r for r in rows}


def test_plain_perplexity_run() -> None:
    parsed, found = metrics(text("ppl-q3_K.log"))
    assert parsed.problems == [] and parsed.format == PERPLEXITY
    assert list(found) == ["ppl"]
    ppl = found["ppl"]
    assert (ppl["value"], ppl["value_err"], ppl["source_line"]) == (3.9231, 0.02917, 15)
    assert (ppl["kind"], ppl["op"]) == ("quality", "perplexity")
    assert ppl["params"] == "model=GLM-5.2-Q3_K-00001-of-00004.gguf,n_ctx=512"
    assert ppl["build_commit"] == "8cf427ff"
    assert ppl["extra"] == {"file_type": "Q3_K - Medium", "chunks": 40}


def test_kl_divergence_run() -> None:
    parsed, found = metrics(text("kld-q2_K-routed-down.log"))
    assert parsed.problems == []
    assert (found["kld_mean"]["value"], found["kld_mean"]["value_err"]) == (0.030415, 0.000412)
    assert (found["same_top_p"]["value"], found["same_top_p"]["value_err"]) == (93.215, 0.079)
    assert found["ppl_q"]["value"] == 3.96942 and found["ppl_base"]["value"] == 3.9231
    assert found["ln_ppl_ratio"]["value"] == 0.011738 and found["cor_ln_ppl"]["value"] == 98.91
    assert found["kld_p99_9"]["value"] == 1.202117 and found["kld_p95"]["value"] == 0.110041
    assert found["kld_median"]["value"] == 0.012504 and found["kld_p0_1"]["value"] == -0.000001
    assert math.isnan(found["kld_max"]["value_err"])
    assert found["delta_p_mean"]["value"] == -0.412 and found["delta_p_rms"]["value"] == 4.602
    assert found["kld_mean"]["param_dict"]["model"] == "GLM-5.2-Q2_K-00001-of-00004.gguf"
    assert "ppl" not in found          # a KLD run reports Mean PPL(Q) instead


def test_plus_minus_spelling_and_no_model_facts() -> None:
    parsed, found = metrics("Mean    KLD:   0.5 +/- 0.1\nSame top p: 90.0 +/- 0.5 %\n")
    assert parsed.problems == []
    assert found["kld_mean"]["value_err"] == 0.1 and found["same_top_p"]["value"] == 90.0
    assert found["kld_mean"]["params"] == "" and found["kld_mean"]["build_commit"] is None


def test_interrupted_run_and_malformed_results() -> None:
    body = text("ppl-q3_K.log").split("Final estimate")[0]
    parsed, found = metrics(body)
    assert found == {}
    assert [(p.line, p.kind) for p in parsed.problems] == [(None, INCOMPLETE)]
    parsed, found = metrics("Final estimate: PPL = lots +/- 1\nMean    KLD: n/a\n"
                            "Final estimate: PPL = 4.5 +/- 0.1\n")
    assert [(p.line, p.kind) for p in parsed.problems] == [(1, MALFORMED), (2, MALFORMED)]
    assert found["ppl"]["source_line"] == 3


# -- real shapes: log prefixes, a fork's wording, early KL output, truncation -----------------


def test_final_line_behind_a_log_prefix_and_the_fork_wording() -> None:
    parsed, found = metrics("0.01.361.084 I Final estimate: PPL = 8.4633 +/- 0.13571\n")
    assert parsed.problems == [] and found["ppl"]["value"] == 8.4633
    parsed, found = metrics("Final estimate: PPL over 4 chunks for n_ctx=256 = 14.2651 +/- "
                            "1.20873\n")
    assert parsed.problems == [] and found["ppl"]["value_err"] == 1.20873
    assert found["ppl"]["param_dict"] == {"n_ctx": 256}


def test_a_cut_final_line_is_a_problem_not_a_value() -> None:
    for body in ("Final estimate: PPL = 6\n", "Final estimate: PPL = 6.1234 +/- 0.0"):
        parsed, found = metrics(body)
        assert "ppl" not in found       # the line's problem, then "no perplexity result"
        assert [(p.line, p.kind) for p in parsed.problems] == [(1, INCOMPLETE),
                                                              (None, INCOMPLETE)]


def test_early_2024_kl_divergence_statistics() -> None:
    parsed, found = metrics("===== KL-divergence statistics\nAverage:   0.010623 ±   0.000065\n"
                            "Median :   0.005517\nMinimum:  -0.000021\nMaximum:   3.456789\n"
                            "KLD_99 :   0.087041\nKLD_1  :   0.000013\n")
    assert parsed.problems == []
    assert {k: v["value"] for k, v in found.items()} == {
        "kld_mean": 0.010623, "kld_median": 0.005517, "kld_min": -0.000021,
        "kld_max": 3.456789, "kld_p99": 0.087041, "kld_p1": 0.000013}
    assert detect("===== KL-divergence statistics\nAverage:   0.010623 ±   0.000065\n") \
        == PERPLEXITY


def test_a_plus_minus_mangled_by_a_paste() -> None:
    parsed, found = metrics("Mean PPL(Q)                   :  10.910139 _   0.080259\n"
                            "Mean    _p: -0.979 _ 0.015 %\n")
    assert found["ppl_q"]["value_err"] == 0.080259
    assert [(p.line, p.kind) for p in parsed.problems] == [(2, MALFORMED)]
