"""The source is audited before anything is written: `meshcert models inspect`'s rules.

A local source is inspected exactly as `models inspect` does (the header checks that apply to
bare GGUF files, plus llama.cpp's own parser in a worker process); a Hub source gets the same
header checks on the headers already read over HTTP ranges (llama.cpp's parser needs a local
file). Any error finding refuses the write, naming the findings.
"""

from __future__ import annotations

from meshcert.certify.report import CertReport
from meshcert.core.errors import Refused
from meshcert.core.findings import Finding
from meshcert.writer.source import SourceModel


def _report(source: SourceModel) -> CertReport:
    if source.kind == "local":
        from meshcert.certify.inspect_file import inspect_gguf

        return inspect_gguf(source.primary.location)
    from meshcert.certify.engine import build_report
    from meshcert.certify.inspect_file import inspect_checks
    from meshcert.certify.manifest_parse import ParsedManifest
    from meshcert.certify.report_ref import RefInfo
    from meshcert.certify.view import PackageView
    from meshcert.core.clock import utc_now

    started = utc_now()
    view = PackageView(ref=RefInfo(kind="hf", repo=source.repo, pinned=False),
                       display_ref=source.primary.location, local_dir=None, manifest_raw=None,
                       parsed=ParsedManifest(None), standalone=True)
    for f in source.files:
        view.headers[f.location] = f.header
    return build_report(view, input_text=source.primary.location, started_at=started,
                        checks=inspect_checks())


def _line(f: Finding) -> str:
    return f"{f.code}: {f.message}"


def inspect_source(source: SourceModel) -> CertReport:
    """The inspection report; raises Refused when it has error findings."""
    report = _report(source)
    errors = [f for f in report.findings if f.severity == "error"]
    if errors:
        shown = "; ".join(_line(f) for f in errors[:5])
        more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
        raise Refused(f"the source fails `meshcert models inspect` with "
                      f"{len(errors)} error(s): {shown}{more}", code="hostile_source")
    return report
