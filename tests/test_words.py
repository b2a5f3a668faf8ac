"""One word, one meaning (#44; spec architecture.md: "catalog" is mesh-llm's package catalog and
nothing else). Every "catalog" in meshcert's code, docstrings and messages (its .py files and
HTML templates), docs/*.md and docs/*.json is in one of these allowed contexts:

- a part whose subject is mesh-llm's catalog (AREAS, each with its reason);
- a phrase that names mesh-llm's catalog or mesh-llm's own words (MESH_LLM_WORDS: `catalog
  certify`, `--catalog`, a catalog entry, the manifest's `artifact_catalog`, the v2 tensor
  catalog, ...);
- a line listed in EXCEPTIONS, with its reason.

The words meshcert used for other things (the finding-code table, the evidence decision rules)
are refused everywhere: FORBIDDEN. A new use of "catalog" for something else fails here, and so
does an exception or an area that no longer matches anything (a stale entry hides nothing).

An output line a script greps keeps its words (the spec's names are contracts). None of the
lines that called the code table a catalog was one (docs/ and the spec quote none of them), so
they all changed; the spec's own "catalog" words (`artifact_catalog`, `tensor_catalog`, the
`catalog_*` codes, `meshllm/catalog`) are MESH_LLM_WORDS.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# Parts about mesh-llm's catalog throughout: every "catalog" there is the package catalog.
AREAS: dict[str, str] = {
    "meshcert/catalog/": "the catalog part: certifies mesh-llm's package catalog",
    "meshcert/reports/catalog/": "the catalog report (one verdict per package of a catalog)",
    "meshcert/cli/catalog_cmd.py": "`meshcert catalog certify/recheck`",
    "meshcert/serve/": "serve's [[catalog]] repos, catalog pull requests and `catalog recheck`",
    "meshcert/publish/": "the catalog entry a publish pins in the catalog dataset",
    "meshcert/hubjobs/": "a package job's --catalog dataset",
    "meshcert/attest/catalog_trust.py": "the trust policy of a catalog run",
    "meshcert/templates/catalog.html.j2": "the catalog report's HTML page",
    "meshcert/cli/job_cmd.py": "--catalog NS/NAME: the catalog dataset the job adds its entry to",
    "meshcert/cli/package_cmd.py": "--catalog NS/NAME of `package write --publish`",
    "meshcert/cli/publish_cmd.py": "--catalog NS/NAME of `package publish`, its catalog outcome",
    "meshcert/cli/shared_options.py": "the --catalog option shared by the publishing commands",
    "docs/catalog.md": "the guide to `meshcert catalog certify`",
    "docs/catalog-report.schema.json": "the catalog report's schema",
    "docs/serve.md": "the service certifies catalog pull requests and rechecks catalogs",
    "docs/publishing.md": "publishing lists the package in a catalog dataset",
    "docs/finding-codes.md": "generated from core/codes.py: the `catalog` group (catalog certify)",
    "docs/glossary.md": "defines the catalog, and tells mesh-llm's artifact/tensor catalogs apart",
}

# (none left: the evidence decision rules are "rules" since #44's rename; kept for a part
# whose rename is in flight on another branch)
ELSEWHERE: dict[str, str] = {}

# Phrases that mean mesh-llm's catalog, or are mesh-llm's own words (package-v2.md's
# `artifact_catalog` and tensor catalog), wherever they stand.
MESH_LLM_WORDS = re.compile("|".join([
    r"\binline_tensor_catalog\b", r"\bartifact_catalog\w*", r"\btensor_catalog\b",
    r"\b(?:tensor|artifact) catalogs?\b", r"\bTensorCatalog\b", r"\bCatalogTensor\b",
    r"\brebuild_catalog\b", r"\bcatalog_entries\b",  # the manifest's artifact_catalog.entries
    r"\bcatalog (?:certify|recheck)\b", r"--catalog\b", r"\bmeshllm/catalog\b",
    r"\bMesh-LLM/catalog\b", r"\[\[catalog\]\]", r"\bcatalog entr(?:y|ies)\b",
    r"\bcatalog_[a-z_]+",  # the catalog's finding codes, catalog_cmd, render_catalog_*
    r"(?-i:\bCatalog[A-Z]\w*)", r"\w+_catalog\w*", r'"catalog"', r"`catalog`",
    r"\b(?:tests/|meshcert/|meshcert\.|reports/|reports\.)catalog\b", r"\bcatalog\.json\b",
    r"\bcatalog (?:pull requests?|PRs?|datasets?|reports?|certification|page|part)\b",
    r"\bcatalog/", r"\bmesh-llm catalog\b",
]), re.IGNORECASE)

# What meshcert called other things "catalog": refused everywhere (ELSEWHERE aside).
FORBIDDEN = re.compile(r"finding[- ]catalog|code catalog|catalogu(?:e|ed|ing)\b|catalog rows?\b"
                       r"|decision catalog|rules? catalog", re.IGNORECASE)

# (path, a fragment of the line, why "catalog" there is mesh-llm's catalog)
EXCEPTIONS: list[tuple[str, str, str]] = [
    ("docs/architecture.md", "catalog ─────────── catalog certification",
     "the parts diagram: the catalog part"),
    ("docs/architecture.md", "per package of a mesh-llm catalog", "the catalog part's row"),
    ("docs/architecture.md", "certified at the en", "the writer's row: `catalog certify`'s reuse"),
    ("docs/certify.md", "A catalog that still serves older", "--min-mesh-llm for a catalog"),
    ("docs/certify.md", "when the catalog's", "catalog certify's mixed-versions warning"),
    ("docs/performance.md", "a catalog certifies on several threads", "catalog certify's pool"),
    ("meshcert/certify/checks/mesh_llm_support.py", "(a catalog that still serves older nodes)",
     "--min-mesh-llm exists for catalogs"),
    ("meshcert/certify/report.py", "and a catalog", "catalog certify builds reports on threads"),
    ("meshcert/certify/service.py", "(a catalog's packages)", "one gate for a catalog run"),
    ("meshcert/certify/sources/hub.py", "the packages of one catalog", "a catalog run's cache"),
    ("meshcert/certify/template_audits.py", "packages of one catalog", "a catalog run's audits"),
    ("meshcert/certify/verdict.py", "the catalog's rows", "the catalog report's rows"),
    ("meshcert/core/codes.py", '"catalog_entry_invalid": "Fix the catalog entry so it reads as '
     "the catalog's schema", "the catalog's own schema"),
    ("meshcert/core/codes.py", "The catalog offers a package", "catalog certify's code"),
    ("meshcert/core/codes.py", "remove it from the catalog.", "catalog certify's code"),
    ("meshcert/core/codes.py", "The catalog's packages need different", "catalog certify's code"),
    ("meshcert/core/codes.py", "(the catalog pins the same commit)", "the catalog's pin"),
    ("meshcert/core/errors.py", "a catalog that could not be read", "a catalog run's status"),
    ("meshcert/core/hub/__init__.py", "(certify, catalog, publish,", "the parts using the Hub"),
    ("meshcert/reports/__init__.py", "(certification, evidence, catalog)", "the report kinds"),
    ("meshcert/reports/certification/sarif.py", "(shared by the catalog's SARIF)",
     "the catalog report's SARIF"),
    ("meshcert/reports/certification/verdict.py", "so the catalog's rows", "the catalog report"),
    ("meshcert/writer/card.py", "Its catalog", "the card of an experimental package"),
    ("meshcert/cli/root.py", '"catalog": "catalog_cmd"', "the `catalog` command group"),
    ("meshcert/cli/serve_cmd.py", "catalog pull request", "serve certifies catalog PRs"),
    ("docs/evidence.md", "`evidence-catalog.schema.json`, stays as a copy",
     "the rules schema's old file name, kept for the files that name it"),
    ("meshcert/evidence/decision_rules.py", "under its old name evidence-catalog.schema.json",
     "the rules schema's old file name, kept for the files that name it"),
    ("meshcert/evidence/history_report.py", '.replace("a catalog", "a history")',
     "a history dataset ref is read by the catalog's dataset-ref parser; its message retold"),
]


def _judged_files() -> list[Path]:
    files = [*REPO.joinpath("meshcert").rglob("*.py"), *REPO.joinpath("meshcert").rglob("*.j2"),
             *REPO.joinpath("docs").glob("*.md"), *REPO.joinpath("docs").glob("*.json")]
    return sorted(p for p in files
                  if not p.relative_to(REPO).as_posix().startswith(tuple(ELSEWHERE)))


def _lines_with(word: str) -> list[tuple[str, int, str]]:
    out = []
    for path in _judged_files():
        rel = path.relative_to(REPO).as_posix()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if word in line.lower():
                out.append((rel, number, line))
    return out


def _excepted(rel: str, line: str) -> bool:
    return any(rel == path and fragment in line for path, fragment, _ in EXCEPTIONS)


def test_catalog_means_mesh_llms_catalog_only() -> None:
    stray = [f"{rel}:{number}: {line.strip()}" for rel, number, line in _lines_with("catalog")
             if not rel.startswith(tuple(AREAS))
             and "catalog" in MESH_LLM_WORDS.sub("", line).lower()
             and not _excepted(rel, line)]
    assert not stray, ("'catalog' is mesh-llm's package catalog only (the finding codes are the "
                       "code table); rename these, or add the context to tests/test_words.py "
                       "with its reason:\n" + "\n".join(stray))


def test_the_old_meanings_of_catalog_are_gone_everywhere() -> None:
    found = [f"{rel}:{number}: {line.strip()}" for rel, number, line in _lines_with("catalog")
             if FORBIDDEN.search(line)]
    assert not found, "\n".join(found)


@pytest.mark.parametrize(("path", "fragment", "reason"), EXCEPTIONS)
def test_every_exception_still_names_a_line(path: str, fragment: str, reason: str) -> None:
    lines = REPO.joinpath(path).read_text(encoding="utf-8").splitlines()
    assert any(fragment in line and "catalog" in line.lower() for line in lines), (
        f"stale exception ({reason}): {path} has no line with {fragment!r}")


@pytest.mark.parametrize("prefix", [*AREAS, *ELSEWHERE])
def test_every_area_exists(prefix: str) -> None:
    assert any(p.relative_to(REPO).as_posix().startswith(prefix)
               for p in [*REPO.joinpath("meshcert").rglob("*"), *REPO.joinpath("docs").glob("*")])


def test_the_rule_refuses_the_old_name_of_the_code_table() -> None:
    line = 'description="A code of the finding catalog (docs/finding-codes.md)."'
    assert "catalog" in MESH_LLM_WORDS.sub("", line).lower()
    assert FORBIDDEN.search(line)
    assert not _excepted("meshcert/core/findings.py", line)
