"""The one verdict of a certification, stated the same in every format (console, HTML,
Markdown, JUnit, SARIF): the overall status, the gates that decided it, the finding counts and
how many checks ran.

The counts are cert.json's findings by severity, plus each failed warning-level runtime gate
as a warning (it does not change the status, but it is a warning the reader must see). The
gates named are the package gate, every runtime gate that did not pass (all of them passed
otherwise: one phrase says how many), and the attestation policy when `--trust` added its
findings (they decide the package gate with the rest).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from meshcert.certify.report import ATTESTATION_POLICY

if TYPE_CHECKING:
    from meshcert.certify.report import CertReport


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

    def counts(self) -> str:
        return (f"{_plural(self.errors, 'error')}, {_plural(self.warnings, 'warning')}, "
                f"{_plural(self.notes, 'note')}")

    def checks(self) -> str:
        return f"{_plural(self.checks_run, 'check')} run, {self.checks_skipped} skipped"

    def decided_by(self) -> str:
        return "; ".join(g.phrase() for g in self.gates)

    def sentence(self, subject: str = "certification") -> str:
        """`certification failed: 0 errors, 1 warning, 2 notes; 19 checks run, 17 skipped;
        package gate passed; runtime gate v1_models failed`"""
        return (f"{subject} {self.status}: {self.counts()}; {self.checks()}; "
                f"{self.decided_by()}")


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
                   gates=tuple(gates))
