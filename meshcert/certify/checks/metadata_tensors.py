"""v1: the copies of each metadata-role tensor agree (type, shape and data bytes).

The real v1 writer copies every tensor that is neither a layer's, the embeddings', the output
head's nor the final norm's (rope_freqs.weight, ...) into every fragment, shared/metadata.gguf
included, and a node composes a stage from whichever copies its parts hold, so every copy must
be byte-identical. Each copy is compared with the first one in manifest order (metadata.gguf's
when it has one); the data digests come from the source (`view.tensor_digests`). A copy whose
bytes were not hashed is reported as not compared (`check_not_run`), never as agreeing.
Projectors are not model fragments and are left out.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from meshcert.certify.checks import MANIFEST_READ, register
from meshcert.certify.package_gguf.fragments import Fragment, capped, fragments, preview
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding, finding
from meshcert.core.gguf.constants import GGML_TYPE_NAMES
from meshcert.core.gguf.model import TensorInfo
from meshcert.core.gguf.names import is_metadata_role

NOT_HASHED = "the source did not hash this fragment's tensor bytes"


@dataclass(frozen=True)
class _Copy:
    frag: Fragment
    tensor: TensorInfo
    sha256: str | None
    unread: str | None  # why sha256 is None


@register("metadata_tensor_copies", order=325,
          codes=["metadata_tensor_copies_differ", "check_not_run"], formats=["v1"],
          runs_when=[MANIFEST_READ])
def check_metadata_tensor_copies(view: PackageView) -> Iterator[Finding]:
    if view.manifest is None:
        return  # files inspected on their own are no package: nothing was copied around
    differ: list[Finding] = []
    for name, copies in _copies(view).items():
        if len(copies) < 2:
            continue
        first = copies[0]
        data_ref = next((c for c in copies if c.sha256 is not None), None)
        ref_sha = data_ref.sha256 if data_ref is not None else None
        for copy in copies[1:]:
            reference, problem = first, _layout_difference(first.tensor, copy.tensor)
            if (problem is None and data_ref is not None and ref_sha is not None
                    and copy.sha256 is not None and copy.sha256 != ref_sha):
                reference = data_ref
                problem = (f"its {copy.tensor.n_bytes} data bytes differ (sha256 "
                           f"{ref_sha[:12]}... there, {copy.sha256[:12]}... here)")
            if problem is not None:
                differ.append(finding(
                    "metadata_tensor_copies_differ", f"{name} in {copy.frag.path} differs from "
                    f"its copy in {reference.frag.path}: {problem}", path=copy.frag.path,
                    layer_index=copy.frag.layer_index))
        unread = [c for c in copies if c.sha256 is None]
        if unread:
            yield _not_compared(name, copies, unread)
    yield from capped(differ, limit=50)


def _copies(view: PackageView) -> dict[str, list[_Copy]]:
    out: dict[str, list[_Copy]] = defaultdict(list)
    for frag in fragments(view):  # manifest order: metadata.gguf first; projectors left out
        digests = view.tensor_digests.get(frag.path)
        for t in frag.header.tensors:
            if not is_metadata_role(t.name) or any(c.frag is frag for c in out[t.name]):
                continue
            sha = digests.sha256.get(t.name) if digests is not None else None
            why = (digests.unread.get(t.name, NOT_HASHED) if digests is not None
                   else NOT_HASHED) if sha is None else None
            out[t.name].append(_Copy(frag, t, sha, why))
    return out


def _layout_difference(first: TensorInfo, other: TensorInfo) -> str | None:
    if first.ggml_type != other.ggml_type:
        return f"type {_type(first.ggml_type)} there, {_type(other.ggml_type)} here"
    if tuple(first.shape) != tuple(other.shape):
        return f"shape {list(first.shape)} there, {list(other.shape)} here"
    return None


def _not_compared(name: str, copies: list[_Copy], unread: list[_Copy]) -> Finding:
    reasons = sorted({c.unread or NOT_HASHED for c in unread})
    paths = [c.frag.path for c in unread]
    return finding("check_not_run", f"the data of {len(unread)} of the {len(copies)} copies of "
                   f"{name} was not compared ({preview(paths, 3)}): {'; '.join(reasons)}",
                   path=paths[0])


def _type(ggml_type: int) -> str:
    return GGML_TYPE_NAMES.get(ggml_type, f"type {ggml_type}")
