"""The evidence evaluation as a line (#44): the rules are resolved once per label into a
RuleTable (`matching.resolve_rules`), and the gate, the decisions and the report read it; none of
them asks matching.py or rules.py again for a label the table holds."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np

import meshcert.evidence
from meshcert.evidence.build import build_report
from meshcert.evidence.examplegen import example_files
from meshcert.evidence.ingest import ingest_files
from meshcert.evidence.matching import resolve_rules
from meshcert.evidence.rules import RULES
from meshcert.evidence.service import gate_files
from meshcert.evidence.settings import load_settings
from tests.evidence.gate_logs import (
    PASSING_US,
    dispatch_logs,
    parity_console,
    perf_console,
    repeated,
    sweep_logs,
    table,
)

PART = Path(meshcert.evidence.__file__).parent
LINE = ("service", "build", "gates", "matching", "rules", "rule_table", "decisions")


def _module(frame: FrameType | None) -> str | None:
    if frame is None:
        return None
    path = Path(frame.f_code.co_filename)
    return path.stem if path.parent == PART and path.stem in LINE else None


@contextmanager
def calls_between_modules() -> Iterator[Counter[tuple[str, str]]]:
    """Count calls from one module of the evaluation to another (caller, callee)."""
    counted: Counter[tuple[str, str]] = Counter()

    def profile(frame: FrameType, event: str, _: Any) -> None:
        if event == "call":
            callee, caller = _module(frame), _module(frame.f_back)
            if callee and caller and callee != caller:
                counted[(caller, callee)] += 1

    previous: Callable[..., Any] | None = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield counted
    finally:
        sys.setprofile(previous)


def test_the_gate_enters_each_module_once() -> None:
    settings = load_settings({})
    with calls_between_modules() as calls:
        run = gate_files(example_files(), settings=settings)
    assert run.gate.applies
    assert calls[("service", "matching")] == 1  # resolve_rules
    assert calls[("service", "gates")] == 1  # evaluate_gate
    # the gate reads the table: it never calls back into matching.py or rules.py
    assert not [edge for edge in calls if edge[0] == "gates"]
    # only the table's build asks the rules (their row predicates), and nothing asks matching
    assert {edge for edge in calls} == {("service", "matching"), ("service", "gates"),
                                        ("matching", "rules")}


def test_the_report_resolves_once_and_its_readers_never_ask_matching() -> None:
    result = ingest_files(example_files())
    with calls_between_modules() as calls:
        report = build_report(result.table, settings=load_settings({}), sources=result.sources)
    assert report.decisions
    assert calls[("build", "matching")] == 1  # resolve_rules, once
    assert calls[("build", "gates")] == 1
    assert not [edge for edge in calls if edge[1] == "matching" and edge[0] != "build"]
    assert ("gates", "rules") not in calls


def _mixed() -> dict[str, str]:
    texts = dict(repeated(PASSING_US, 3))
    texts["cpu.console.log"] = perf_console(PASSING_US, backend="CPU")
    texts["parity.console.log"] = parity_console({k: k != "ffn_q2_down" for k in PASSING_US})
    return texts | sweep_logs() | dispatch_logs()


def test_the_index_finds_what_a_scan_of_every_rule_finds() -> None:
    resolved = resolve_rules(table(_mixed()), RULES)
    for key, s in resolved.samples.items():
        scanned = [spec.label for spec in RULES.rows
                   if spec.matches(key.op, key.variant, s.param_dict)]
        assert list(resolved.sample_labels[key]) == scanned
    assert resolved.backend == "Metal"  # the backend with the most rows the rules name


def test_each_label_is_resolved_once_with_what_its_readers_need() -> None:
    resolved = resolve_rules(table(_mixed()), RULES)
    assert list(resolved.labels) == list(dict.fromkeys(r.label for r in RULES.rows))
    route = resolved.labels["route"]
    assert route.present and route.n == 3 and route.status == "present"
    assert route.samples is not None
    assert route.median == float(np.median(route.samples.values))
    assert all(r.get("backend") in (None, "Metal") for r in route.parity)
    missing = resolved.labels["d_compact_gather"]
    assert (missing.present, missing.status, missing.median) == (False, "missing", None)
    dispatch = resolved.dispatch["dispatch_default"]
    assert dispatch.present and not dispatch.problems
    assert resolved.present["dispatch_default"] and resolved.titles["dispatch_default"] == (
        "fixed-block dispatch check default")
    assert resolved.patterns["dispatch_default"].endswith(
        "[variant glm-down-default, test mode]")
    assert resolved.patterns["sweep_nsg_1"].endswith("[variant q3-k-mul-mv-id-nsg-1]")
    assert resolved.required[True][:15] == resolved.required[False]
