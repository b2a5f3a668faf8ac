"""The one comment per pull request: rendered from the job results, found again by its hidden
marker and the service's own author, edited in place (never a second one).

A package pull request's comment starts with the `models certify` verdict sentence of the
commit certified (a script can grep it); a catalog pull request's names every package it
certified, each section starting with that package's sentence (and, with one package, the
comment's first line is that sentence too). Text from the package (finding messages) is
neutralised: no HTML, no table breaks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from meshcert.serve.hub_side import ServeHub
from meshcert.serve.markdown import RISKY as _RISKY
from meshcert.serve.markdown import plain as _inert

MARKER = "<!-- meshcert -->"
_NAME = re.compile(r"^[\w.-]+/[\w.-]+$", re.ASCII)
_CODE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")
_HEX = re.compile(r"^[0-9a-f]{7,64}$")


def _sentence(result: dict[str, Any]) -> str:
    """The verdict sentence as `models certify` prints it (a script greps it); plain text
    when it carries anything that would render (a failure naming a hostile catalog pin)."""
    text = str(result["sentence"])
    return _inert(text) if _RISKY.search(text) else text


def _code(text: object, shape: re.Pattern[str]) -> str:
    """A repo name or a commit in a code span when it has the shape of one, else plain."""
    value = str(text)
    return f"`{value}`" if shape.match(value) else _inert(value)


def package_section(result: dict[str, Any]) -> list[str]:
    commit = _code(result["commit"], _HEX) if result.get("commit") else "(not resolved)"
    lines = [_sentence(result), "",
             f"- package: {_code(result['repo'], _NAME)} at commit {commit}",
             f"- rules: mesh-llm {result['mesh_llm_rules']} (meshcert {result['meshcert']})"]
    if result.get("hashing"):
        lines.append(f"- hashing: {_inert(result['hashing'])}")
    url = result.get("attestation_url")
    if url:
        lines.append(f"- signed attestation: {url}")
    elif result.get("unsigned"):
        lines.append(f"- not signed: {_inert(result['unsigned'])}")
    findings = result.get("findings") or []
    if findings:
        lines += ["", "| severity | code | finding | fix |", "| --- | --- | --- | --- |"]
        lines += [f"| {_inert(f['severity'])} | {_code(f['code'], _CODE)} | "
                  f"{_inert(f['message'])} | "
                  f"{_inert(f['remediation'])} |" for f in findings]
        if result.get("more_findings"):
            lines.append(f"\n... and {result['more_findings']} more finding(s)")
    return lines


def package_comment(result: dict[str, Any]) -> str:
    return "\n".join([*package_section(result)[:1], MARKER, *package_section(result)[1:]]) + "\n"


def catalog_comment(num: int, sections: Sequence[tuple[str, dict[str, Any] | str]]) -> str:
    """`sections`: (title, a job result, or why the entry was not certified)."""
    results = [r for _, r in sections if isinstance(r, dict)]
    passed = sum(r["status"] == "passed" for r in results)
    if len(sections) == 1 and results:
        head = _sentence(results[0])
    else:
        head = (f"catalog pull request #{num}: {passed} of {len(results)} package(s) passed"
                + (f", {len(sections) - len(results)} not certified"
                   if len(sections) > len(results) else ""))
    lines = [head, MARKER]
    if not sections:
        lines.append("\nThis pull request adds or changes no package reference.")
    for title, item in sections:
        lines += ["", f"### {_inert(title)}", ""]
        lines += package_section(item) if isinstance(item, dict) else [
            f"not certified: {_inert(item)}"]
    return "\n".join(lines) + "\n"


def upsert(hub: ServeHub, repo: str, repo_type: str, num: int, body: str) -> str:
    """Post the comment, or edit the service's own marked one in place; its id. A Hub failure
    (after the door's retries) is raised: the caller keeps the verdict and tries again."""
    me = hub.me()
    mine = [c for c in hub.comments(repo, repo_type, num)
            if c.author == me and MARKER in c.content]
    if not mine:
        return hub.post_comment(repo, repo_type, num, body)
    if mine[0].content != body:
        hub.edit_comment(repo, repo_type, num, mine[0].id, body)
    return mine[0].id
