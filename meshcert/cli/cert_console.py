"""The certification summary a person reads (and a script greps) after `models certify`.

First mesh-llm's own lines, in its order and spelling (`mesh-llm models certify` prints them
with `println!`): `Skippy package certification: <status>` (`passed`, `failed`, `incomplete`,
`not required`), then `Model:`, `Package:`, `Manifest:`, `Layers:`, and `Report:` when a report
was written. mesh-llm's values are never empty; where meshcert's report has none (a package
whose manifest could not be read) the value is `unknown`.

A v2 package then gets meshcert's own `mesh-llm: >= X.Y.Z; split serving ...` line: the oldest
mesh-llm release that loads the manifest and whether the architecture is on the split roster.

Then one block per finding, grouped by severity (errors first), that reads at 80 columns:

    error  missing_layer  layers/layer-0003.gguf (layer 3)
        The manifest lists layer 3 but the file is missing.
        fix: Re-run the packager ...

then the checks that were skipped (not asked for, with the flag that runs them; not
applicable), the runtime gates that ran, and last the verdict line every format states alike
(meshcert.certify.verdict):

    certification passed: 0 errors, 0 warnings, 1 note; 19 checks run, 17 skipped; package
    gate passed

(one line, never wrapped). `render_lines` is pure (text and a style
name per line, wrapped to a width); `print_certification` writes them through rich, which
colours only on a terminal and honours NO_COLOR. To a pipe or a file rich would write each
line's text as it is, so the lines are written directly and rich is never imported
(meshcert.cli.terminal), unless a line holds a tab or a control code rich rewrites.
"""

from __future__ import annotations

import re
import sys
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from meshcert.certify.report import CertReport
    from meshcert.core.findings import Finding

SEVERITIES = ("error", "warning", "info")
GROUP_TITLES = {"error": "errors", "warning": "warnings", "info": "notes"}
INDENT = "    "
MIN_WIDTH = 40
STYLES = {"passed": "bold green", "failed": "bold red", "incomplete": "bold yellow",
          "not_required": "dim", "error": "red", "warning": "yellow", "info": "dim",
          "heading": "bold", "detail": "", "count": "bold"}


@dataclass(frozen=True)
class Line:
    text: str
    style: str = "detail"  # a key of STYLES


def status_label(status: str) -> str:
    """mesh-llm's spelling of a status (`not_required` -> `not required`)."""
    return status.replace("_", " ")


def mesh_llm_lines(report: CertReport, report_out: str | None) -> list[Line]:
    """mesh-llm's console lines, exactly as it prints them (values never wrapped)."""
    def value(v: object) -> str:
        return "unknown" if v is None or v == "" else str(v)

    lines = [Line(f"Skippy package certification: {status_label(report.status)}", report.status),
             Line(f"Model: {value(report.model_id)}"),
             Line(f"Package: {value(report.resolved_package_ref)}"),
             Line(f"Manifest: {value(report.manifest_sha256)}"),
             Line(f"Layers: {value(report.layer_count)}")]
    if report_out:
        lines.append(Line(f"Report: {report_out}"))
    return lines


def mesh_llm_support_lines(report: CertReport) -> list[Line]:
    """meshcert's line after mesh-llm's: the oldest mesh-llm release that loads the package
    (v2 only), and whether it may be served split."""
    support = report.mesh_llm
    if support is None or support.minimum_version is None:
        return []
    split = ("" if support.split_certified is None else
             "; split serving certified" if support.split_certified else
             "; split serving needs --allow-uncertified-split")
    return [Line(f"mesh-llm: >= {support.minimum_version}{split}")]


def coverage_lines(report: CertReport) -> list[Line]:
    """meshcert's line after mesh-llm's when the run verified less than the package: `Partial
    coverage: sizes only: digests not verified` (mesh-llm's `Layers:` line stays as it is; for
    a slice this line says which layers were covered)."""
    from meshcert.certify.verdict import coverage_words

    words = coverage_words(report)
    return [Line(f"Partial coverage: {'; '.join(words)}", "incomplete")] if words else []


def where(f: Finding) -> str:
    parts = [f.path or "", f"(layer {f.layer_index})" if f.layer_index is not None else ""]
    return " ".join(p for p in parts if p)


def _wrap(text: str, width: int, first: str, rest: str) -> list[str]:
    return textwrap.wrap(" ".join(text.split()), width=width, initial_indent=first,
                         subsequent_indent=rest, break_long_words=False,
                         break_on_hyphens=False) or [first.rstrip()]


def finding_block(f: Finding, width: int) -> list[Line]:
    """`severity  code  where` (where wraps below when it does not fit), then the message and
    the remediation indented."""
    head = f"{f.severity}  {f.code}"
    place = where(f)
    lines: list[Line]
    if place and len(head) + 2 + len(place) <= width:
        lines = [Line(f"{head}  {place}", f.severity)]
    else:
        lines = [Line(head, f.severity)]
        lines += [Line(t) for t in _wrap(place, width, INDENT, INDENT)] if place else []
    lines += [Line(t) for t in _wrap(f.message, width, INDENT, INDENT)]
    if f.remediation:
        lines += [Line(t) for t in _wrap(f.remediation, width, INDENT + "fix: ",
                                         INDENT + "     ")]
    return lines


def skipped_lines(report: CertReport, width: int) -> list[Line]:
    """The checks that did no work: those not asked for with the flag that runs them, those
    not applicable by name (each report file gives every reason)."""
    from meshcert.certify.report import NOT_APPLICABLE, NOT_ASKED_FOR, NOT_AVAILABLE

    skipped = [c for c in report.checks if c.status == "skipped"]
    if not skipped:
        return []
    asked = [f"{c.name} ({(c.details or '').partition(': ')[2].removeprefix('runs with ')})"
             for c in skipped if (c.details or "").startswith(NOT_ASKED_FOR)]
    missing = [f"{c.name} ({(c.details or '').partition(': ')[2].partition(' (')[0]})"
               for c in skipped if (c.details or "").startswith(NOT_AVAILABLE)]
    # `models inspect` reads one file, which has no manifest by nature: not applicable there
    file = report.coverage is not None and report.coverage.scope.kind == "file"
    reasons = {r: label for r, label in NOTHING_READ_LABELS.items()
               if not (file and r == "no package manifest was read")}
    unread = {label: [c.name for c in skipped if _applicable_reason(c.details) == reason]
              for reason, label in reasons.items()}
    other = [c.name for c in skipped
             if not (c.details or "").startswith((NOT_ASKED_FOR, NOT_AVAILABLE))
             and _applicable_reason(c.details) not in reasons]
    lines = [Line(f"skipped checks ({len(skipped)})", "heading")]
    for label, names in ((f"{NOT_ASKED_FOR}:", asked), (f"{NOT_AVAILABLE}:", missing),
                         *unread.items(), (f"{NOT_APPLICABLE}:", other)):
        if names:
            lines += [Line(t) for t in _wrap_items(f"{INDENT}{label}", names, width)]
    return lines


# a check skipped because the run read nothing for it to check (an unreachable Hub ref, an
# empty directory, every GGUF unreadable) is listed as such, not as "not applicable": it
# applies to the package, which could not be read (its details give the whole reason)
NOTHING_READ_LABELS = {"no package manifest was read": "nothing read (no package manifest):",
                       "no GGUF header could be read": "nothing read (no GGUF header):",
                       "no declared artifact's file was looked at":
                           "nothing read (no artifact file):"}


def _applicable_reason(details: str | None) -> str:
    """The reason of a "not applicable: <reason>, so ..." skip ('' for any other)."""
    head, _, reason = (details or "").partition(": ")
    return reason.partition(", so ")[0] if head == "not applicable" else ""


def _wrap_items(first: str, items: list[str], width: int) -> list[str]:
    """`first item, item, ...` wrapped between items (an item, a flag and its argument,
    stays on one line)."""
    out, line = [], first
    for i, item in enumerate(items):
        piece = item + ("," if i < len(items) - 1 else "")
        if line != first and len(line) + 1 + len(piece) > width:
            out.append(line)
            line = INDENT * 2 + piece
        else:
            line = f"{line} {piece}"
    return [*out, line]


def counts_line(report: CertReport, *, inspect: bool = False) -> str:
    """The last line: the verdict, its counts and every gate that decided it, in the words
    of every other format (meshcert.certify.verdict)."""
    from meshcert.certify.verdict import verdict

    return verdict(report).sentence("inspection" if inspect else "certification")


def runtime_lines(report: CertReport, width: int) -> list[Line]:
    ran = [g for g in report.runtime_gates if g.status != "not_required"]
    if not ran:
        return []
    lines = [Line("runtime gates", "heading")]
    for gate in ran:
        lines.append(Line(f"{gate.status}  {gate.name}  ({gate.severity})",
                          gate.status if gate.status in STYLES else "detail"))
        if gate.details:
            lines += [Line(t) for t in _wrap(gate.details, width, INDENT, INDENT)]
    return lines


def inspect_lines(report: CertReport, report_out: str | None) -> list[Line]:
    """`models inspect` audits a file, not a package: no mesh-llm lines to keep."""
    lines = [Line(f"GGUF inspection: {status_label(report.status)}", report.status),
             Line(f"File: {report.input}")]
    if report_out:
        lines.append(Line(f"Report: {report_out}"))
    return lines


def render_lines(report: CertReport, report_out: str | None, width: int = 80, *,
                 inspect: bool = False) -> list[Line]:
    """Everything `models certify` (or `inspect`) prints on success paths, wrapped to
    `width` columns."""
    width = max(width, MIN_WIDTH)
    lines = inspect_lines(report, report_out) if inspect else mesh_llm_lines(report,
                                                                            report_out)
    if not inspect:
        lines += mesh_llm_support_lines(report) + coverage_lines(report)
    for severity in SEVERITIES:
        group = [f for f in report.findings if f.severity == severity]
        if not group:
            continue
        lines += [Line(""), Line(f"{GROUP_TITLES[severity]} ({len(group)})", "heading")]
        for f in group:
            lines += finding_block(f, width)
    for block in (skipped_lines(report, width), runtime_lines(report, width)):
        if block:
            lines += [Line(""), *block]
    lines += [Line(""), Line(counts_line(report, inspect=inspect), "count")]
    return lines


def error_lines(report: CertReport, width: int = 80) -> list[Line]:
    """What `--quiet` prints: the error findings and the failed required runtime gates only."""
    width = max(width, MIN_WIDTH)
    lines: list[Line] = []
    for f in report.findings:
        if f.severity == "error":
            lines += finding_block(f, width)
    for gate in report.runtime_gates:
        if gate.severity == "required" and gate.status in {"failed", "incomplete"}:
            lines.append(Line(f"error  runtime gate {gate.name}: {gate.status}", "error"))
            if gate.details:
                lines += [Line(t) for t in _wrap(gate.details, width, INDENT, INDENT)]
    return lines


def plain_text(lines: Iterable[Line]) -> str:
    return "".join(f"{line.text}\n" for line in lines)


# rich expands tabs (by cell width) and drops these control codes from a Text; a line holding
# none of them it writes exactly as its text and a newline (tests/cli/test_cert_console.py)
_REWRITTEN_BY_RICH = re.compile("[\t\x07\x08\x0b\x0c\x0d]")


def written_as_is(lines: Iterable[Line]) -> bool:
    return not any(_REWRITTEN_BY_RICH.search(line.text) for line in lines)


def print_lines(lines: Iterable[Line], console: Console) -> None:
    """Write the lines through rich: styles become colour only on a terminal (rich drops them
    for pipes and files, and when NO_COLOR is set); rich never re-wraps them."""
    from rich.text import Text

    for line in lines:
        console.print(Text(line.text, style=STYLES.get(line.style, "")), soft_wrap=True,
                      highlight=False)


def print_certification(report: CertReport, report_out: str | None, *, quiet: bool = False,
                        console: Console | None = None, inspect: bool = False) -> None:
    """The summary on stdout, or with `quiet` only the errors, on stderr."""
    from meshcert.cli.pipe import write_or_drop
    from meshcert.cli.terminal import plain_stream, plain_width

    stream = sys.stderr if quiet else sys.stdout
    if console is None and plain_stream(stream):
        width = plain_width()
        plain = error_lines(report, width) if quiet else render_lines(
            report, report_out, width, inspect=inspect)
        if written_as_is(plain):
            write_or_drop(stream, plain_text(plain))
            return
    from rich.console import Console

    out = console or Console(stderr=quiet)
    lines = error_lines(report, out.width) if quiet else render_lines(
        report, report_out, out.width, inspect=inspect)
    print_lines(lines, out)
