"""README.md, the model card (package.md, "README.md (model card)"), from the manifest (pure).

It names the source model coordinate and revision, the source artifact's file name and
checksum, the manifest's checksum, every projector's file name and checksum, the layer count
and activation width, the ABI version, the generation defaults, the validation command and its
result, and the certification notes. The result is written as certification gave it
(`with_result` rewrites that one line once certification has run).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

RESULT_LINE = re.compile(r"^(- Result: )\S+", re.MULTILINE)


def render_card(manifest: dict[str, Any], manifest_sha256: str, *, width: int | None,
                result: str = "passed", source_ref: str | None = None) -> str:
    src = manifest["source_model"]
    v2 = manifest.get("schema_version") == 2
    abi = manifest.get("native_abi_version" if v2 else "skippy_abi_version")
    coordinate = src.get("repo") or manifest["model_id"]
    lines = [
        f"# {manifest['model_id']} (mesh-llm layer package)", "",
        f"- Model id: {manifest['model_id']}",
        f"- Source model: {coordinate} at revision {src.get('revision') or 'not recorded'}",
        f"- Source artifact: {PurePosixPath(str(src.get('primary_file'))).name} "
        f"(sha256 {src['sha256']})",
    ]
    for f in src.get("files") or []:
        if f.get("path") != src.get("primary_file"):
            lines.append(f"- Source shard: {PurePosixPath(str(f['path'])).name} "
                         f"(sha256 {f['sha256']})")
    lines.append(f"- Manifest: model-package.json (sha256 {manifest_sha256})")
    if v2:
        lines.append(f"- Package id: {manifest['package_id']}")
    lines += [f"- Layer count: {manifest['layer_count']}",
              f"- Activation width: {width if width is not None else 'unknown'}",
              f"- Skippy ABI version: {abi}"]
    for path, sha in _projectors(manifest):
        lines.append(f"- Projector: {path} (sha256 {sha})")
    spec = (manifest.get("generation") or {}).get("speculative_decoding")
    if spec:
        lines.append(f"- Generation defaults: speculative strategy {spec['default']} "
                     "(native MTP, prediction depth 1)")
    else:
        lines.append("- Generation defaults: none declared")
    command = "meshcert models certify <package> --package-only"
    if source_ref:
        command += f" --source {source_ref}"
    lines += ["", "## Validation", "",
              f"Certified when written, by `meshcert package write` (`{command}`):",
              f"- Result: {result}", "",
              "## Certification notes", "",
              "Written by meshcert's streaming splitter from the source GGUF: every tensor's "
              "bytes were hashed on their way from the source and match it; each artifact's "
              "directory was re-read and compared with the plan. Model-family certification "
              "(runtime quality) is not claimed here.", ""]
    return "\n".join(lines)


def with_result(card: str, result: str) -> str:
    return RESULT_LINE.sub(lambda m: m.group(1) + result, card, count=1)


def _projectors(manifest: dict[str, Any]) -> list[tuple[str, str]]:
    if manifest.get("schema_version") == 2:
        ids = {s["artifact_id"] for s in manifest.get("sidecars") or []}
        return [(e["path"], e["sha256"]) for e in manifest["artifact_catalog"]["entries"]
                if e["id"] in ids]
    return [(p["path"], p["sha256"]) for p in manifest.get("projectors") or []]
