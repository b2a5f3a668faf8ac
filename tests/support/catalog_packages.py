"""A catalog to certify in tests and benches: real (tiny) layer packages, published on the
in-repo Hub, and the entry files that list them.

Every package here is built by meshcert's packagegen from a generated llama-style source GGUF
(split_v1 / split_v2, as mesh-llm's writers lay packages out); the package-building helpers are
all in this module, so the writer behind them can be swapped in one place.

    pkgs = PackageShelf(tmp_path)
    root = pkgs.v2()                         # a good v2 package directory
    sha = hub.publish_dir("ns/pkg", root)
    write_entry(catalog_root, "owner/model", {"Q4": variant("ns/pkg", revision=sha)})
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from meshcert.certify.formats.package_id import compute_package_id
from meshcert.testing import llama_spec, write_source_gguf
from meshcert.testing.writer import write_manifest_and_card
from meshcert.writer.card import render_card
from tests.support.splits import split_v1, split_v2

MANIFEST = "model-package.json"
SOURCE_REPO = "meshcert/tiny-llama"
SOURCE_FILE = "tiny-llama-F16.gguf"  # llama_spec's source file name
MODEL_ID = "meshcert/tiny-llama-GGUF:F16"
WRITER_ABI = "0.1.54"  # what packagegen's writers record


class PackageShelf:
    """Builds packages under `base`, each in its own folder; one generated source for all."""

    def __init__(self, base: Path, layers: int = 4) -> None:
        self.base = base
        self.layers = layers
        self._source: Path | None = None
        self._count = 0

    @property
    def source(self) -> Path:
        if self._source is None:
            spec = llama_spec(block_count=self.layers)
            self._source = write_source_gguf(spec, self.base / "source" / spec.source_file)
        return self._source

    def _out(self, name: str) -> Path:
        self._count += 1
        return self.base / f"{self._count:02d}-{name}"

    def v1(self, name: str = "v1", *, source_revision: str = "main") -> Path:
        return split_v1(self.source, self._out(name), model_id=MODEL_ID, repo=SOURCE_REPO,
                        revision=source_revision).root

    def v2(self, name: str = "v2", *, part_budget: int | None = None,
           source_revision: str = "main") -> Path:
        return split_v2(self.source, self._out(name), model_id=MODEL_ID, repo=SOURCE_REPO,
                        revision=source_revision, part_budget=part_budget).root

    def v2_common_parts(self) -> Path:
        """A valid v2 package whose shared tensors are cut into shared/common-partNN.gguf
        (mesh-llm's certifier refuses that path)."""
        return self.v2("v2-common-parts", part_budget=96 * 1024)

    def v2_abi(self, abi: str) -> Path:
        """A v2 package recording another producer ABI (re-identified, as a writer would)."""
        root = self.v2(f"v2-abi-{abi}")
        edit_manifest(root, lambda m: m.update(native_abi_version=abi))
        return root

    def tampered_v1(self) -> Path:
        """A v1 package whose last layer file changed after the manifest was written (what a
        re-upload of one artifact gives): the Hub's LFS sha256 no longer matches."""
        root = self.v1("v1-tampered")
        layer = sorted((root / "layers").glob("*.gguf"))[-1]
        data = bytearray(layer.read_bytes())
        data[-1] ^= 0xFF
        layer.write_bytes(bytes(data))
        return root

    def without_manifest(self) -> Path:
        root = self.v2("v2-no-manifest")
        (root / MANIFEST).unlink()
        return root

    def real(self, source: Path, fmt: str, *, model_id: str, repo: str) -> Path:
        """A package of a real model (tests.support.real_models), v1 or v2."""
        split = split_v1 if fmt == "v1" else split_v2
        return split(source, self._out(f"{source.stem}-{fmt}"), model_id=model_id, repo=repo,
                     revision="main").root

    def cleanup(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)


def manifest_of(root: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / MANIFEST).read_text())
    return data


def edit_manifest(root: Path, edit: Callable[[dict[str, Any]], Any]) -> None:
    """Edit the manifest as a writer would have written it: re-identified (v2), with the
    model card rendered again from it."""
    manifest = manifest_of(root)
    edit(manifest)
    if manifest.get("schema_version") == 2:
        manifest["package_id"] = compute_package_id(manifest)
    write_manifest_and_card(root, manifest,
                            lambda m, sha: render_card(m, sha, width=None))


def artifact_count(root: Path) -> int:
    manifest = manifest_of(root)
    if manifest.get("schema_version") == 2:
        return len(manifest["artifact_catalog"]["entries"])
    return len(manifest["shared"]) + len(manifest["layers"]) + len(manifest.get("projectors")
                                                                   or [])


def total_bytes(root: Path) -> int:
    manifest = manifest_of(root)
    if manifest.get("schema_version") == 2:
        return sum(e["byte_size"] for e in manifest["artifact_catalog"]["entries"])
    items = [*manifest["shared"].values(), *manifest["layers"],
             *(manifest.get("projectors") or [])]
    return sum(e["artifact_bytes"] for e in items)


# --- entries ----------------------------------------------------------------------------------
def package_ref(repo: str, **fields: Any) -> dict[str, Any]:
    """A `layer-package` reference as the catalog records it (fields: revision, layer_count,
    total_bytes, source_revision)."""
    return {"type": "layer-package", "repo": repo, **fields}


def variant(*packages: dict[str, Any] | str, source_repo: str = SOURCE_REPO,
            file: str = SOURCE_FILE, **source: Any) -> dict[str, Any]:
    refs = [package_ref(p) if isinstance(p, str) else p for p in packages]
    return {"source": {"repo": source_repo, "file": file, **source},
            "curated": {"name": "Tiny Llama", "size": "1M", "description": "test model"},
            "packages": refs}


def entry(source_repo: str, variants: dict[str, Any] | list[Any]) -> dict[str, Any]:
    return {"schema_version": 1, "source_repo": source_repo, "variants": variants}


def write_entry(catalog: Path, source_repo: str, variants: dict[str, Any] | list[Any]) -> Path:
    """entries/<owner>/<repo>.json under `catalog`, as the catalog's job writes it."""
    path = catalog / "entries" / f"{source_repo}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(entry(source_repo, variants), indent=2) + "\n")
    return path


def write_raw_entry(catalog: Path, source_repo: str, text: str) -> Path:
    path = catalog / "entries" / f"{source_repo}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def catalog_files(catalog: Path) -> dict[str, bytes]:
    """Every file of a local catalog checkout (to commit it to a dataset repo)."""
    return {p.relative_to(catalog).as_posix(): p.read_bytes()
            for p in sorted(catalog.rglob("*")) if p.is_file()}


# --- the test catalog: a dozen packages, each making one point -------------------------------
RUNTIME_ABI = WRITER_ABI  # the runtime the test catalog is certified for
OTHER_ABI = "0.1.57"  # a producer ABI mesh-llm v0.76.2 refused (string compare)
SOURCE_COMMIT = "5" * 40


@dataclass
class CatalogFixture:
    root: Path  # the local checkout
    shas: dict[str, str]  # package repo -> published commit
    roots: dict[str, Path]  # package repo -> its folder (as built)


def build_test_catalog(hub: Any, base: Path) -> CatalogFixture:
    """Publish the packages on `hub` and write a catalog checkout listing them:

    - entries/meshcert/tiny-llama.json (variants keyed by name): ns/good-v1 (pinned),
      ns/good-v2 (unpinned), ns/common-parts, ns/abi-0.1.57, ns/tampered-v1, ns/no-manifest,
      ns/gated, ns/missing (never published), ns/wrong-layers (layer_count 5),
      ns/wrong-bytes (total_bytes + 1), ns/wrong-source-revision, and ns/dup listed in two
      variants; variant "other-source" names another source repo for ns/wrong-source;
    - entries/old/tiny-llama.json: the old list-shaped variants, with ns/old-v1;
    - entries/broken/model.json: not JSON.
    """
    shelf = PackageShelf(base / "packages")
    built: dict[str, Path] = {
        "ns/good-v1": shelf.v1("good-v1"),
        "ns/good-v2": shelf.v2("good-v2"),
        "ns/common-parts": shelf.v2_common_parts(),
        "ns/abi-0.1.57": shelf.v2_abi(OTHER_ABI),
        "ns/tampered-v1": shelf.tampered_v1(),
        "ns/no-manifest": shelf.without_manifest(),
        "ns/gated": shelf.v2("gated"),
        "ns/wrong-layers": shelf.v1("wrong-layers"),
        "ns/wrong-bytes": shelf.v2("wrong-bytes"),
        "ns/wrong-source-revision": shelf.v2("wrong-source-revision",
                                             source_revision=SOURCE_COMMIT),
        "ns/wrong-source": shelf.v2("wrong-source"),
        "ns/dup": shelf.v2("dup"),
        "ns/old-v1": shelf.v1("old-v1"),
    }
    shas = {repo: hub.publish_dir(repo, root) for repo, root in built.items()}
    hub.repos["ns/gated"].gated = "auto"
    catalog = base / "catalog"
    write_entry(catalog, SOURCE_REPO, {
        "F16": variant(
            package_ref("ns/good-v1", revision=shas["ns/good-v1"], layer_count=4,
                        total_bytes=total_bytes(built["ns/good-v1"]), source_revision="main"),
            "ns/good-v2",
            package_ref("ns/common-parts", revision=shas["ns/common-parts"]),
            package_ref("ns/abi-0.1.57", revision=shas["ns/abi-0.1.57"]),
            "ns/tampered-v1", "ns/no-manifest", "ns/gated", "ns/missing",
            package_ref("ns/wrong-layers", layer_count=5),
            package_ref("ns/wrong-bytes", total_bytes=total_bytes(built["ns/wrong-bytes"]) + 1),
            package_ref("ns/wrong-source-revision", source_revision="6" * 40),
            "ns/dup"),
        "F16-copy": variant("ns/dup"),
        "other-source": variant("ns/wrong-source", source_repo="someone/other-model"),
    })
    write_raw_entry(catalog, "old/tiny-llama", json.dumps(entry("old/tiny-llama", [
        {"source": {"repo": SOURCE_REPO, "file": SOURCE_FILE},
         "curated": {"name": "Tiny Llama (old entry)"},
         "packages": [package_ref("ns/old-v1")]}]), indent=4) + "\n")
    write_raw_entry(catalog, "broken/model", '{"schema_version": 1, "variants": {')
    return CatalogFixture(catalog, shas, built)
