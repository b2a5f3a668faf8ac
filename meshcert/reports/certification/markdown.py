"""Markdown rendering (fit for a GitHub Actions step summary) of the certification report."""

from __future__ import annotations

from meshcert.certify.report import CertReport
from meshcert.reports.certification.view import CertView, build_cert_view
from meshcert.reports.common import Fact
from meshcert.reports.mdutil import STATUS_ICONS, code, status, table, text


def _fact_rows(facts: list[Fact]) -> list[list[str]]:
    return [[text(f.label), (code(f.value) if f.mono else text(f.value))
             + (f" ({text(f.note)})" if f.note else "")] for f in facts]


def render_cert_markdown(report: CertReport) -> str:
    view = build_cert_view(report)
    out = _summary(report, view)
    out += _findings(view)
    if view.checks:
        out += ["", "### Checks", ""]
        out += table(["check", "status", "findings", "time", "details"],
                     [[code(c.name), status(c.status), str(c.findings), text(c.duration),
                       text(c.details)] for c in view.checks], ["l", "l", "r", "r", "l"])
    out += _coverage(view)
    for fig in view.stage_figures:
        out += ["", f"### {text(fig.title)}", ""]
        out += table(["stage", "layers", "shared parts fetched", "parts", "verified", "bytes"],
                     [[code(s.stage_id), text(s.layers),
                       ", ".join(code(p) for p in s.shared_parts) or "none",
                       str(s.parts), text(s.verified), text(s.size)] for s in fig.rows],
                     ["l", "l", "l", "r", "r", "r"])
    out += ["", "### Runtime gates", ""]
    out += table(["gate", "status", "HTTP", "latency", "TTFT", "tokens/s", "details"],
                 [[code(g.name), status(g.status), text(g.http_status), text(g.latency),
                   text(g.ttft), text(g.tokens_per_s), text(g.details)] for g in view.gates],
                 ["l", "l", "r", "r", "r", "r", "l"])
    out += _node(view)
    out += ["", "### What was verified", ""]
    out += table(["field", "value"], _fact_rows(view.coverage_facts))
    out += ["", "<details><summary>Provenance</summary>", ""]
    out += table(["field", "value"], [[text(f.label), (code(f.value) if f.mono else text(f.value))
                             + (f" ({text(f.note)})" if f.note else "")]
                            for f in view.provenance])
    out += ["", "</details>", ""]
    return "\n".join(out)


def _summary(report: CertReport, view: CertView) -> list[str]:
    """The headline, the ref, the package, the gates' and findings' counts, the verdict and
    the attestation."""
    b = view.banner
    out = [f"## {STATUS_ICONS[b.status]} {text(b.headline)}: {code(b.subject)}", ""]
    out.append(f"**Ref:** {code(b.ref_text)} ({text(b.pin_text)})  ")
    if report.package_format is not None:
        package = f"**Package format:** {report.package_format}"
        if report.package_id is not None:
            package += f" \u00b7 **Package id:** {code(report.package_id)}"
        out.append(package + "  ")
    runtime = next((s.value for s in b.stats if s.label == "runtime gates"), "")
    out.append(f"**Package gate:** {status(report.package_gate.status)} \u00b7 "
               f"**Runtime gates:** {text(runtime)} \u00b7 **Findings:** "
               f"{view.counts['error']} error(s), {view.counts['warning']} warning(s), "
               f"{view.counts['info']} note(s) \u00b7 **Checks:** {view.checks_run} run, "
               f"{view.checks_skipped} skipped  ")
    if b.coverage:
        out.append(f"**Partial coverage:** {text(b.coverage)}  ")
    out.append(f"**Verdict:** {text(b.verdict)}")
    if b.gate_details:
        out += ["", f"> {text(b.gate_details)}"]
    if report.attestation is not None:
        a = report.attestation
        out += ["", f"**Attestation:** {text(a.result)}, signed by {code(a.signer)}, "
                f"{a.subjects} subject(s)" + (f" in {code(a.file)}" if a.file else "")]
    return out


def _findings(view: CertView) -> list[str]:
    """The findings by severity, then by check."""
    out = ["", "### Findings", ""]
    if not view.severity_groups:
        out.append("No findings.")
    for group in view.severity_groups:
        out += [f"#### {text(group.title)} ({group.count})", ""]
        for check in group.checks:
            out += [f"**{text(check.name)}** ({status(check.status)})", ""]
            out += table(["code", "where", "message", "remediation"], [
                [code(f.code), " ".join(filter(None, [
                    code(f.where) if f.where else "",
                    f"layer {text(f.layer)}" if f.layer else ""])),
                 text(f.message), text(f.remediation)] for f in check.findings])
            out.append("")
    return out


def _coverage(view: CertView) -> list[str]:
    """Which slice report verified which layers (a merged certification), if any."""
    if view.coverage is None:
        return []
    out = ["", "### Slice coverage", "", text(view.coverage.summary), ""]
    out += table(["slice report", "stage", "layers", "artifacts", "status"],
                 [[code(s.report), text(s.stage), text(s.layers), str(s.artifacts),
                   status(s.status)] for s in view.coverage.rows], ["l", "l", "l", "r", "l"])
    if view.coverage.unverified:
        out += ["", "Verified by no slice: "
                + ", ".join(code(p) for p in view.coverage.unverified)]
    return out


def _node(view: CertView) -> list[str]:
    """What a node will apply (typed defaults, mesh-llm's fields, request profiles), if any."""
    if view.node is None:
        return []
    out = ["", "### What a node will apply", ""]
    out += table(["field", "value"], _fact_rows(view.node.applies + view.node.mesh_llm))
    if view.node.profiles:
        out += ["", "Request profiles:", ""]
        out += table(["profile", "selected as", "fields", "source"],
                     [[code(p.name), text(p.selection or "\u2014"),
                       "; ".join(f"{text(k)} {code(v)}" for k, v in p.fields),
                       code(p.source) if p.source else "\u2014"]
                      for p in view.node.profiles])
    return out
