"""docs/glossary.md: one line per term, each term one a reader meets (#44). A glossary entry for
a word nothing uses is a defect, and so is an entry that runs over several lines."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
GLOSSARY = REPO / "docs" / "glossary.md"
ENTRY = re.compile(r"^- \*\*(?P<term>[^*]+)\*\*: \S.*\.$")


def _body() -> list[str]:
    """The glossary's lines from its first section on (the introduction is prose)."""
    lines = GLOSSARY.read_text(encoding="utf-8").splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("## "))
    return lines[first:]


def _terms() -> list[str]:
    return [m["term"] for line in _body() if (m := ENTRY.match(line))]


def _elsewhere() -> str:
    """Every text a user or a contributor reads, the glossary aside, lower-cased."""
    files = [*REPO.joinpath("docs").glob("*.md"), REPO / "README.md",
             *REPO.joinpath("meshcert").rglob("*.py")]
    return "\n".join(p.read_text(encoding="utf-8") for p in files if p != GLOSSARY).lower()


def test_every_entry_is_one_line() -> None:
    stray = [line for line in _body()
             if line.strip() and not line.startswith("## ") and not ENTRY.match(line)]
    assert not stray, ("each glossary entry is one line `- **term**: meaning.`; these are "
                       "not:\n" + "\n".join(stray))


def test_the_glossary_has_the_terms_a_reader_meets() -> None:
    terms = {t.lower() for t in _terms()}
    for expected in ("package format", "manifest", "artifact", "slice", "stage", "layer range",
                     "catalog", "finding", "code table", "gate", "verdict", "coverage",
                     "attestation", "trust policy", "decision rules", "evidence", "a/b",
                     "registry", "request", "report kind", "report format", "error kind"):
        assert expected in terms, expected


def test_no_term_is_defined_twice() -> None:
    terms = [t.lower() for t in _terms()]
    assert len(terms) == len(set(terms)), sorted(t for t in terms if terms.count(t) > 1)


@pytest.mark.parametrize("term", _terms())
def test_every_term_is_used_outside_the_glossary(term: str) -> None:
    text = _elsewhere()
    missing = [word for word in term.split(" / ")  # "error kind" is also ErrorKind's name
               if word.lower() not in text and word.lower().replace(" ", "") not in text]
    assert not missing, f"the glossary defines {missing} but docs/ and meshcert/ never use it"


def test_the_architecture_guide_links_the_glossary() -> None:
    assert "(glossary.md)" in (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
