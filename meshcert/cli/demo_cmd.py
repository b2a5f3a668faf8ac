"""`meshcert demo`: certify a bundled example package and render the evidence report."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

from meshcert.demo import run_demo


def demo(
    out: Annotated[str, typer.Option("--out", help="Folder for the demo package and "
                                     "reports.")] = "meshcert-demo",
) -> None:
    """Write a tiny real GLM-DSA-style package, certify it, and print where the reports are."""
    console = Console()
    result = run_demo(out)
    report = result.cert_report
    style = {"passed": "bold green", "failed": "bold red", "incomplete": "bold yellow"}
    console.print(f"package:       {result.package_dir}")
    console.print(f"certification: [{style[report.status]}]{report.status}[/] "
                  f"({len(report.findings)} finding(s), {len(report.checks)} check groups)")
    for label, path in result.outputs.items():
        console.print(f"{label}: {path}")
    if report.status != "passed":
        raise typer.Exit(1)
