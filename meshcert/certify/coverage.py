"""What a run verified (pure): the `coverage` section of cert.json.

Digests (hashed here, from a verify cache, hashed while `package write` wrote them, sizes only,
Hub-attested), scope (the package or a slice), runtime (whether gates ran and which model
answered), parity and llama.cpp (ran, not available, not asked). The verdict sentence states
the partial ones in words (meshcert.certify.verdict), and `runtime_model_mismatch` is raised
here when the model that answered is not the one the package or the run names.

One rule for a missing tool: a check the run did not explicitly ask for whose tool is missing
(llama.cpp's GGUF parser without llama-cpp-python) is `skipped`, "not available: ..."; a tool
the user explicitly asked for (--materialize, --parity) that is missing makes the report
`incomplete` (`check_not_run`): the user asked for a verification that did not happen.
"""

from __future__ import annotations

from collections.abc import Sequence

from meshcert.certify.report import (
    REQUESTED_MODEL,
    SERVED_MODEL,
    Coverage,
    DigestCoverage,
    DigestCoverageMode,
    RuntimeCoverage,
    RuntimeGate,
    ScopeCoverage,
    ToolCoverage,
)
from meshcert.certify.view import PackageView
from meshcert.certify.workers.llama_gguf import LLAMA_CPP_FACTS_KEY, LlamaCppFacts
from meshcert.core.findings import Finding, finding

RUNTIME_GATES = "runtime_gates"  # the `check` named by runtime_model_mismatch


def digest_coverage(view: PackageView) -> DigestCoverage:
    """How each present artifact of this run's slice had its digest verified."""
    hashed = cached = written = hub = sizes = 0
    for entry in view.artifacts():
        fact = view.files.get(entry.path) if isinstance(entry.path, str) else None
        if fact is None or fact.kind != "file" or not view.selected(entry.path):
            continue
        if fact.sha256 is not None and fact.hash_cached and view.options.digests_written:
            written += 1
        elif fact.sha256 is not None and fact.hash_cached:
            cached += 1
        elif fact.sha256 is not None:
            hashed += 1
        elif fact.lfs_sha256 is not None:
            hub += 1
        else:
            sizes += 1
    total = hashed + cached + written + hub + sizes
    mode: DigestCoverageMode = ("none" if total == 0 else "sizes_only" if sizes else
                                "cache" if cached else "written" if written else
                                "hub_attested" if hub else "hashed")
    return DigestCoverage(mode=mode, artifacts=total, hashed=hashed, cached=cached,
                          written=written, hub_attested=hub, sizes_only=sizes)


def scope_coverage(view: PackageView) -> ScopeCoverage:
    if view.standalone:  # `models inspect`: a GGUF file (or a split set), no package
        return ScopeCoverage(kind="file", artifacts_checked=len(view.headers),
                             artifacts_total=len(view.headers))
    declared = {e.path for e in view.artifacts() if isinstance(e.path, str)}
    selection = view.selection()
    if selection.request is None:
        return ScopeCoverage(kind="package", artifacts_checked=len(declared),
                             artifacts_total=len(declared))
    stage = selection.stage
    checked = len(declared & set(selection.paths or ()))
    return ScopeCoverage(kind="slice", layer_start=stage.layer_start if stage else None,
                         layer_end=stage.layer_end if stage else None,
                         artifacts_checked=checked, artifacts_total=len(declared))


def runtime_coverage(gates: Sequence[RuntimeGate]) -> RuntimeCoverage:
    ran = [g for g in gates if g.status != "not_required" and g.name != "split_parity"]
    if not ran:
        return RuntimeCoverage(status="not_asked")
    chat = next((g for g in ran if g.name == "v1_chat_completions"), None)
    measures = chat.measurements if chat is not None else {}
    requested, served = measures.get(REQUESTED_MODEL), measures.get(SERVED_MODEL)
    return RuntimeCoverage(status="ran",
                           requested_model=requested if isinstance(requested, str) else None,
                           served_model=served if isinstance(served, str) else None)


def parity_coverage(view: PackageView) -> ToolCoverage:
    if not view.options.parity:
        return "not_asked"
    result = view.parity
    return "not_available" if result is None or result.status == "not_run" else "ran"


def llama_cpp_coverage(view: PackageView) -> ToolCoverage:
    facts = view.source_facts.get(LLAMA_CPP_FACTS_KEY)
    if not isinstance(facts, LlamaCppFacts):
        return "not_asked"
    return "not_available" if facts.unavailable else "ran"


def build_coverage(view: PackageView, gates: Sequence[RuntimeGate]) -> Coverage:
    return Coverage(digests=digest_coverage(view), scope=scope_coverage(view),
                    runtime=runtime_coverage(gates), parity=parity_coverage(view),
                    llama_cpp=llama_cpp_coverage(view))


def model_mismatch(runtime: RuntimeCoverage, package_model_id: str | None) -> list[Finding]:
    """`runtime_model_mismatch` when the model that answered the runtime gates is neither the
    package's model_id nor the model the run asked for (--served-model)."""
    served = runtime.served_model
    expected = [m for m in (package_model_id, runtime.requested_model) if m]
    if served is None or not expected or served in expected:
        return []
    said = finding("runtime_model_mismatch", f"the endpoint answered as model {served!r}, "
                   f"not {' or '.join(repr(m) for m in dict.fromkeys(expected))}: the runtime "
                   "gates may have tested another model than this package")
    return [said.model_copy(update={"check": RUNTIME_GATES})]
