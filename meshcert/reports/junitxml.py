"""A tiny JUnit XML builder (the common testsuites/testsuite/testcase shape) whose counts are
always derived from the cases, so they cannot drift."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Literal

from meshcert.reports.fmt import parse_time

Outcome = Literal["passed", "failure", "error", "skipped"]

# XML 1.0 forbids most control characters even when escaped; report text could contain them.
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def clean(value: object) -> str:
    return _INVALID_XML.sub("\ufffd", str(value))


@dataclass
class Case:
    name: str
    classname: str
    outcome: Outcome = "passed"
    message: str = ""
    type: str = ""
    body: str = ""
    time_s: float = 0.0
    system_out: str = ""


@dataclass
class Suite:
    name: str
    timestamp: str | None = None
    properties: dict[str, str] = field(default_factory=dict)
    cases: list[Case] = field(default_factory=list)

    def count(self, outcome: Outcome) -> int:
        return sum(case.outcome == outcome for case in self.cases)

    @property
    def time_s(self) -> float:
        return sum(case.time_s for case in self.cases)


def _counts(element: ET.Element, numbers: tuple[int, int, int, int], time_s: float) -> None:
    """tests, failures, errors, skipped (in that order) and the time, as attributes."""
    for key, value in zip(("tests", "failures", "errors", "skipped"), numbers, strict=True):
        element.set(key, str(value))
    element.set("time", f"{time_s:.3f}")


def _case(parent: ET.Element, case: Case) -> None:
    node = ET.SubElement(parent, "testcase", {"classname": clean(case.classname),
                                              "name": clean(case.name),
                                              "time": f"{case.time_s:.3f}"})
    if case.outcome == "skipped":
        skipped = ET.SubElement(node, "skipped")
        if case.message:
            skipped.set("message", clean(case.message))
    elif case.outcome in ("failure", "error"):
        outcome = ET.SubElement(node, case.outcome, {"message": clean(case.message),
                                                     "type": clean(case.type or case.outcome)})
        outcome.text = clean(case.body) if case.body else None
    if case.system_out:
        ET.SubElement(node, "system-out").text = clean(case.system_out)


def to_xml(name: str, suites: list[Suite]) -> str:
    root = ET.Element("testsuites", {"name": clean(name)})
    totals = (0, 0, 0, 0)
    for suite in suites:
        node = ET.SubElement(root, "testsuite", {"name": clean(suite.name)})
        if suite.timestamp:
            node.set("timestamp", clean(suite.timestamp))
        numbers = (len(suite.cases), suite.count("failure"), suite.count("error"),
                   suite.count("skipped"))
        totals = (totals[0] + numbers[0], totals[1] + numbers[1], totals[2] + numbers[2],
                  totals[3] + numbers[3])
        _counts(node, numbers, suite.time_s)
        if suite.properties:
            props = ET.SubElement(node, "properties")
            for key, value in suite.properties.items():
                ET.SubElement(props, "property", {"name": clean(key), "value": clean(value)})
        for case in suite.cases:
            _case(node, case)
    _counts(root, totals, sum(s.time_s for s in suites))
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def junit_timestamp(iso: str | None) -> str | None:
    """JUnit's timestamp is an ISO 8601 date-time without zone or fraction (UTC here)."""
    moment = parse_time(iso)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") if moment else None
