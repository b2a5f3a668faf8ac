"""What a package is now, for comparing with an attestation: its manifest's declared artifacts
and each file's SHA-256 (local: the bytes; hf://: the Hub's LFS SHA-256 at the revision).

An hf:// package costs a constant number of requests, whatever its size: one
`model_info(files_metadata)` (commit and listing), the manifest, and (when it is to be read from
the repo) the attestation file. No GGUF header and no artifact byte is read. A plain-git file
(a v2 publisher file: no LFS SHA-256 in the listing) is matched by the git blob id the listing
gives when every statement of the attestation carries a `gitBlob` digest for it; otherwise
(attestations made before meshcert wrote `gitBlob`) it is downloaded to hash it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial

from meshcert.attest.dsse import MAX_FILE_BYTES, EnvelopeError, parse_lines
from meshcert.attest.statement import MANIFEST_NAME, StatementError, parse_statement
from meshcert.certify.manifest_parse import MAX_MANIFEST_BYTES, parse_manifest
from meshcert.core.findings import Finding, finding

ATTESTATION_PATH = "attestations/meshcert.intoto.jsonl"
HASH_WORKERS = 4


@dataclass
class PackageState:
    ref: str  # as given
    repo: str | None = None  # hf:// only
    commit: str | None = None  # hf:// only: the resolved commit
    declared: list[str] = field(default_factory=list)  # artifact paths the manifest declares
    digests: dict[str, str] = field(default_factory=dict)  # path -> sha256 (manifest included)
    # plain-git files matched without a download: path -> the listing's git blob id
    git_blobs: dict[str, str] = field(default_factory=dict)
    absent: dict[str, str] = field(default_factory=dict)  # path -> why it has no digest
    problems: list[Finding] = field(default_factory=list)  # the package could not be read
    manifest_raw: bytes | None = None
    attestation: bytes | None = None  # read from the repo (hf://), when asked for
    attestation_listed: bool = False
    requests: int = 0


def declared_artifacts(raw: bytes) -> tuple[list[str], list[Finding]]:
    """The artifact paths a manifest declares (v1 and v2), or the findings why not."""
    from meshcert.certify.report_ref import RefInfo
    from meshcert.certify.view import PackageView

    parsed = parse_manifest(raw)
    if parsed.data is None:
        return [], list(parsed.findings) or [finding(
            "invalid_manifest_json", f"{MANIFEST_NAME} could not be read", path=MANIFEST_NAME)]
    view = PackageView(ref=RefInfo(kind="local", pinned=False), display_ref="", local_dir=None,
                       manifest_raw=raw, parsed=parsed)
    paths = [e.path for e in view.artifacts() if isinstance(e.path, str)]
    return list(dict.fromkeys(paths)), []


def local_state(root: str, wanted: Callable[[list[str]], list[str]] | None = None
                ) -> PackageState:
    """Hash the manifest and every declared artifact of the package directory `root`."""
    from meshcert.certify.paths import unsafe_path_reason
    from meshcert.core.hashing import sha256_file

    state = PackageState(ref=root)
    manifest = os.path.join(root, MANIFEST_NAME)
    try:
        with open(manifest, "rb") as handle:
            raw = handle.read(MAX_MANIFEST_BYTES + 1)
    except OSError as exc:
        state.problems.append(finding("missing_manifest", f"cannot read {manifest}: "
                                      f"{exc.strerror or exc}", path=MANIFEST_NAME))
        return state
    if len(raw) > MAX_MANIFEST_BYTES:
        state.problems.append(finding("manifest_too_large", f"{MANIFEST_NAME} is over the "
                                      "16 MiB limit", path=MANIFEST_NAME))
        return state
    state.digests[MANIFEST_NAME] = hashlib.sha256(raw).hexdigest()
    state.manifest_raw = raw
    state.declared, state.problems = declared_artifacts(raw)
    paths = [p for p in state.declared if unsafe_path_reason(p) is None]
    for path in state.declared:
        if path not in paths:
            state.absent[path] = "an unsafe path"

    def one(path: str) -> tuple[str, str | None, str | None]:
        full = os.path.join(root, *path.split("/"))
        if not os.path.isfile(full):
            return path, None, "no such file"
        try:
            return path, sha256_file(full), None
        except OSError as exc:
            return path, None, f"unreadable: {exc.strerror or exc}"

    with ThreadPoolExecutor(max_workers=HASH_WORKERS) as pool:
        for path, digest, why in pool.map(one, paths):
            if digest is not None:
                state.digests[path] = digest
            else:
                state.absent[path] = why or "unreadable"
    return state


def git_blob_subjects(attestation: bytes | None) -> set[str]:
    """The subjects that every statement of the attestation file gives a `gitBlob` digest
    (read, not verified: this only decides which plain-git files need no download; the
    verification compares what was signed). Empty when the file does not parse."""
    if attestation is None:
        return set()
    try:
        envelopes = parse_lines(attestation, ATTESTATION_PATH).envelopes
    except EnvelopeError:
        return set()
    common: set[str] | None = None
    for envelope in envelopes:
        try:
            names = set(parse_statement(envelope.payload).git_blobs)
        except StatementError:
            continue
        common = names if common is None else common & names
    return common or set()


def hub_state(repo: str, revision: str | None, *, read_attestation: bool,
              gate: object | None = None, attestation: bytes | None = None) -> PackageState:
    """The package at hf://repo@revision from the Hub's listing: LFS SHA-256 per artifact, and
    a plain-git file's git blob id when the attestation (`attestation`, or the one read from
    the repo) matches it by `gitBlob`."""
    from meshcert.certify.sources.hub import listed_content_problem
    from meshcert.core.hub.api import HubApi
    from meshcert.core.hub.errors import HubError
    from meshcert.core.hub.files import HubFiles, new_client
    from meshcert.core.hub.gate import RequestGate
    from meshcert.core.hub.settings import HubSettings
    from meshcert.core.hub.stats import TransferCounter
    from meshcert.core.hub.token import token_redactor

    ref = f"hf://{repo}@{revision}" if revision else f"hf://{repo}"
    state = PackageState(ref=ref, repo=repo)
    settings = HubSettings.from_env()
    counter = TransferCounter()
    redact = token_redactor()
    shared = gate if isinstance(gate, RequestGate) else None
    api = HubApi(settings, counter=counter, redact=redact, gate=shared)
    files: HubFiles | None = None
    side = ThreadPoolExecutor(max_workers=2, thread_name_prefix="attest-hub")
    client = side.submit(new_client, settings)  # its TLS set-up overlaps model_info
    try:
        resolved = api.resolve(repo, revision)
        state.commit = resolved.commit
        listing = resolved.files if resolved.files is not None else api.tree(repo,
                                                                             resolved.commit)
        by_path = {f.path: f for f in listing}
        files = HubFiles(settings, repo=repo, commit=resolved.commit, counter=counter,
                         redact=redact, gate=shared, client=client.result())
        manifest = by_path.get(MANIFEST_NAME)
        if manifest is None:
            state.problems.append(finding("missing_manifest", f"{ref} has no {MANIFEST_NAME} at "
                                          f"{resolved.commit}", path=MANIFEST_NAME))
            return state
        listed = by_path.get(ATTESTATION_PATH)
        state.attestation_listed = listed is not None
        pending = None
        if read_attestation and listed is not None:  # read beside the manifest
            pending = side.submit(files.read_all, ATTESTATION_PATH, MAX_FILE_BYTES,
                                  check=partial(listed_content_problem, listed))
        raw = files.read_all(MANIFEST_NAME, MAX_MANIFEST_BYTES,
                             check=partial(listed_content_problem, manifest))
        state.digests[MANIFEST_NAME] = hashlib.sha256(raw).hexdigest()
        state.manifest_raw = raw
        state.declared, state.problems = declared_artifacts(raw)
        if pending is not None:
            state.attestation = pending.result()
        by_blob = git_blob_subjects(attestation if attestation is not None
                                    else state.attestation)
        for path in state.declared:
            entry = by_path.get(path)
            if entry is None:
                state.absent[path] = f"not in the listing at {resolved.commit}"
            elif entry.lfs_sha256 is not None:
                state.digests[path] = entry.lfs_sha256
            elif path in by_blob and entry.blob_id:  # plain git, matched by its listed blob id
                state.git_blobs[path] = entry.blob_id.lower()
            else:  # plain git, attested without gitBlob: its SHA-256 is read
                data = files.read_all(path, MAX_MANIFEST_BYTES,
                                      check=partial(listed_content_problem, entry))
                state.digests[path] = hashlib.sha256(data).hexdigest()
    except HubError as err:
        state.problems.append(err.to_finding())
    finally:
        side.shutdown(wait=True)
        if files is not None:
            files.close()
        elif client.exception() is None:
            client.result().close()
        state.requests = counter.requests
    return state
