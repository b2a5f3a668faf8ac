"""mesh-llm's Hugging Face publication gate (mesh-llm-0.79.md §6.1): the rules its HF job
(`skippy-model-package layer-job project`, `layer_job.rs` @3781f4f3) applies before it
publishes a package. They are stricter than the package format: the format accepts an upper-case
hex revision and an absent `source_model.repo`/`revision`; the job refuses both.

One pure function, `publication_refusals`, for everyone who asks: `package write --publish` and
`package publish` refuse before any work (exit 2), `models certify` warns
`mesh_llm_publish_would_refuse`. Each refusal carries the rule in mesh-llm's words (the text its
job prints) and what in this manifest breaks it. Rule 4 (the manifest parses and passes the
format's root validation) is the certifier's own work and is not repeated here.

Test vectors are derived by hand from §6.1 (no mesh-llm output exists for them).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

MAX_MANIFEST_BYTES = 8 * 1024 * 1024  # "package root byte bound exceeded"
MAX_SOURCE_IDENTITY_CHARS = 4096
RESERVED_ARTIFACT_PATHS = ("model-package.json", "README.md")
_REPO_PART = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
_REVISION = re.compile(r"^[0-9a-f]{40}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

# mesh-llm's words for each rule (§6.1), as its job prints them
COORDINATE = "HF model coordinate refused"
REVISION = "immutable source revision refused"
BYTE_BOUND = "package root byte bound exceeded"
SOURCE_IDENTITY = "package source identity does not match resolved source"
ARTIFACT_ROSTER = "package artifact size/path roster refused"
SOURCE_SUMMARY = "source summary identity refused"


@dataclass(frozen=True)
class PublicationRefusal:
    rule: str  # mesh-llm's message for the rule
    detail: str  # what in this manifest breaks it

    @property
    def message(self) -> str:
        return f"{self.rule}: {self.detail}"


def is_hf_coordinate(repo: str) -> bool:
    """`owner/name`, each part 1-128 of [A-Za-z0-9._-], neither `.` nor `..` (rule 1)."""
    parts = repo.split("/")
    return len(parts) == 2 and all(_REPO_PART.match(p) and p not in (".", "..") for p in parts)


def is_immutable_revision(revision: str) -> bool:
    """Exactly 40 lower-case hex characters (rule 2; the format also takes upper case)."""
    return _REVISION.match(revision) is not None


def publication_refusals(manifest: Mapping[str, Any] | None, *,
                         manifest_bytes: int | None = None,
                         resolved_repo: str | None = None,
                         resolved_revision: str | None = None) -> list[PublicationRefusal]:
    """Every rule of mesh-llm's HF publication job this manifest breaks, in the job's order.

    `manifest` may be partial (a writer checks what it knows before writing: the source
    identity; the artifact rules have no artifact_catalog to read). `manifest_bytes` is the size of
    model-package.json when known. `resolved_repo`/`resolved_revision` are the source the job
    would resolve (the writer's Hub source, or its --source-repo/--source-revision); without
    them the manifest's own values stand for it."""
    document: Mapping[str, Any] = manifest if isinstance(manifest, Mapping) else {}
    raw_source = document.get("source_model")
    source: Mapping[str, Any] = raw_source if isinstance(raw_source, Mapping) else {}
    declared_repo, declared_revision = source.get("repo"), source.get("revision")
    repo = resolved_repo if resolved_repo is not None else declared_repo
    revision = resolved_revision if resolved_revision is not None else declared_revision
    out: list[PublicationRefusal] = []
    if isinstance(repo, str) and not is_hf_coordinate(repo):
        out.append(PublicationRefusal(COORDINATE, f"source repo {_shown(repo)} is not "
                                      "owner/name (each part 1-128 of A-Z a-z 0-9 . _ -)"))
    if isinstance(revision, str) and not is_immutable_revision(revision):
        why = ("upper-case hex (the format accepts it, the job does not)"
               if re.fullmatch(r"[0-9A-Fa-f]{40}", revision) else "not a 40-hex commit")
        out.append(PublicationRefusal(REVISION, f"source revision {_shown(revision)} is {why}"))
    if manifest_bytes is not None and manifest_bytes > MAX_MANIFEST_BYTES:
        out.append(PublicationRefusal(BYTE_BOUND, f"model-package.json is {manifest_bytes:,} "
                                      f"bytes, over {MAX_MANIFEST_BYTES:,} (8 MiB)"))
    out += _source_identity(declared_repo, declared_revision, resolved_repo, resolved_revision)
    out += _artifact_roster(document.get("artifact_catalog"))
    summary = _source_summary(source) if raw_source is not None else None
    if summary is not None:
        out.append(summary)
    return out


def _source_identity(repo: object, revision: object, resolved_repo: str | None,
                     resolved_revision: str | None) -> list[PublicationRefusal]:
    """Rule 5: source_model.repo and .revision present and equal to the resolved source."""
    out: list[PublicationRefusal] = []
    for field, value, resolved in (("repo", repo, resolved_repo),
                                   ("revision", revision, resolved_revision)):
        if not isinstance(value, str) or not value.strip():
            out.append(PublicationRefusal(SOURCE_IDENTITY, f"source_model.{field} is "
                                          f"{'absent' if value is None else _shown(value)}: "
                                          "optional in the format, required to publish"))
        elif resolved is not None and value != resolved:
            out.append(PublicationRefusal(SOURCE_IDENTITY, f"source_model.{field} is "
                                          f"{_shown(value)}, the resolved source's is "
                                          f"{_shown(resolved)}"))
    return out


def _artifact_roster(artifact_catalog: object) -> list[PublicationRefusal]:
    """Rule 6: every artifact has a non-zero byte_size, a unique path, and a path that is
    neither model-package.json nor README.md."""
    entries = artifact_catalog.get("entries") if isinstance(artifact_catalog, Mapping) else None
    if not isinstance(entries, list):
        return []
    out: list[PublicationRefusal] = []
    paths = [e.get("path") for e in entries if isinstance(e, Mapping)]
    empty = [_label(e, i) for i, e in enumerate(entries)
             if isinstance(e, Mapping) and e.get("byte_size") == 0
             and not isinstance(e.get("byte_size"), bool)]
    if empty:
        out.append(PublicationRefusal(ARTIFACT_ROSTER, f"{len(empty)} artifact(s) of 0 bytes: "
                                      f"{_preview(empty)}"))
    repeated = sorted(p for p, n in Counter(p for p in paths if isinstance(p, str)).items()
                      if n > 1)
    if repeated:
        out.append(PublicationRefusal(ARTIFACT_ROSTER, f"artifact path(s) listed more than "
                                      f"once: {_preview([_shown(p) for p in repeated])}"))
    reserved = sorted({p for p in paths if p in RESERVED_ARTIFACT_PATHS})
    if reserved:
        out.append(PublicationRefusal(ARTIFACT_ROSTER, f"{', '.join(reserved)} named as an "
                                      "artifact: the job writes these files itself"))
    return out


def _source_summary(source: Mapping[str, Any]) -> PublicationRefusal | None:
    """Rule 7: the source identity (canonical_ref, else primary_file, else sha256) is
    non-empty, at most 4096 characters, without control characters."""
    field, value = next(((k, source.get(k)) for k in ("canonical_ref", "primary_file", "sha256")
                         if source.get(k) is not None), ("canonical_ref", None))
    if not isinstance(value, str) or not value:
        return PublicationRefusal(SOURCE_SUMMARY, "none of source_model.canonical_ref, "
                                  "primary_file, sha256 is a non-empty string")
    if len(value) > MAX_SOURCE_IDENTITY_CHARS:
        return PublicationRefusal(SOURCE_SUMMARY, f"source_model.{field} is {len(value):,} "
                                  f"characters, over {MAX_SOURCE_IDENTITY_CHARS:,}")
    if _CONTROL.search(value):
        return PublicationRefusal(SOURCE_SUMMARY, f"source_model.{field} holds a control "
                                  "character")
    return None


def _label(entry: Mapping[str, Any], index: int) -> str:
    path = entry.get("path")
    return _shown(path) if isinstance(path, str) else f"entries[{index}]"


def _shown(value: object) -> str:
    text = value if isinstance(value, str) else repr(value)
    text = _CONTROL.sub("?", text)
    return repr(text[:80] + ("..." if len(text) > 80 else ""))


def _preview(items: list[str], limit: int = 5) -> str:
    shown = ", ".join(items[:limit])
    return shown if len(items) <= limit else f"{shown} and {len(items) - limit} more"
