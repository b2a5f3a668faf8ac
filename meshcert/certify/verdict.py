"""The one verdict of a certification, stated the same in every format (console, HTML,
Markdown, JUnit, SARIF): the overall status, the gates that decided it, the finding counts and
how many checks ran.

The counts are cert.json's findings by severity, plus each failed warning-level runtime gate
as a warning (it does not change the status, but it is a warning the reader must see). The
gates named are the package gate, every runtime gate that did not pass (all of them passed
otherwise: one phrase says how many), and the attestation policy when `--trust` added its
findings (they decide the package gate with the rest).

When the run verified less than the whole package by hashing, the status is followed by its
coverage in words (`certification passed (sizes only: digests not verified): ...`; cert.json's
`coverage`, docs/certify.md "What a passed verdict means"). `models inspect`'s report (coverage
scope `file`) is a verdict about one file: `inspection passed: FILE.gguf: ...`, no package gate.
It lives with the certifier so the catalog's rows state the same sentence; the report formats
import it through meshcert.reports.certification.verdict.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from meshcert.certify.report import ATTESTATION_POLICY
from meshcert.certify.stages import layer_range

if TYPE_CHECKING:
    from meshcert.certify.report import CertReport, Gate


@dataclass(frozen=True)
class GateVerdict:
    label: str  # "package gate", "runtime gate v1_models", "attestation policy"
    status: str  # passed / failed / incomplete / warning

    def phrase(self) -> str:
        return f"{self.label} {self.status.replace('_', ' ')}"


@dataclass(frozen=True)
class Verdict:
    status: str
    errors: int
    warnings: int
    notes: int
    checks_run: int
    checks_skipped: int
    gates: tuple[GateVerdict, ...]
    coverage: tuple[str, ...] = ()  # what this run did not verify, in words (partial only)
    failed_gates: int = 0  # required gates not passed that no error finding already counts
    file: str | None = None  # `models inspect`: the file inspected (a verdict about one file)

    def qualifier(self) -> str:
        """` (sizes only: digests not verified)` when the coverage is partial, else ``."""
        return f" ({'; '.join(self.coverage)})" if self.coverage else ""

    def headline(self, subject: str = "Certification") -> str:
        """`Certification passed (slice layers 0..2: 3/7 artifacts; not a package verdict)`;
        `Inspection passed` for one file."""
        if self.file is not None:
            return f"Inspection {self.status}"
        return f"{subject} {self.status}{self.qualifier()}"

    def counts(self) -> str:
        return (f"{_plural(self.errors, 'error')}, {_plural(self.warnings, 'warning')}, "
                f"{_plural(self.notes, 'note')}")

    def checks(self) -> str:
        return f"{_plural(self.checks_run, 'check')} run, {self.checks_skipped} skipped"

    def decided_by(self) -> str:
        return "; ".join(g.phrase() for g in self.gates)

    def sentence(self, subject: str = "certification") -> str:
        """`certification failed: 0 errors, 1 warning, 2 notes; 19 checks run, 17 skipped;
        package gate passed; runtime gate v1_models failed`; with partial coverage the status
        is followed by it, `certification passed (sizes only: digests not verified): ...`"""
        if self.file is not None:  # one file: no package gate, no package coverage
            return f"inspection {self.status}: {self.file}: {self.counts()}; {self.checks()}"
        return (f"{subject} {self.status}{self.qualifier()}: {self.counts()}; "
                f"{self.checks()}; {self.decided_by()}")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _policy_status(report: CertReport) -> str | None:
    mine = [f for f in report.findings if f.check == ATTESTATION_POLICY]
    if not mine:
        return None
    if any(f.severity == "error" for f in mine):
        return "failed"
    return "warning" if any(f.severity == "warning" for f in mine) else "passed"


def runtime_gate_verdicts(report: CertReport) -> list[GateVerdict]:
    """Each runtime gate that ran and did not pass, by name; or how many passed."""
    ran = [g for g in report.runtime_gates if g.status != "not_required"]
    unpassed = [g for g in ran if g.status != "passed"]
    out = [GateVerdict(f"runtime gate {g.name}" + (" (warning)" if g.severity == "warning"
                                                   else ""), g.status) for g in unpassed]
    if ran and not unpassed:
        out.append(GateVerdict(f"{_plural(len(ran), 'runtime gate')}", "passed"))
    return out


def verdict(report: CertReport) -> Verdict:
    by = {"error": 0, "warning": 0, "info": 0}
    for f in report.findings:
        by[f.severity] += 1
    failed_warning_gates = sum(g.severity == "warning" and g.status == "failed"
                               for g in report.runtime_gates)
    skipped = sum(c.status == "skipped" for c in report.checks)
    gates = [GateVerdict("package gate", report.package_gate.status)]
    policy = _policy_status(report)
    if policy is not None:
        gates.append(GateVerdict("attestation policy", policy))
    gates += runtime_gate_verdicts(report)
    return Verdict(status=report.status, errors=by["error"],
                   warnings=by["warning"] + failed_warning_gates, notes=by["info"],
                   checks_run=len(report.checks) - skipped, checks_skipped=skipped,
                   gates=tuple(gates), coverage=tuple(coverage_words(report)),
                   failed_gates=len(uncounted_gates(report)), file=inspected_file(report))


def inspected_file(report: CertReport) -> str | None:
    """The file's name when the report is `models inspect`'s (a verdict about one file)."""
    cov = report.coverage
    if cov is None or cov.scope.kind != "file":
        return None
    return os.path.basename(report.input) or report.input


def uncounted_gates(report: CertReport) -> list[Gate]:
    """The required gates that did not pass and that no error finding already stands for:
    each failed or incomplete required runtime gate (a gate raises no finding), and the package
    gate when it is not passed but holds no error finding (--strict warnings, an interrupted
    read). JUnit makes each of them one failure or error beside the error findings."""
    out: list[Gate] = [g for g in report.runtime_gates
                       if g.severity == "required" and g.status in {"failed", "incomplete"}]
    if report.package_gate.status in {"failed", "incomplete"} and not any(
            f.severity == "error" for f in report.findings):
        out.insert(0, report.package_gate)
    return out


def coverage_words(report: CertReport) -> list[str]:
    """What this run did not verify, in words; nothing when it verified all it states.

    From cert.json's `coverage`, or, in a report written before it, from `verification` and
    `scope`."""
    cov = report.coverage
    if cov is None:
        return _legacy_words(report)
    if cov.scope.kind == "file":
        return []  # a file inspected, not a package: nothing of a package to qualify
    words: list[str] = []
    d = cov.digests
    if d.mode == "none":
        words.append("no artifact read")
    elif d.sizes_only == d.artifacts:
        words.append("sizes only: digests not verified")
    elif d.sizes_only:
        words.append(f"digests: {d.sizes_only} of {d.artifacts} sizes only, not verified")
    if d.cached:
        words.append(f"digests: {d.cached} of {d.artifacts} from a verify cache, not re-hashed")
    if d.written:
        words.append(f"digests: {d.written} of {d.artifacts} hashed while writing, not re-read")
    if d.hub_attested and not d.sizes_only:
        share = "" if d.hub_attested == d.artifacts else f"{d.hub_attested} of {d.artifacts} "
        words.append(f"digests: {share}Hub-attested (LFS SHA-256), not re-hashed")
    scope = cov.scope
    if scope.kind == "slice":
        layers = ("no layers" if scope.layer_start is None or scope.layer_end is None
                  else f"layers {layer_range(scope.layer_start, scope.layer_end)}")
        words.append(f"slice {layers}: {scope.artifacts_checked}/{scope.artifacts_total} "
                     "artifacts; not a package verdict")
    if cov.parity == "not_available":
        words.append("parity not run")
    # a local package's files were there to parse: llama.cpp's parser missing is a coverage
    # gap (a remote package's fragments are read by byte ranges, never whole: the Hub's
    # qualifier already says those bytes were not read here)
    if cov.llama_cpp == "not_available" and report.local_package_dir is not None:
        words.append("llama.cpp not available")
    return words


def _legacy_words(report: CertReport) -> list[str]:
    words = []
    if report.verification == "size-only":
        words.append("sizes only: digests not verified")
    elif report.verification == "hub-attested":
        words.append("digests: Hub-attested (LFS SHA-256), not re-hashed")
    if report.scope is not None and report.merge is None:
        words.append(f"slice layers {layer_range(report.scope.layer_start, report.scope.layer_end)}"
                     f": {len(report.scope.artifacts)}/{len(report.declared_artifacts)} "
                     "artifacts; not a package verdict")
    return words
