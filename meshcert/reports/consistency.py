"""Is a cert.json's verdict possible? A schema-valid file can still claim what its own contents
deny (a `status` edited to `passed` beside an error finding and a failed package gate, a slice
whose `scope` was widened to layers it never checked). `report render` and `report merge` run
this on every input before they render or merge it, and refuse a contradiction (exit 2), naming
it. The rules are those the certifier itself follows (meshcert.certify.engine, .merge). Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from meshcert.certify.engine import INCOMPLETE_CODES
from meshcert.certify.report import CertReport, combine_statuses
from meshcert.core.errors import Refused

# Codes that make a gate incomplete rather than failed (the merge adds its coverage finding)
_UNSURE = INCOMPLETE_CODES | {"coverage_missing"}
_HASHING = ("local-sha256", "sha256-streamed")


def _codes(codes: set[str]) -> str:
    shown = sorted(codes)
    return ", ".join(shown[:5]) + (f" and {len(shown) - 5} more" if len(shown) > 5 else "")


class ContradictoryReport(Refused, ValueError):
    """A report whose verdict its own contents deny (or merge inputs that repeat a slice)."""


def refuse_contradictions(report: CertReport, name: str, what: str = "rendered") -> None:
    """ContradictoryReport naming every contradiction of `report` (the file `name`)."""
    found = contradictions(report)
    if found:
        raise ContradictoryReport(f"{name}: its verdict contradicts its own contents, so it is "
                                  f"not {what} (edited by hand, or not written by meshcert):\n"
                                  + "\n".join(f"  - {line}" for line in found))


def contradictions(report: CertReport) -> list[str]:
    """Each way the report contradicts itself (empty: its verdict is possible)."""
    return [*_verdict(report), *_checks(report), *_scope(report), *_merge(report),
            *_coverage(report)]


def _coverage(report: CertReport) -> list[str]:
    """The coverage a verdict is qualified by must be what the report holds: digests it says
    were taken are among its digests, a sizes-only run says so, a slice is not the package.
    (Edited to `hashed`, a sizes-only pass would render with no qualifier.)"""
    cov = report.coverage
    if cov is None or cov.scope.kind == "file":
        return []
    d, out = cov.digests, []
    taken = d.hashed + d.cached + d.written
    if taken > len(report.digests):
        out.append(f"coverage says {taken} digest(s) were taken (hashed, cached or written), "
                   f"but the report holds {len(report.digests)}")
    if d.hub_attested > len(report.hub_digests):
        out.append(f"coverage says {d.hub_attested} digest(s) are Hub-attested, but the report "
                   f"holds {len(report.hub_digests)}")
    if report.verification == "size-only" and d.artifacts and not d.sizes_only:
        out.append(f"verification is 'size-only', but coverage says digests {d.mode!r} with "
                   "none checked by size only")
    if report.cache_hits and not (d.cached or d.written):
        out.append(f"the report took {report.cache_hits} digest(s) from a verify cache, but "
                   f"coverage says digests {d.mode!r} with none from it")
    if (cov.scope.kind == "slice") != (report.scope is not None):
        out.append(f"coverage says scope {cov.scope.kind!r}, but the report "
                   f"{'certified a slice' if report.scope is not None else 'has no slice'}")
    return out


def _merge(report: CertReport) -> list[str]:
    """A merged report's coverage must add up, and a passed one covers everything."""
    info = report.merge
    if info is None:
        return []
    out: list[str] = []
    if info.verified_artifacts + len(info.unverified_artifacts) != info.declared_artifacts:
        out.append(f"merge says {info.verified_artifacts} verified and "
                   f"{len(info.unverified_artifacts)} unverified of {info.declared_artifacts} "
                   "declared artifacts")
    if report.status == "passed" and (info.unverified_artifacts or info.unverified_layers):
        out.append("status is 'passed', but the merge names layers or artifacts no slice "
                   "verified")
    return out


def _verdict(report: CertReport) -> list[str]:
    out: list[str] = []
    gate = report.package_gate.status
    required = [g for g in report.runtime_gates if g.severity == "required"]
    expected = combine_statuses([gate, *(g.status for g in required)])
    if report.status != expected:
        why = [f"package gate {gate}"] + [f"runtime gate {g.name} {g.status}" for g in required
                                          if g.status in ("failed", "incomplete")]
        out.append(f"status is {report.status!r}, but its gates make it {expected!r} "
                   f"({'; '.join(why)})")
    errors = {f.code for f in report.findings if f.severity == "error" and f.code not in _UNSURE}
    unsure = {f.code for f in report.findings if f.code in _UNSURE}
    warnings = {f.code for f in report.findings if f.severity == "warning"}
    if errors and gate != "failed":
        out.append(f"the package gate is {gate!r}, but the report holds "
                   f"{sum(1 for f in report.findings if f.code in errors)} error finding(s) "
                   f"({_codes(errors)})")
    if gate == "failed" and not errors and not warnings:
        out.append("the package gate is 'failed', but the report holds no error or warning "
                   "finding")
    if gate == "passed" and unsure:
        out.append(f"the package gate is 'passed', but the report holds finding(s) of work "
                   f"not done ({_codes(unsure)})")
    if report.status == "passed" and (errors or unsure):
        out.append(f"status is 'passed', but the report holds error finding(s) "
                   f"({_codes(errors | unsure)})")
    return out


def _checks(report: CertReport) -> list[str]:
    out: list[str] = []
    by_check: dict[str, set[str]] = {}
    for f in report.findings:
        if f.check is not None and f.severity == "error":
            by_check.setdefault(f.check, set()).add(f.code)
    for run in report.checks:
        if run.status in ("passed", "skipped") and run.name in by_check:
            out.append(f"check {run.name} is {run.status!r}, but it has error finding(s) "
                       f"({_codes(by_check[run.name])})")
    if report.status == "passed":
        failed = sorted(r.name for r in report.checks if r.status in ("failed", "error"))
        if failed:
            out.append(f"status is 'passed', but check(s) {', '.join(failed[:5])} "
                       f"{'are' if len(failed) > 1 else 'is'} failed or in error")
    return out


def _scope(report: CertReport) -> list[str]:
    """A slice's scope must be what it checked: its layers are its artifacts' layers, and it
    verified a digest of every artifact it answers for (or says why not)."""
    scope = report.scope
    if scope is None:
        return []
    out: list[str] = []
    total = report.layer_count
    if scope.layer_start < 0 or scope.layer_end <= scope.layer_start or (
            total is not None and scope.layer_end > total):
        out.append(f"scope layers {scope.layer_start}..{scope.layer_end} are not a range of "
                   f"the package's {total} layers")
    declared = set(report.declared_artifacts)
    checked = set(scope.artifacts)
    foreign = sorted(checked - declared)
    if foreign:
        out.append(f"scope names artifact(s) the manifest does not declare: {foreign[:3]}")
    inside, outside = _layer_parts(report, scope.layer_start, scope.layer_end)
    if missing := sorted(inside - checked):
        out.append(f"scope says layers {scope.layer_start}..{scope.layer_end}, but it did "
                   f"not check {len(missing)} of their artifact(s): {', '.join(missing[:3])}")
    if extra := sorted(outside & checked):
        out.append(f"scope says layers {scope.layer_start}..{scope.layer_end}, but it checked "
                   f"artifact(s) of other layers: {', '.join(extra[:3])}")
    hashed = set(scope.hashed_artifacts) if scope.hashed_artifacts is not None else checked
    if not hashed <= checked:
        out.append("scope's hashed_artifacts are not all among its artifacts")
    out.extend(_unverified(report, hashed))
    return out


def _layer_parts(report: CertReport, start: int, end: int) -> tuple[set[str], set[str]]:
    """The artifacts of layers start..end-1 and those of the other layers (from the stage
    parts every report carries)."""
    inside: set[str] = set()
    outside: set[str] = set()
    for stage in report.materialized_stages:
        for part in stage.parts:
            if part.layer_index is not None:
                (inside if start <= part.layer_index < end else outside).add(part.path)
    return inside, outside - inside


def _unverified(report: CertReport, hashed: set[str]) -> list[str]:
    if report.verification not in _HASHING:
        return []
    known = set(report.digests) | set(report.hub_digests)
    explained = {f.path for f in report.findings if f.path is not None}
    silent = sorted(p for p in hashed - known if p not in explained)
    if not silent:
        return []
    return [f"scope answers for {len(silent)} artifact(s) it has no digest of and no finding "
            f"about: {', '.join(silent[:3])}"]


def duplicate_slices(named: Sequence[tuple[str, CertReport]]) -> list[str]:
    """`report merge` inputs that are the same slice twice (the same file, or the same run:
    equal scope, times and digests)."""
    out: list[str] = []
    seen: dict[object, str] = {}
    for name, report in named:
        scope = report.scope
        key = (report.manifest_sha256, report.started_at, report.finished_at,
               (scope.layer_start, scope.layer_end) if scope is not None else None,
               tuple(sorted(report.digests.items())))
        if key in seen:
            same = "given twice" if seen[key] == name else f"the same slice as {seen[key]}"
            start, end = (scope.layer_start, scope.layer_end) if scope is not None else (
                0, report.layer_count)
            out.append(f"{name} is {same} (layers {start}..{end}, certified "
                       f"{report.started_at}): give each slice once")
        else:
            seen[key] = name
    return out
