"""The q2_K routed-down recipe rule on a package: NextN/MTP layers keep their original
routed down-projection type (GLM-5.2: `blk.78`), until quality and speculation tests say
otherwise.

Evidence from the GGUF headers only (no tensor data): NextN layers are the layers holding
`blk.N.nextn.*` tensors (or, failing that, the last `<arch>.nextn_predict_layers` blocks); the
routed down projection is `blk.N.ffn_down_exps.weight`. The recipe counts as applied when a
non-NextN layer's routed down is q2_K. "Original type": the same tensor's type in the source
GGUF when one is given; without a source, the rule can only say the NextN down is not the recipe
type (q2_K), and says so.

`check_nextn_down` is pure (a PackageView in, a PackageCheck out); `load_package` does the I/O
through the certification package sources, so local directories and hf:// refs are read the
same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from gguf import GGMLQuantizationType

from meshcert.certify.view import PackageView
from meshcert.core.gguf.model import GGUFHeader, HeaderProblem
from meshcert.core.gguf.names import NEXTN_PREDICT_LAYERS_KEY, is_nextn, layer_component, layer_of
from meshcert.evidence.errors import EvidenceError
from meshcert.evidence.report import PackageCheck, PackageLayerCheck

RULE = "q2_K routed down: NextN/MTP layers keep their original routed down-projection type"
RECIPE_TYPE = int(GGMLQuantizationType.Q2_K)
DOWN_COMPONENT = "ffn_down_exps"


class PackageLoadError(EvidenceError):
    """The package ref could not be turned into a view."""


def ggml_type_name(ggml_type: int) -> str:
    """`q2_K`, `q3_K`, `f16` ... as ggml prints them."""
    try:
        name = GGMLQuantizationType(ggml_type).name
    except ValueError:
        return f"type {ggml_type}"
    return name.lower().replace("_k", "_K")


def _tensors(headers: Mapping[str, GGUFHeader]) -> dict[str, tuple[str, int]]:
    out: dict[str, tuple[str, int]] = {}
    for path, header in sorted(headers.items()):
        for t in header.tensors:
            out.setdefault(t.name, (path, t.ggml_type))
    return out


def _nextn_layers(headers: Mapping[str, GGUFHeader], names: list[str]) -> list[int]:
    layers = {layer for n in names if is_nextn(n) and (layer := layer_of(n)) is not None}
    if layers:
        return sorted(layers)
    for header in headers.values():
        arch = header.architecture
        count = header.kv.get(f"{arch}.{NEXTN_PREDICT_LAYERS_KEY}") if arch else None
        blocks = header.kv.get(f"{arch}.block_count") if arch else None
        if isinstance(count, int) and isinstance(blocks, int) and count > 0:
            return list(range(blocks - count, blocks))
    return []


def check_nextn_down(view: PackageView, package: str,
                     source: GGUFHeader | HeaderProblem | None = None) -> PackageCheck:
    headers = {p: h for p, h in view.headers.items() if isinstance(h, GGUFHeader)}
    messages = [f"{p}: {h.message}" for p, h in sorted(view.headers.items())
                if isinstance(h, HeaderProblem)]
    messages += [f.message for f in view.source_findings]
    if not headers:
        return PackageCheck(rule=RULE, package=package, status="unknown",
                            messages=messages + ["no GGUF header could be read"])
    tensors = _tensors(headers)
    nextn = _nextn_layers(headers, list(tensors))
    downs = {layer: (name, *where) for name, where in tensors.items()
             if layer_component(name) == DOWN_COMPONENT and (layer := layer_of(name)) is not None}
    applied = any(t == RECIPE_TYPE for layer, (_, _, t) in downs.items() if layer not in nextn)
    if not nextn:
        return PackageCheck(rule=RULE, package=package, status="not-applicable",
                            recipe_applied=applied, messages=messages + [
                                "no NextN/MTP layer (blk.N.nextn.*) in the package"])
    original: dict[str, int] = {}
    if isinstance(source, GGUFHeader):
        original = {t.name: t.ggml_type for t in source.tensors}
    elif isinstance(source, HeaderProblem):
        messages.append(f"source GGUF: {source.message}")
    checks = [_layer_check(layer, downs.get(layer), original) for layer in nextn]
    status: Literal["passed", "failed", "not-applicable", "unknown"]
    if any(c.status == "failed" for c in checks):
        status = "failed"
    elif not applied:
        status = "not-applicable"
        messages.append("no routed down outside the NextN layers is q2_K: the recipe is not "
                        "applied")
    elif any(c.status == "unknown" for c in checks):
        status = "unknown"
    else:
        status = "passed"
    messages += [c.message for c in checks if c.status == "failed"]
    return PackageCheck(rule=RULE, package=package, status=status,
                        recipe_applied=applied, nextn_layers=nextn, layers=checks,
                        messages=messages)


def _layer_check(layer: int, down: tuple[str, str, int] | None,
                 original: Mapping[str, int]) -> PackageLayerCheck:
    if down is None:
        return PackageLayerCheck(layer=layer, tensor=f"blk.{layer}.{DOWN_COMPONENT}.weight",
                                 artifact="", ggml_type="absent", status="unknown",
                                 message="the NextN layer has no routed down projection")
    name, artifact, ggml_type = down
    have = ggml_type_name(ggml_type)
    base: dict[str, Any] = {"layer": layer, "tensor": name, "artifact": artifact, "ggml_type": have}
    if name in original:
        want = ggml_type_name(original[name])
        ok = original[name] == ggml_type
        return PackageLayerCheck(
            **base, original_type=want, status="passed" if ok else "failed",
            message=f"{name} is {have}, the source has {want}" + ("" if ok else
                                                                  ": must keep the source type"))
    ok = ggml_type != RECIPE_TYPE
    return PackageLayerCheck(
        **base, status="passed" if ok else "failed",
        message=(f"{name} is {have} (no source GGUF: original type unknown; it is not the "
                 "recipe type q2_K)") if ok else
        f"{name} is q2_K: the NextN/MTP layer must keep its original down-projection type")


def load_package(ref_text: str) -> PackageView:
    """Manifest + GGUF headers of a local package dir or hf:// ref (no hashing)."""
    from meshcert.certify.service import CertRequest, load_view
    from meshcert.certify.view import CertOptions
    from meshcert.core.progress import NullProgress
    from meshcert.core.refs import RefError, parse_ref

    try:
        ref = parse_ref(ref_text)
    except RefError as err:
        raise PackageLoadError(str(err)) from None
    request = CertRequest(model=ref_text, options=CertOptions(verify_sha256=False))
    return load_view(request, ref, NullProgress())


def read_source_header(path: str) -> GGUFHeader | HeaderProblem:
    from meshcert.core.gguf.reader import read_header_file

    return read_header_file(path)
