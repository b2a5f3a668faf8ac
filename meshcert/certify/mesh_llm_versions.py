"""The oldest mesh-llm release that can load a manifest (mesh-llm-0.79.md §4).

Each manifest feature that an older runtime refuses at parse time raises the minimum:

- base v2 (schema_version 2, as package-v2.md describes it): 0.76.0. The spec's table marks
  every v0.76.x release as loading base v2 and documents nothing older, so meshcert claims no
  older release (v1 packages predate the table: no minimum is named for them).
- `publisher_metadata` / `publisher_defaults`: 0.77.0. v0.76.x parse them as unknown root
  fields (`deny_unknown_fields`), a parse error; v0.77.0's release notes list #1838 ("Wire
  next-generation KV cache and publisher defaults").
- `generation.request_defaults`: 0.78.1. v0.76.x refuse it (`Generation` denies unknown
  fields); for v0.77.0 it is unverified, and the source of that time (@f5b8ef0a, publisher
  fields without request_defaults) suggests it is absent; the first release documented to
  carry the types is the format crate 0.78.1 (docs.rs, 2026-10-05). So the table's first
  "yes" is taken, not a guess at 0.77.x or 0.78.0.

Pure: manifest dict in, versions out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

BASE_V2 = "0.76.0"
PUBLISHER_FIELDS = "0.77.0"
REQUEST_DEFAULTS = "0.78.1"

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?$")


@dataclass(frozen=True)
class VersionNeed:
    version: str
    reason: str


def parse_version(text: str) -> tuple[int, int, int] | None:
    """`0.77.0`, `v0.77`, `0.78.1` -> a comparable tuple; None when it is not one."""
    match = _VERSION.match(text.strip())
    if match is None:
        return None
    major, minor, patch = match.groups()
    return int(major), int(minor), int(patch or 0)


def _key(version: str) -> tuple[int, int, int]:
    parsed = parse_version(version)
    assert parsed is not None, version
    return parsed


def version_needs(manifest: dict[str, Any] | None) -> list[VersionNeed]:
    """Every feature of a v2 manifest that sets a minimum release, base first."""
    if not isinstance(manifest, dict) or manifest.get("schema_version") != 2:
        return []
    needs = [VersionNeed(BASE_V2, "package v2")]
    # a key present at all (even [] or null) is an unknown field to an older runtime
    present = [key for key in ("publisher_metadata", "publisher_defaults") if key in manifest]
    if present:
        needs.append(VersionNeed(PUBLISHER_FIELDS, " and ".join(present)))
    generation = manifest.get("generation")
    if isinstance(generation, dict) and "request_defaults" in generation:
        needs.append(VersionNeed(REQUEST_DEFAULTS, "generation.request_defaults"))
    return needs


def minimum_mesh_llm(manifest: dict[str, Any] | None) -> VersionNeed | None:
    """The newest of the needs: the oldest release that loads every feature (None: v1 or an
    unreadable manifest)."""
    needs = version_needs(manifest)
    return max(needs, key=lambda n: _key(n.version)) if needs else None


def is_older(version: str, than: str) -> bool:
    """Whether release `version` is older than `than` (both parseable)."""
    return _key(version) < _key(than)
