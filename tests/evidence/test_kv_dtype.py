"""KV-cache dtype defaults (a rule of ours). llama-bench JSON and llama-perplexity lines are
shaped as the tools print them; the values are derived by hand for each case."""

from __future__ import annotations

import json

from meshcert.evidence.ingest import ingest_texts
from meshcert.evidence.kv_dtype import decide_kv_dtypes
from meshcert.evidence.report import KvDtypeDecision
from meshcert.evidence.stats import records


def _bench(dtype: str, samples: list[float]) -> str:
    return json.dumps([{"build_commit": "abc", "model_filename": "m.gguf", "n_prompt": 0,
                        "n_gen": 128, "type_k": dtype, "type_v": dtype, "avg_ns": 1,
                        "avg_ts": sum(samples) / len(samples), "samples_ts": samples}])


def _ppl(value: float, err: float) -> str:
    return ("perplexity: calculating perplexity over 10 chunks\n"
            f"Final estimate: PPL = {value:.4f} +/- {err:.4f}\n")


FAST = [55.0, 55.3, 54.8, 55.1, 55.2]
BASE = [50.0, 50.2, 49.9, 50.1, 50.3]


def _decide(texts: dict[str, str]) -> dict[str, KvDtypeDecision]:
    result = ingest_texts(texts)
    assert result.problems == []
    return {d.dtype: d for d in decide_kv_dtypes(records(result.table))}


def test_gain_and_perplexity_within_limit_promote() -> None:
    got = _decide({"bench-f16.json": _bench("f16", BASE), "bench-q8_0.json": _bench("q8_0", FAST),
                   "ppl-f16.txt": _ppl(6.1, 0.001), "ppl-q8_0.txt": _ppl(6.101, 0.001)})
    d = got["q8_0"]
    assert d.verdict == "promote" and d.gain_metric == "sample_ts"
    assert d.gain is not None and round(d.gain, 3) == 1.1
    assert d.ppl_ratio_upper is not None and d.ppl_ratio_upper <= 1.01


def test_a_perplexity_bound_above_the_limit_rejects() -> None:
    got = _decide({"bench-f16.json": _bench("f16", BASE), "bench-q4_0.json": _bench("q4_0", FAST),
                   "ppl-f16.txt": _ppl(6.1, 0.01), "ppl-q4_0.txt": _ppl(6.2, 0.01)})
    assert got["q4_0"].verdict == "reject"
    assert "upper 95% bound" in got["q4_0"].reason


def test_no_perplexity_run_is_inconclusive_never_promote() -> None:
    got = _decide({"bench-f16.json": _bench("f16", BASE), "bench-q8_0.json": _bench("q8_0", FAST)})
    assert got["q8_0"].verdict == "inconclusive"
    assert got["q8_0"].reason.startswith("no perplexity run of q8_0")


def test_no_significant_gain_is_inconclusive() -> None:
    got = _decide({"bench-f16.json": _bench("f16", BASE),
                   "bench-q8_0.json": _bench("q8_0", [50.1, 49.8, 50.2, 50.0, 50.1]),
                   "ppl-f16.txt": _ppl(6.1, 0.001), "ppl-q8_0.txt": _ppl(6.101, 0.001)})
    assert got["q8_0"].verdict == "inconclusive"
    assert got["q8_0"].reason == "no throughput or memory gain is significant after Holm"


def test_other_setups_never_pool() -> None:
    other = _bench("q8_0", FAST).replace('"n_gen": 128', '"n_gen": 64')
    got = _decide({"bench-f16.json": _bench("f16", BASE), "bench-q8_0.json": other,
                   "ppl-f16.txt": _ppl(6.1, 0.001), "ppl-q8_0.txt": _ppl(6.101, 0.001)})
    assert got["q8_0"].verdict == "inconclusive" and got["q8_0"].gain is None
