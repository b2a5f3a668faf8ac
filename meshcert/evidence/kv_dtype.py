"""KV-cache dtype as a package's publisher default, by `rules.KV_DTYPE_RULE`.

Throughput (or memory) samples: rows whose metric is one of the rule's gain metrics and whose
params name a cache type (`type_k`/`type_v`, `cache_type_k`/`cache_type_v`). A candidate dtype
is compared only with baseline (f16) rows of the same setup (every other param equal: setups
that differ never pool); gain = candidate over baseline (tok/s: candidate / baseline; memory:
baseline / candidate), its interval and one-sided p from `stats.ratio_interval`, Holm across
every (dtype, setup, metric) of the report. Perplexity: `quality` rows (llama-perplexity) whose
variant label or file name names the dtype (`f16`, `q8_0`, ...): the ratio's upper 95% bound is
PPL(Q)/PPL(base) + 1.96 x its error from a KL-divergence run, else the two PPLs' ratio with
their errors combined (delta method). Verdicts: no perplexity -> inconclusive; upper bound above
the limit -> reject; a Holm-cleared gain -> promote; else inconclusive.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from meshcert.evidence.report import ABVerdict, KvDtypeDecision
from meshcert.evidence.rules import ALPHA_ONE_SIDED, KV_DTYPE_RULE, MIN_SAMPLES, KvDtypeRule
from meshcert.evidence.stats import RatioEstimate, holm, ratio_interval

Z95 = 1.959963984540054


def _dtype(params: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    found = {str(params[k]) for k in keys if k in params}
    return found.pop() if len(found) == 1 else None


def _where(rec: Mapping[str, Any]) -> str:
    pointer = (rec.get("extra") or {}).get("pointer")
    return f"{rec.get('source_file')}:{rec.get('source_line')}" + (f"#{pointer}" if pointer
                                                                    else "")


def _names(rec: Mapping[str, Any], dtype: str) -> bool:
    label = f"{rec.get('variant')} {rec.get('source_file')}".lower()
    return dtype.lower() in label.replace("-", "_")


def _ppl(records: list[Mapping[str, Any]], dtype: str, base: str
         ) -> tuple[float | None, float | None, list[str]]:
    cand = [r for r in records if _names(r, dtype)]
    for r in cand:
        if r.get("metric") == "ppl_ratio" and r.get("value") is not None:
            err = r.get("value_err") or 0.0
            return float(r["value"]), float(r["value"]) + Z95 * float(err), [_where(r)]
    c = next((r for r in cand if r.get("metric") in ("ppl", "ppl_q")), None)
    b = next((r for r in records if _names(r, base) and r.get("metric") == "ppl"), None)
    if c is None or b is None or not b.get("value"):
        return None, None, []
    cv, bv = float(c["value"]), float(b["value"])
    ratio = cv / bv
    rel = math.hypot(float(c.get("value_err") or 0) / cv, float(b.get("value_err") or 0) / bv)
    return ratio, ratio * (1 + Z95 * rel), [_where(c), _where(b)]


def decide_kv_dtypes(records: Iterable[Mapping[str, Any]], rule: KvDtypeRule = KV_DTYPE_RULE
                     ) -> list[KvDtypeDecision]:
    recs = list(records)
    samples: dict[tuple[str, str, str], dict[str, list[float]]] = {}
    refs: dict[tuple[str, str, str], list[str]] = {}
    for r in recs:
        metric = r.get("metric")
        params = r.get("param_dict") or {}
        if metric not in rule.gain_metrics or r.get("value") is None:
            continue
        if metric == "sample_ts" or r.get("kind") in ("mesh_metric", "history"):
            dtype = _dtype(params, rule.cache_keys)
            if dtype is None:
                continue
            setup = ",".join(f"{k}={v}" for k, v in sorted(params.items())
                             if k not in rule.cache_keys)
            key = (str(r.get("op")), str(metric), setup)
            samples.setdefault(key, {}).setdefault(dtype, []).append(float(r["value"]))
            refs.setdefault(key, []).append(_where(r))
    present = {d for by in samples.values() for d in by if d in rule.candidates}
    if not present:
        return []
    estimates: dict[str, tuple[RatioEstimate, str, str, str]] = {}
    for (op, metric, setup), by in samples.items():
        base = by.get(rule.baseline, [])
        for dtype in present:
            cand = by.get(dtype, [])
            if len(base) < MIN_SAMPLES or len(cand) < MIN_SAMPLES:
                continue
            b, c = np.asarray(base), np.asarray(cand)
            higher = rule.gain_metrics[metric] == "higher"
            est = ratio_interval([c] if higher else [b], [b] if higher else [c], threshold=1.0,
                                 name=f"kv/{dtype}/{op}/{metric}/{setup}")
            estimates[f"{dtype}|{op}|{metric}|{setup}"] = (est, dtype, metric, setup)
    adjusted = holm({k: v[0].p_value for k, v in estimates.items()}, ALPHA_ONE_SIDED)
    ppl_rows = [r for r in recs if r.get("kind") == "quality"]
    out: list[KvDtypeDecision] = []
    for dtype in sorted(present):
        ratio, upper, ppl_refs = _ppl(ppl_rows, dtype, rule.baseline)
        mine = {k: v for k, v in estimates.items() if v[1] == dtype}
        best = min(mine, key=lambda k: adjusted[k].p_adjusted) if mine else None
        d = KvDtypeDecision(dtype=dtype, baseline=rule.baseline, verdict="inconclusive",
                            reason="", gain=None, ppl_ratio=ratio, ppl_ratio_upper=upper,
                            max_ppl_ratio=rule.max_ppl_ratio, sources=ppl_refs)
        cleared = False
        if best is not None:
            est, _, metric, setup = mine[best]
            d.gain_metric, d.gain_setup, d.gain = metric, setup, est.point
            d.gain_ci = [est.ci_low, est.ci_high]
            d.p_value, d.p_adjusted = est.p_value, adjusted[best].p_adjusted
            cleared = adjusted[best].p_adjusted < ALPHA_ONE_SIDED
            op = best.split("|", 2)[1]
            d.sources += refs.get((op, metric, setup), [])[:20]
        verdict: ABVerdict
        if upper is None:
            verdict, reason = "inconclusive", (f"no perplexity run of {dtype} against "
                                               f"{rule.baseline}: never promoted without one")
        elif upper > rule.max_ppl_ratio:
            verdict, reason = "reject", (f"perplexity ratio {ratio:.4f} vs {rule.baseline}, "
                                         f"upper 95% bound {upper:.4f} > {rule.max_ppl_ratio}")
        elif cleared:
            verdict, reason = "promote", (f"{d.gain_metric} gain {d.gain:.3f}x is significant "
                                          f"(Holm) and the perplexity ratio's upper bound "
                                          f"{upper:.4f} <= {rule.max_ppl_ratio}")
        else:
            verdict = "inconclusive"
            reason = ("no throughput or memory gain is significant after Holm"
                      if best is not None else f"fewer than {MIN_SAMPLES} samples of {dtype} "
                      f"and {rule.baseline} in one setup")
        d.verdict, d.reason = verdict, reason
        out.append(d)
    return out
