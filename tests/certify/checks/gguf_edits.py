"""Rewrite real GGUF files with edited metadata, with the real writer (gguf.GGUFWriter).

`rewrite_gguf` reads a file with gguf.GGUFReader, lets a test edit its metadata (typed values
via `Typed`, e.g. scores as a u8 array) and writes it back with the same tensors and bytes;
`edit_package` does that to files of a generated package and refreshes the manifest's sizes and
digests so only the intended problem remains; `single_file_view` is the view an audit of one
GGUF (or a split set) without a manifest works on.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from gguf import GGMLQuantizationType, GGUFReader, GGUFValueType, GGUFWriter

from meshcert.certify.checks import all_checks
from meshcert.certify.engine import run_checks
from meshcert.certify.manifest_parse import ParsedManifest
from meshcert.certify.report_ref import RefInfo
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding
from meshcert.core.gguf.model import GGUFHeader, HeaderProblem
from meshcert.core.gguf.reader import read_header_file
from meshcert.testing import PackageInfo
from meshcert.testing.writer import add_kv, render_readme, sha256_of

V = GGUFValueType
KV = dict[str, Any]
LOAD_SAFETY_CHECKS = ("chat_templates", "tokenizer", "tokenizer_copies")


@dataclass(frozen=True)
class Typed:
    """A metadata value with an explicit GGUF type (arrays: sub_type is the element type)."""

    value: Any
    vtype: GGUFValueType
    sub_type: GGUFValueType | None = None


def read_gguf(path: Path) -> tuple[str, KV, list[tuple[str, np.ndarray, GGMLQuantizationType]]]:
    """(architecture, metadata as `Typed` values, tensors) of a real GGUF file."""
    reader = GGUFReader(path)
    arch = ""
    kv: KV = {}
    for name, fld in reader.fields.items():
        if name.startswith("GGUF."):
            continue
        if name == "general.architecture":
            arch = str(fld.contents())
            continue
        vtype = fld.types[0]
        kv[name] = Typed(fld.contents(), vtype, fld.types[-1] if vtype == V.ARRAY else None)
    tensors = [(t.name, np.array(t.data), GGMLQuantizationType(t.tensor_type))
               for t in reader.tensors]
    return arch, kv, tensors


def write_gguf(path: Path, arch: str, kv: KV,
               tensors: Iterable[tuple[str, np.ndarray, GGMLQuantizationType]] = ()) -> Path:
    writer = GGUFWriter(str(path), arch)
    for key, value in kv.items():
        if isinstance(value, Typed):
            writer.add_key_value(key, value.value, value.vtype, value.sub_type)
        else:
            add_kv(writer, key, value)
    for name, data, ggml_type in tensors:
        plain = ggml_type in (GGMLQuantizationType.F32, GGMLQuantizationType.F16)
        writer.add_tensor(name, data, raw_dtype=None if plain else ggml_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


Tensors = list[tuple[str, np.ndarray, GGMLQuantizationType]]


def rewrite_gguf(path: Path, edit: Callable[[KV], None],
                 edit_tensors: Callable[[Tensors], Tensors] | None = None) -> None:
    """Rewrite `path` after `edit` changed its metadata (and `edit_tensors` its tensor list;
    without it the tensors and their bytes stay)."""
    arch, kv, tensors = read_gguf(path)
    edit(kv)
    write_gguf(path, arch, kv, edit_tensors(tensors) if edit_tensors else tensors)


def edit_package(info: PackageInfo, edit: Callable[[KV], None],
                 paths: Iterable[str] = ("shared/metadata.gguf",)) -> None:
    """Apply `edit` to the named package files, then refresh their manifest size and SHA-256
    (and the README, which quotes the manifest's digest)."""
    changed = set(paths)
    for rel in changed:
        rewrite_gguf(info.root / rel, edit)
    manifest_path = info.root / "model-package.json"
    manifest = json.loads(manifest_path.read_text())
    entries = [*manifest["shared"].values(), *manifest["layers"]]
    for entry in entries:
        if entry["path"] in changed:
            file = info.root / entry["path"]
            entry["sha256"] = sha256_of(file)
            entry["artifact_bytes"] = file.stat().st_size
    raw = (json.dumps(manifest, indent=2) + "\n").encode()
    manifest_path.write_bytes(raw)
    (info.root / "README.md").write_text(render_readme(manifest, hashlib.sha256(raw).hexdigest()),
                                         encoding="utf-8")
    info.manifest = manifest


def fragment_paths(info: PackageInfo) -> list[str]:
    """Every GGUF file of the package (metadata, embeddings, output, layers)."""
    return sorted(str(p.relative_to(info.root)) for p in info.root.rglob("*.gguf"))


def single_file_view(*paths: Path) -> PackageView:
    """What auditing one GGUF (or a split set) without a manifest looks like to the checks."""
    headers: dict[str, GGUFHeader | HeaderProblem] = {p.name: read_header_file(p) for p in paths}
    return PackageView(ref=RefInfo(kind="local", pinned=True), display_ref=str(paths[0]),
                       local_dir=None, manifest_raw=None, parsed=ParsedManifest(None),
                       headers=headers)


def load_safety_findings(view: PackageView) -> list[Finding]:
    """Run the chat-template, tokenizer and tokenizer-copies checks (crashes become findings)."""
    checks = [c for c in all_checks() if c.name in LOAD_SAFETY_CHECKS]
    assert len(checks) == len(LOAD_SAFETY_CHECKS)
    return run_checks(view, checks)[0]
