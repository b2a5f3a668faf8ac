"""The one verdict of a certification, as every report format states it: it lives with the
certifier (meshcert.certify.verdict), so the catalog's rows can state it too."""

from meshcert.certify.verdict import (
    GateVerdict,
    Verdict,
    coverage_words,
    inspected_file,
    runtime_gate_verdicts,
    uncounted_gates,
    verdict,
)

__all__ = ["GateVerdict", "Verdict", "coverage_words", "inspected_file",
           "runtime_gate_verdicts", "uncounted_gates", "verdict"]
