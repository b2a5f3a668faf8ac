"""`meshcert models inspect`: audit one GGUF file (or a split set from its first shard).

The same report model and finding codes as certification: the file's headers go into a
standalone PackageView (no manifest), llama.cpp's own parser gives its verdict, and every
registered check runs except the ones that judge a layer package (its manifest, README, Hub
metadata, per-layer ownership, source parity), which have nothing to look at here, and the ones
only an option of `models certify` runs. The verdict is about one file (`inspection passed:
FILE.gguf: ...`): the report's coverage scope is `file`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from meshcert.certify.checks import AskedFor, Check, all_checks
from meshcert.certify.engine import build_report
from meshcert.certify.manifest_parse import ParsedManifest
from meshcert.certify.report import CertReport
from meshcert.certify.report_ref import RefInfo
from meshcert.certify.view import PackageView
from meshcert.certify.workers.llama_gguf import LLAMA_CPP_FACTS_KEY, GGUFSecondOpinion, LlamaCppGGUF
from meshcert.core.clock import utc_now
from meshcert.core.findings import Finding, finding
from meshcert.core.gguf.reader import read_header_file

# Checks that need a layer package (a manifest, its declared roles and layers): not run here.
PACKAGE_CHECKS = frozenset({
    "manifest_json", "manifest_fields", "source_model", "skippy_abi", "projectors", "layers",
    "artifact_entries", "artifact_files", "undeclared_artifacts", "hub_metadata",
    "generation_fields", "generation_policy", "generation_thresholds", "generation_evidence",
    "speculative_decoding", "speculative_proposers", "speculative_strategies", "readme",
    "gguf_manifest_counts", "tensor_ownership", "gguf_architecture", "native_mtp_tensors",
    "glm_dsa_contract", "source_parity",
})
_SPLIT = re.compile(r"^(?P<stem>.+)-(?P<no>\d{5})-of-(?P<count>\d{5})\.gguf$")


def inspect_checks() -> list[Check]:
    """Every registered check that applies to bare GGUF files and that `inspect` can run: not
    the package's, and none that only runs when an option asks for it (--layers, --stages,
    --materialize, --parity: options `inspect` does not take, so it lists no check that
    points at them)."""
    return [c for c in all_checks() if c.name not in PACKAGE_CHECKS
            and not any(isinstance(rule, AskedFor) for rule in c.runs_when)]


def split_set(path: str) -> tuple[list[str], list[Finding]]:
    """The files to inspect: the path itself, or every shard when it names a first shard
    (`*-00001-of-0000N.gguf`); a missing shard is a finding (the audit is incomplete)."""
    match = _SPLIT.match(os.path.basename(path))
    if match is None or int(match["no"]) != 1:
        return [path], []
    count = int(match["count"])
    folder = os.path.dirname(path)
    shards = [os.path.join(folder, f"{match['stem']}-{i:05d}-of-{count:05d}.gguf")
              for i in range(1, count + 1)]
    present = [s for s in shards if os.path.isfile(s)]
    problems = [finding("check_not_run", f"{s}: shard {i} of {count} of the split set is "
                        "missing, so the set was not fully inspected", path=s)
                for i, s in enumerate(shards, start=1) if s not in present]
    return present, problems


def inspect_gguf(path: str, opinion: GGUFSecondOpinion | None = None) -> CertReport:
    """Inspect `path`; always returns a report (a bad file is findings, never an exception)."""
    started = utc_now()
    files, problems = split_set(path)
    view = PackageView(ref=RefInfo(kind="local", pinned=False), display_ref=path,
                       local_dir=None, manifest_raw=None, parsed=ParsedManifest(None),
                       standalone=True, source_findings=problems,
                       source_incomplete=bool(problems))
    for name in files:
        view.headers[name] = read_header_file(name)
    try:
        facts = (opinion or LlamaCppGGUF()).check({name: Path(name) for name in files})
        view.source_facts[LLAMA_CPP_FACTS_KEY] = facts
    except Exception as exc:  # containment: an unusable second opinion is incomplete
        view.source_findings.append(finding("internal_error", "asking llama.cpp's GGUF parser "
                                            f"failed: {type(exc).__name__}: {exc}"[:300]))
        view.source_incomplete = True
    return build_report(view, input_text=path, started_at=started, checks=inspect_checks())
