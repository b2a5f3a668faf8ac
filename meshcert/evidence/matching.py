"""Resolve the rules against the ingested table, once: `resolve_rules` builds the RuleTable
(meshcert.evidence.rule_table) the gate, the decisions and the report read.

One pass: the samples are indexed by (op, variant), each row rule is matched against its
candidates once (`RowSpec.matches_params`), and every label gets its samples, median, status
and parity cases; every dispatch check its kernel and test lines; every quality row its
selectors. Only one backend is evaluated (rows of different backends are different
measurements): the one asked for, else the non-CPU backend with the most rows the rules name,
else the one with most perf rows. Rows without a backend name (e.g. lines of a file without a
section header) count for every backend.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from meshcert.evidence.errors import EvidenceError
from meshcert.evidence.report import RowStatus
from meshcert.evidence.rule_table import DispatchEvidence, ResolvedRow, RuleTable
from meshcert.evidence.rules import (
    GLM_DOWN_KERNEL_MARK,
    KERNEL_KEYS,
    DispatchCheckSpec,
    RowSpec,
    Rules,
)
from meshcert.evidence.stats import RowKey, SampleSet, SourceLine, collect_samples, records

Samples = list[tuple[RowKey, SampleSet]]


class BackendError(EvidenceError):
    """The requested backend has no rows."""


def _problems(spec: DispatchCheckSpec, kernel: str | None,
              backend_tests: Sequence[tuple[str | None, int | None, int | None, SourceLine]],
              backends: tuple[int | None, int | None, SourceLine] | None) -> tuple[str, ...]:
    """Why a dispatch check fails (empty when it passes)."""
    out: list[str] = []
    want = "picks" if spec.expect_glm_down else "does not pick"
    if kernel is None:
        out.append(f"no dispatched kernel name (perf_metadata {'/'.join(KERNEL_KEYS)}=) "
                   f"for {spec.variant}")
    elif (GLM_DOWN_KERNEL_MARK in kernel) != spec.expect_glm_down:
        out.append(f"{spec.variant} dispatched {kernel} (expected a kernel that "
                   f"{want} {GLM_DOWN_KERNEL_MARK})")
    tp, tt = spec.tests
    if not any((p, t) == (tp, tt) for _, p, t, _ in backend_tests):
        seen = ", ".join(f"{b or '?'} {p}/{t}" for b, p, t, _ in backend_tests)
        out.append(f"{spec.variant} has no backend reporting {tp}/{tt} tests passed"
                   + (f" (saw {seen})" if seen else ""))
    for backend, passed, total, _ in backend_tests:
        if passed is None or total is None or passed != total:
            out.append(f"{spec.variant} backend {backend or '?'} reported "
                       f"{passed}/{total} tests passed")
    bp, bt = spec.backends
    if backends is None:
        out.append(f"{spec.variant} has no `K/K backends passed` line")
    elif backends[:2] != (bp, bt):
        out.append(f"{spec.variant} reported {backends[0]}/{backends[1]} "
                   f"backends passed (expected {bp}/{bt})")
    return tuple(out)


def _src(rec: Mapping[str, Any]) -> SourceLine:
    line = rec.get("source_line")
    return SourceLine(str(rec.get("source_file") or ""), int(line) if line is not None else None)


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def resolve_rules(table: Any, rules: Rules, backend: str | None = None) -> RuleTable:
    """The rules resolved once per label against the ingested table (see the module docstring);
    BackendError when the backend asked for has no rows."""
    rows = records(table)
    samples = collect_samples(rows)
    counts: dict[str | None, int] = {}
    for key, s in samples.items():
        counts[key.backend] = counts.get(key.backend, 0) + max(s.n, 1)
    ordered = sorted(samples.items(), key=lambda kv: kv[1].order)
    per_rule = _matches_by_rule(rules, ordered)
    sample_labels: dict[RowKey, list[str]] = {key: [] for key, _ in ordered}
    for spec, matched in zip(rules.rows, per_rule, strict=True):
        for key, _ in matched:
            sample_labels[key].append(spec.label)
    chosen, notes = _choose_backend(sample_labels, counts, backend)
    parity = _parity_index(rows, chosen)
    labels: dict[str, ResolvedRow] = {}
    for spec, matched in zip(rules.rows, per_rule, strict=True):
        if spec.label not in labels:
            labels[spec.label] = _resolve_row(spec, matched, chosen, parity)
    dispatch = _resolve_dispatch(rules, rows, labels)
    titles: dict[str, str] = {}
    for r in rules.rows:
        titles.setdefault(r.label, r.title)
    for d in rules.dispatch_checks:
        titles.setdefault(d.label, d.title)
    present = {label: row.present for label, row in labels.items()}
    patterns = {label: row.pattern + ("" if row.spec.variant == "default"
                                      else f" [variant {row.spec.variant}]")
                for label, row in labels.items()}
    for label, found in dispatch.items():
        present[label] = found.present
        patterns[label] = (f"{labels[found.spec.row].pattern} "
                           f"[variant {found.spec.variant}, test mode]")
    return RuleTable(
        rules=rules, rows=rows, samples=samples, backend=chosen, backends=counts, notes=notes,
        labels=labels, dispatch=dispatch, titles=titles, present=present, patterns=patterns,
        required={False: rules.required(False), True: rules.required(True)},
        sample_labels={key: tuple(found) for key, found in sample_labels.items()},
        quality=_quality_index(rows))


def _backend_ok(name: Any, backend: str | None) -> bool:
    return name is None or backend is None or name == backend


def _matches_by_rule(rules: Rules, ordered: Samples) -> list[Samples]:
    """Per row rule (in the rules' order) the sample sets it matches, in table order: only the
    sets of its (op, variant) are candidates, so each is compared once."""
    index: dict[tuple[str, str], Samples] = {}
    for key, s in ordered:
        index.setdefault((key.op, key.variant), []).append((key, s))
    return [[(key, s) for key, s in index.get((spec.op, spec.variant), [])
             if spec.matches_params(key.op, s.param_dict)] for spec in rules.rows]


def _resolve_row(spec: RowSpec, matched: Samples, backend: str | None,
                 parity: Mapping[tuple[str, str], list[dict[str, Any]]]) -> ResolvedRow:
    """Samples of the first matching params (table order) on the evaluated backend; rows of the
    same params with and without a backend name are merged."""
    by_params: dict[str, list[SampleSet]] = {}
    for key, s in matched:
        if _backend_ok(key.backend, backend):
            by_params.setdefault(key.params, []).append(s)
    groups = list(by_params.values())
    samples = _merge(groups[0]) if groups else None
    n = samples.n if samples is not None else 0
    unsupported = samples is not None and n == 0 and samples.unsupported_rows > 0
    status: RowStatus = "present" if n > 0 else "not supported" if unsupported else "missing"
    cases = tuple(r for r in parity.get((spec.op, spec.variant), [])
                  if spec.matches_params(str(r.get("op")), r.get("param_dict") or {}))
    return ResolvedRow(
        spec=spec, pattern=spec.pattern, samples=samples,
        alternatives=tuple(g[0].key for g in groups[1:]), n=n, present=n > 0, status=status,
        median=float(np.median(samples.values)) if n > 0 and samples is not None else None,
        parity=cases)


def _parity_index(rows: Iterable[dict[str, Any]], backend: str | None
                  ) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """Correctness-mode cases (kind "parity") on the evaluated backend, by (op, variant)."""
    index: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        if (r.get("kind") == "parity" and r.get("supported") is not False
                and _backend_ok(r.get("backend"), backend)):
            index.setdefault((str(r.get("op")), str(r.get("variant") or "default")), []).append(r)
    return index


def _resolve_dispatch(rules: Rules, rows: Iterable[dict[str, Any]],
                      labels: Mapping[str, ResolvedRow]) -> dict[str, DispatchEvidence]:
    by_variant: dict[Any, list[dict[str, Any]]] = {}
    for r in rows:
        by_variant.setdefault(r.get("variant") or "default", []).append(r)
    out: dict[str, DispatchEvidence] = {}
    for spec in rules.dispatch_checks:
        if spec.label not in out:
            out[spec.label] = _dispatch(spec, by_variant.get(spec.variant, []),
                                        labels[spec.row].spec)
    return out


def _dispatch(spec: DispatchCheckSpec, rows: Sequence[dict[str, Any]], target: RowSpec
              ) -> DispatchEvidence:
    """The kernel the fixture's row names, each backend's `N/M tests passed` and the
    `K/K backends passed` line, from the rows of the check's variant."""
    kernel: str | None = None
    kernel_source: SourceLine | None = None
    tests: list[tuple[str | None, int | None, int | None, SourceLine]] = []
    backends: tuple[int | None, int | None, SourceLine] | None = None
    for r in rows:
        extra = r.get("extra") or {}
        if kernel is None and target.matches_params(str(r.get("op")), r.get("param_dict") or {}):
            for k in KERNEL_KEYS:
                if isinstance(extra.get(k), str):
                    kernel, kernel_source = extra[k], _src(r)
                    break
        if r.get("kind") == "parity_backend":
            tests.append((r.get("backend"), _int(extra.get("tests_passed")),
                          _int(extra.get("tests_total")), _src(r)))
        elif r.get("kind") == "parity_total":
            backends = (_int(extra.get("backends_passed")), _int(extra.get("backends_total")),
                        _src(r))
    return DispatchEvidence(spec, bool(rows), kernel, kernel_source, tuple(tests), backends,
                            _problems(spec, kernel, tests, backends))


def _quality_index(rows: Iterable[dict[str, Any]]) -> dict[str, tuple[dict[str, Any], ...]]:
    """Quality rows by each name a selector may give: variant label, file name, file stem."""
    index: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if r.get("kind") != "quality":
            continue
        path = str(r.get("source_file") or "").replace("\\", "/")
        name = path.rsplit("/", 1)[-1]
        for key in dict.fromkeys((r.get("variant"), path, name, name.split(".", 1)[0])):
            if isinstance(key, str):
                index.setdefault(key, []).append(r)
    return {key: tuple(found) for key, found in index.items()}

def _merge(sets: Sequence[SampleSet]) -> SampleSet:
    if len(sets) == 1:
        return sets[0]
    first = sets[0]
    sources = {s.source for s in sets if s.source != "none"}
    return SampleSet(
        first.key, first.param_dict, np.concatenate([s.values for s in sets]),
        "none" if not sources else sources.pop() if len(sources) == 1 else "mixed",
        tuple(r for s in sets for r in s.run_ids), tuple(r for s in sets for r in s.refs),
        tuple(n for s in sets for n in s.notes), first.order,
        sum(s.unsupported_rows for s in sets))


def _choose_backend(sample_labels: Mapping[RowKey, Sequence[str]],
                    counts: Mapping[str | None, int], requested: str | None
                    ) -> tuple[str | None, list[str]]:
    named = [b for b in counts if b is not None]
    if requested is not None:
        if requested not in named:
            found = ", ".join(sorted(named)) or "none"
            raise BackendError(f"backend {requested!r} has no benchmark rows (found: {found})")
        return requested, []
    if len(named) <= 1:
        return (named[0] if named else None), []
    matched: dict[str, int] = {b: 0 for b in named}
    for key, labels in sample_labels.items():
        if key.backend is not None and labels:
            matched[key.backend] += 1
    chosen = max(named, key=lambda b: (matched[b], b.upper() != "CPU", counts[b]))
    others = ", ".join(b for b in named if b != chosen)
    return chosen, [f"evaluated backend {chosen} ({matched[chosen]} rows the rules name); "
                    f"ignored rows of {others} (pass --backend to choose)"]
