"""The ingested table indexed for the rules: backend choice, row lookup, parity, dispatch.

`Evidence.build(table)` is called once per evaluation; the gate and the decisions read it.
Only one backend is evaluated (rows of different backends are different measurements): the one
asked for, else the non-CPU backend with the most rows the rules name, else the one with most
perf rows.
Rows without a backend name (e.g. lines of a file without a section header) count for every
backend.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from meshcert.evidence.errors import EvidenceError
from meshcert.evidence.rules import (
    GLM_DOWN_KERNEL_MARK,
    KERNEL_KEYS,
    DispatchCheckSpec,
    RowSpec,
    Rules,
)
from meshcert.evidence.stats import RowKey, SampleSet, SourceLine, collect_samples, records


class BackendError(EvidenceError):
    """The requested backend has no rows."""


@dataclass
class RowMatch:
    """What the table holds for one RowSpec (on the evaluated backend)."""

    spec: RowSpec
    samples: SampleSet | None  # None: no perf row matched
    alternatives: tuple[RowKey, ...] = ()  # other matching params (ambiguous match)

    @property
    def n(self) -> int:
        return self.samples.n if self.samples is not None else 0

    @property
    def present(self) -> bool:
        return self.n > 0

    @property
    def unsupported(self) -> bool:
        return self.samples is not None and self.n == 0 and self.samples.unsupported_rows > 0

    def median(self) -> float | None:
        return float(np.median(self.samples.values)) if self.present and self.samples else None


@dataclass
class DispatchEvidence:
    spec: DispatchCheckSpec
    present: bool
    kernel: str | None = None
    kernel_source: SourceLine | None = None
    backend_tests: list[tuple[str | None, int | None, int | None, SourceLine]] = field(
        default_factory=list)
    backends: tuple[int | None, int | None, SourceLine] | None = None

    def problems(self) -> list[str]:
        """Why the check fails (empty when it passes)."""
        out: list[str] = []
        want = "picks" if self.spec.expect_glm_down else "does not pick"
        if self.kernel is None:
            out.append(f"no dispatched kernel name (perf_metadata {'/'.join(KERNEL_KEYS)}=) "
                       f"for {self.spec.variant}")
        elif (GLM_DOWN_KERNEL_MARK in self.kernel) != self.spec.expect_glm_down:
            out.append(f"{self.spec.variant} dispatched {self.kernel} (expected a kernel that "
                       f"{want} {GLM_DOWN_KERNEL_MARK})")
        tp, tt = self.spec.tests
        if not any((p, t) == (tp, tt) for _, p, t, _ in self.backend_tests):
            seen = ", ".join(f"{b or '?'} {p}/{t}" for b, p, t, _ in self.backend_tests)
            out.append(f"{self.spec.variant} has no backend reporting {tp}/{tt} tests passed"
                       + (f" (saw {seen})" if seen else ""))
        for backend, passed, total, _ in self.backend_tests:
            if passed is None or total is None or passed != total:
                out.append(f"{self.spec.variant} backend {backend or '?'} reported "
                           f"{passed}/{total} tests passed")
        bp, bt = self.spec.backends
        if self.backends is None:
            out.append(f"{self.spec.variant} has no `K/K backends passed` line")
        elif self.backends[:2] != (bp, bt):
            out.append(f"{self.spec.variant} reported {self.backends[0]}/{self.backends[1]} "
                       f"backends passed (expected {bp}/{bt})")
        return out


def _src(rec: Mapping[str, Any]) -> SourceLine:
    line = rec.get("source_line")
    return SourceLine(str(rec.get("source_file") or ""), int(line) if line is not None else None)


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclass
class Evidence:
    rules: Rules
    rows: list[dict[str, Any]]
    samples: dict[RowKey, SampleSet]
    backend: str | None
    backends: dict[str | None, int]  # perf-kind rows per backend name
    notes: list[str] = field(default_factory=list)
    _matches: dict[str, RowMatch] = field(default_factory=dict, repr=False)

    @classmethod
    def build(cls, table: Any, rules: Rules, backend: str | None = None) -> Evidence:
        rows = records(table)
        samples = collect_samples(rows)
        counts: dict[str | None, int] = {}
        for key, s in samples.items():
            counts[key.backend] = counts.get(key.backend, 0) + max(s.n, 1)
        chosen, notes = _choose_backend(rules, samples, counts, backend)
        return cls(rules, rows, samples, chosen, counts, notes)

    # -- lookups ------------------------------------------------------------------------
    def _backend_ok(self, name: str | None) -> bool:
        return name is None or self.backend is None or name == self.backend

    def match(self, spec: RowSpec) -> RowMatch:
        """Samples of the first matching params (table order); rows of the same params with
        and without a backend name are merged."""
        by_params: dict[str, list[SampleSet]] = {}
        for key, s in sorted(self.samples.items(), key=lambda kv: kv[1].order):
            if self._backend_ok(key.backend) and spec.matches(key.op, key.variant, s.param_dict):
                by_params.setdefault(key.params, []).append(s)
        if not by_params:
            return RowMatch(spec, None)
        groups = list(by_params.values())
        first = _merge(groups[0])
        alternatives = tuple(g[0].key for g in groups[1:])
        return RowMatch(spec, first, alternatives)

    def match_label(self, label: str) -> RowMatch:
        cache = self._matches
        if label not in cache:
            cache[label] = self.match(self.rules.row(label))
        return cache[label]

    def median(self, label: str) -> float | None:
        return self.match_label(label).median()

    def parity(self, spec: RowSpec) -> list[dict[str, Any]]:
        """Correctness-mode cases (kind "parity") of this row on the evaluated backend."""
        return [r for r in self.rows
                if r.get("kind") == "parity" and r.get("supported") is not False
                and self._backend_ok(r.get("backend"))
                and spec.matches(str(r.get("op")), str(r.get("variant") or "default"),
                                 r.get("param_dict") or {})]

    def dispatch(self, spec: DispatchCheckSpec) -> DispatchEvidence:
        rows = [r for r in self.rows if (r.get("variant") or "default") == spec.variant]
        ev = DispatchEvidence(spec, present=bool(rows))
        target = self.rules.row(spec.row)
        for r in rows:
            extra = r.get("extra") or {}
            on_row = target.matches_params(str(r.get("op")), r.get("param_dict") or {})
            if ev.kernel is None and on_row:
                for k in KERNEL_KEYS:
                    if isinstance(extra.get(k), str):
                        ev.kernel, ev.kernel_source = extra[k], _src(r)
                        break
            if r.get("kind") == "parity_backend":
                ev.backend_tests.append((r.get("backend"), _int(extra.get("tests_passed")),
                                         _int(extra.get("tests_total")), _src(r)))
            elif r.get("kind") == "parity_total":
                ev.backends = (_int(extra.get("backends_passed")),
                               _int(extra.get("backends_total")), _src(r))
        return ev

    def quality(self, selector: str) -> list[dict[str, Any]]:
        """Quality rows whose variant label, file name or file stem is `selector`."""
        out = []
        for r in self.rows:
            if r.get("kind") != "quality":
                continue
            path = str(r.get("source_file") or "").replace("\\", "/")
            name = path.rsplit("/", 1)[-1]
            if selector in (r.get("variant"), path, name, name.split(".", 1)[0]):
                out.append(r)
        return out


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


def _choose_backend(rules: Rules, samples: Mapping[RowKey, SampleSet],
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
    for key, s in samples.items():
        if key.backend is not None and any(
                spec.matches(key.op, key.variant, s.param_dict) for spec in rules.rows):
            matched[key.backend] += 1
    chosen = max(named, key=lambda b: (matched[b], b.upper() != "CPU", counts[b]))
    others = ", ".join(b for b in named if b != chosen)
    return chosen, [f"evaluated backend {chosen} ({matched[chosen]} rows the rules name); "
                    f"ignored rows of {others} (pass --backend to choose)"]
