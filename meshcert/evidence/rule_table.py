"""The rules resolved once per label against the evidence: the one table the gate, the decisions
and the report read.

    resolved = resolve_rules(table, RULES, backend)   # meshcert.evidence.matching
    gate = evaluate_gate(resolved, settings)          # reads resolved.labels, .titles, ...
    decisions, omitted = decide_all(resolved, settings, options)

Everything here is data, computed when the table is built: a consumer reads a field or a dict
entry and never asks `matching.py` or `rules.py` again for a label the table already holds. A
label of a row rule is in `labels`; a label of a dispatch check in `dispatch`; `titles`,
`present` and `patterns` hold both (a row's title first, a dispatch check's evidence first, as
`Rules.title` and the gate always had it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from meshcert.evidence.report import RowStatus
from meshcert.evidence.rules import DispatchCheckSpec, RowSpec, Rules
from meshcert.evidence.stats import RowKey, SampleSet, SourceLine


@dataclass(frozen=True)
class ResolvedRow:
    """What the evidence holds for one row rule, on the evaluated backend."""

    spec: RowSpec  # the first row rule of this label
    pattern: str  # its required params as `OP(k=v,...)` (RowSpec.pattern)
    samples: SampleSet | None  # the first matching params' samples; None: no perf row matched
    alternatives: tuple[RowKey, ...]  # other matching params (an ambiguous match)
    n: int
    present: bool  # n > 0
    status: RowStatus  # present, "not supported" (only unsupported rows), missing
    median: float | None  # of the samples, None when absent
    parity: tuple[dict[str, Any], ...]  # correctness-mode cases (kind "parity") of this row


@dataclass(frozen=True)
class DispatchEvidence:
    """What the evidence holds for one fixed-block dispatch check (rows of its variant)."""

    spec: DispatchCheckSpec
    present: bool
    kernel: str | None
    kernel_source: SourceLine | None
    backend_tests: tuple[tuple[str | None, int | None, int | None, SourceLine], ...]
    backends: tuple[int | None, int | None, SourceLine] | None
    problems: tuple[str, ...]  # why the check fails; empty when it passes


@dataclass(frozen=True)
class RuleTable:
    """One evaluation's rules and evidence, resolved once (see the module docstring)."""

    rules: Rules
    rows: list[dict[str, Any]]  # the ingested table's records
    samples: dict[RowKey, SampleSet]
    backend: str | None  # the evaluated backend
    backends: dict[str | None, int]  # perf-kind samples per backend name
    notes: list[str]
    labels: Mapping[str, ResolvedRow]
    dispatch: Mapping[str, DispatchEvidence]
    titles: Mapping[str, str]  # every known label's title
    present: Mapping[str, bool]  # every known label: does the evidence hold it
    patterns: Mapping[str, str]  # every known label: what a missing row looks like
    required: Mapping[bool, tuple[str, ...]]  # kernel sweep on/off -> the required labels
    sample_labels: Mapping[RowKey, tuple[str, ...]]  # the row rules each sample set matches
    quality: Mapping[str, tuple[dict[str, Any], ...]]  # quality rows by variant/file/name/stem
