"""The common JUnit XML shape (as Jenkins, GitLab and GitHub test reporters read it)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

COUNTS = ("tests", "failures", "errors", "skipped")
OUTCOMES = ("failure", "error", "skipped")


def outcome(case: ET.Element) -> str:
    found = [child.tag for child in case if child.tag in OUTCOMES]
    assert len(found) <= 1, f"testcase {case.get('name')} has several outcomes: {found}"
    return found[0] if found else "passed"


def validate(xml_text: str) -> ET.Element:
    """Parse and check element names, required attributes and that every count adds up."""
    assert xml_text.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    root = ET.fromstring(xml_text)
    assert root.tag == "testsuites"
    totals = dict.fromkeys(COUNTS, 0)
    suites = list(root)
    assert suites and all(s.tag == "testsuite" for s in suites)
    for suite in suites:
        assert suite.get("name")
        float(suite.get("time", "x"))
        children = [c.tag for c in suite]
        assert set(children) <= {"properties", "testcase", "system-out", "system-err"}
        if "properties" in children:
            assert children.index("properties") == 0
            for prop in suite.find("properties") or []:
                assert prop.tag == "property" and prop.get("name") is not None
                assert prop.get("value") is not None
        cases = suite.findall("testcase")
        seen = {k: 0 for k in COUNTS}
        seen["tests"] = len(cases)
        for case in cases:
            assert case.get("name") and case.get("classname")
            float(case.get("time", "x"))
            assert {c.tag for c in case} <= {*OUTCOMES, "system-out", "system-err"}
            result = outcome(case)
            if result in ("failure", "error"):
                node = case.find(result)
                assert node is not None and node.get("message") and node.get("type")
            if result != "passed":
                seen[{"failure": "failures", "error": "errors", "skipped": "skipped"}[result]] += 1
        for key in COUNTS:
            assert int(suite.get(key, "-1")) == seen[key], (suite.get("name"), key)
            totals[key] += seen[key]
    for key in COUNTS:
        assert int(root.get(key, "-1")) == totals[key], key
    return root


def cases_by_name(root: ET.Element) -> dict[str, ET.Element]:
    return {case.get("name", ""): case for case in root.iter("testcase")}
