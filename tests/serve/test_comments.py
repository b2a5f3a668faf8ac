"""The PR comment renders what a hostile package or catalog entry writes (finding messages
carry file names and metadata; a catalog pins any repo name it likes) as plain text: no link,
image, HTML, @mention, autolink or table break reaches the Hub's renderer."""

from __future__ import annotations

import re

from meshcert.serve.certifier import failed_result
from meshcert.serve.comments import MARKER, catalog_comment, package_comment

HOSTILE = ("weights ![x](https://evil.example/p.png) [fix here](https://evil.example) "
           "<img src=x onerror=alert(1)> @admin www.evil.example `code` | extra cell\nrow")


def passed_result(**over: object) -> dict[str, object]:
    return {"repo": "meshllm/a-layers", "commit": "a" * 40, "status": "failed",
            "sentence": "certification failed: 1 error, 0 warnings, 0 notes; 19 checks run, "
                        "2 skipped; package gate failed; runtime gate v1_models passed",
            "findings": [{"code": "LAYER_HASH_MISMATCH", "severity": "error",
                          "message": HOSTILE, "remediation": HOSTILE, "path": "x"}],
            "more_findings": 0, "meshcert": "1.0", "mesh_llm_rules": "0.76.2",
            "attestation_url": None, "unsigned": HOSTILE, **over}


def assert_inert(text: str) -> None:
    assert not re.search(r"(?<!\\)\]\(", text)
    assert "<img" not in text and "@admin" not in text
    assert "https://evil" not in text and "www.evil" not in text
    assert not re.search(r"(?<!\\)`code", text)
    for row in (line for line in text.splitlines() if line.startswith("| error")):
        assert len(re.findall(r"(?<!\\)\|", row)) == 5, row  # four cells, no more


def test_a_findings_text_is_plain_text_and_the_first_line_stays_the_sentence() -> None:
    text = package_comment(passed_result())
    lines = text.splitlines()
    assert lines[0] == str(passed_result()["sentence"])  # greppable, `_` left as it is
    assert lines[1] == MARKER
    assert "`meshllm/a-layers` at commit `" + "a" * 40 + "`" in text
    assert "`LAYER_HASH_MISMATCH`" in text
    assert_inert(text)


def test_a_catalog_pin_naming_a_hostile_repo_is_plain_text_in_the_title_and_the_verdict(
        ) -> None:
    repo = "x/y](https://evil.example) @admin"
    failed = failed_result(repo, "main` <b>", f"repository {repo} not found")
    text = catalog_comment(7, [(f"{repo} (entries/e.json, variant Q4)", failed)])
    assert_inert(text)
    assert "<b>" not in text


def test_a_release_discussion_names_a_hostile_revision_as_plain_text() -> None:
    """A catalog entry's requested revision names the package in the discussion's text."""
    from meshcert.serve.release_matrix import Cell, Recheck, discussion_body

    cell = Cell(f"meshllm/a-layers@{HOSTILE}", "meshllm/a-layers", "refused")
    text = discussion_body(cell, Recheck("0.76.2", "0.1.53", [cell]))
    assert_inert(text)
    assert text.rstrip().endswith(MARKER)


def test_the_comment_says_how_the_digests_were_had() -> None:
    hashed = package_comment(passed_result(hashing="hashed on HF Jobs: 2 job(s) on cpu-basic "
                                                   "hashing 1.5 GiB, at most $0.0067"))
    assert ("- hashing: hashed on HF Jobs: 2 job(s) on cpu-basic hashing 1.5 GiB, at most "
            "$0.0067") in hashed.splitlines()
    assert "hashing:" not in package_comment(passed_result())  # header-only: the sentence says
