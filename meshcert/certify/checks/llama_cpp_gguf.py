"""llama.cpp's verdict on each fragment (gathered by meshcert.certify.workers.llama_gguf), as
findings."""

from __future__ import annotations

from collections.abc import Iterator

from meshcert.certify.checks import applicable, not_available, register
from meshcert.certify.checks.gguf_structure import exempt_carrier
from meshcert.certify.package_gguf.fragments import declared_headers
from meshcert.certify.view import PackageView
from meshcert.certify.workers.llama_gguf import LLAMA_CPP_FACTS_KEY, LlamaCppFacts, LlamaCppVerdict
from meshcert.core.findings import Finding, finding
from meshcert.core.gguf.model import GGUFHeader, HeaderProblem

# llama.cpp's complaint about tensor-info offsets (gguf.cpp: "tensor '%s' has offset %lu,
# expected %zu"): by design for a package-v2 metadata carrier, whose infos point elsewhere.
_OFFSET_RULE = "has offset"


def _facts(view: PackageView) -> LlamaCppFacts | None:
    facts = view.source_facts.get(LLAMA_CPP_FACTS_KEY)
    return facts if isinstance(facts, LlamaCppFacts) else None


def _remote(view: PackageView) -> bool:
    return view.local_dir is None and not view.standalone


def _unavailable(view: PackageView) -> str | None:
    facts = _facts(view)
    return facts.unavailable if facts is not None and not _remote(view) else None


# Not explicitly asked for (it runs whenever llama-cpp-python is there), so a missing tool
# makes it `skipped`, "not available: ...", never passed (meshcert.certify.coverage says the
# one rule); a remote package's fragments are never whole on disk: not applicable.
@register("llama_cpp_gguf", order=305, codes=["llama_cpp_gguf_rejected"], runs_when=[
    applicable(lambda view: _facts(view) is not None,
               "llama.cpp's GGUF parser was not asked about these files"),
    applicable(lambda view: not _remote(view), "the package is remote: its fragments are "
               "read by header byte ranges, and llama.cpp's parser needs the whole file"),
    not_available(_unavailable)])
def check_llama_cpp_gguf(view: PackageView) -> Iterator[Finding]:
    """Every fragment llama.cpp's gguf_init_from_file refused, with llama.cpp's reason."""
    facts = _facts(view)
    if facts is None or facts.unavailable:
        return
    for artifact, path, header in declared_headers(view):
        verdict = facts.verdicts.get(path)
        if verdict is None or verdict.accepted:
            continue
        if isinstance(header, HeaderProblem) and header.code == "check_not_run":
            continue  # the file could not be read at all: already incomplete, not llama's call
        if isinstance(header, GGUFHeader) and exempt_carrier(view, artifact, header) \
                and _only_offset_rule(verdict):
            continue  # the carrier by the manifest's role (a fragment's marker exempts nothing)
        yield finding("llama_cpp_gguf_rejected", f"{path}: llama.cpp's GGUF parser refuses the "
                      f"file: {reason(verdict)}", path=path, layer_index=artifact.layer_index)


def reason(verdict: LlamaCppVerdict) -> str:
    """llama.cpp's log without the generic trailer lines, on one line."""
    lines = [line.strip() for line in verdict.log.splitlines() if line.strip()]
    specific = [line for line in lines if not line.endswith(("failed to read tensor info",
                                                             "failed to read key-value pairs",
                                                             "failed to read header",
                                                             "failed to read tensor data"))]
    return "; ".join(specific or lines)[:600] or "no reason logged"


def _only_offset_rule(verdict: LlamaCppVerdict) -> bool:
    return _OFFSET_RULE in verdict.log and "failed to read tensor info" not in verdict.log
