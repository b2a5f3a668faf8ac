"""`package publish DIR`: mesh-llm's HF publication gate (mesh-llm-0.79.md §6.1) on the local
manifest, before anything is hashed, certified or uploaded. The rules are the certifier's
(`meshcert.certify.formats.hf_publication`); a manifest that cannot be read or parsed is left to
the certification that follows (it reports it)."""

from __future__ import annotations

import json
import os

from meshcert.certify.formats.hf_publication import MAX_MANIFEST_BYTES, publication_refusals

MANIFEST = "model-package.json"


def publication_refusal(package_dir: str) -> str | None:
    """Why mesh-llm's HF job would refuse the v2 package in `package_dir`, or None."""
    path = os.path.join(package_dir, MANIFEST)
    try:
        size = os.path.getsize(path)
        if size > MAX_MANIFEST_BYTES:
            manifest: object = None  # the byte bound alone refuses it; not parsed
        else:
            with open(path, "rb") as handle:
                manifest = json.loads(handle.read())
    except (OSError, ValueError, RecursionError):
        return None
    if manifest is not None and not (isinstance(manifest, dict)
                                     and manifest.get("schema_version") == 2):
        return None  # v1 (or not a manifest): the job publishes v2 packages only
    refusals = publication_refusals(manifest if isinstance(manifest, dict) else None,
                                    manifest_bytes=size)
    if manifest is None:
        refusals = [r for r in refusals if r.detail.startswith(MANIFEST)]
    if not refusals:
        return None
    return ("mesh-llm's HF publication job would refuse this package, so nothing is uploaded: "
            + "; ".join(r.message for r in refusals))
