"""`meshcert demo`: certify a bundled example package and render the evidence report."""

from __future__ import annotations

from collections import Counter
from typing import Annotated

import typer

from meshcert.cli.exit_codes import Exit


def demo(
    out: Annotated[str, typer.Option("--out", help="Folder for the demo package and "
                                     "reports.")] = "meshcert-demo",
) -> None:
    """Write a tiny real GLM-DSA-style package, certify it, and print where the reports are."""
    from rich.console import Console
    from rich.markup import escape

    from meshcert.cli.cert_console import counts_line
    from meshcert.demo import run_demo

    console = Console(soft_wrap=True)  # a verdict, a path, an id: never wrapped mid-token
    result = run_demo(out)
    report = result.cert_report
    style = {"passed": "bold green", "failed": "bold red", "incomplete": "bold yellow"}
    console.print(f"package:       {result.package_dir}")
    console.print(f"[{style[report.status]}]{escape(counts_line(report))}[/]")
    v2 = result.v2_report
    if v2 is not None:
        console.print(f"package v2:    {result.v2_package_dir} (package_id {v2.package_id})")
        console.print(f"[{style[v2.status]}]{escape(counts_line(v2))}[/]")
    evidence = result.evidence_report
    if evidence is not None:
        from meshcert.evidence.headline import headline_of

        gate = evidence.gate
        head = headline_of(evidence)
        verdicts = Counter(d.verdict for d in evidence.decisions)
        console.print(f"[{style.get(head.status, 'bold yellow')}]evidence {head.status}: "
                      f"{escape(head.summary)}[/]")
        console.print(
            f"evidence:      Phase E gate {'passed' if gate.passed else 'failed'} (advisory), "
            f"{len(gate.missing_rows)} required row(s) missing, {len(gate.errors)} error(s); "
            "decisions: " + ", ".join(f"{v} x{n}" for v, n in sorted(verdicts.items())))
    parity = result.parity_gate
    if parity is not None:
        console.print(f"split parity:  [{style.get(parity.status, 'bold yellow')}]"
                      f"{parity.status}[/] on a tiny llama package "
                      f"({escape(parity.details or '')})")
    else:
        console.print(f"split parity:  {escape(result.parity_note or '')}")
    for label, path in result.outputs.items():
        console.print(f"{label}: {path}")
    if report.status != "passed" or (v2 is not None and v2.status != "passed") or (
            parity is not None and parity.status == "failed"):
        raise typer.Exit(Exit.FAILED)
