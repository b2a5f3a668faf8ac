"""The model card (package.md "README.md"): it must exist and mention each listed item. Items
are found by their values (digests, ids, numbers near their words), whatever the layout."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import pytest

from meshcert.certify.report import CertReport
from meshcert.testing import PackageInfo
from meshcert.testing.writer import render_readme
from tests.conftest import PackageFactory, certify_dir, codes

README_CODES = {"readme_missing", "readme_missing_field"}
Rewrite = Callable[[str, PackageInfo], str]


def readme_findings(report: CertReport) -> list[str]:
    """The messages of the README findings."""
    return [f.message for f in report.findings if f.code in README_CODES]


def rewrite_readme(info: PackageInfo, rewrite: Rewrite) -> None:
    path = info.root / "README.md"
    path.write_text(rewrite(path.read_text(encoding="utf-8"), info), encoding="utf-8")


def rerender_readme(info: PackageInfo) -> None:
    """Write the card packagegen would write for the manifest as it is on disk now."""
    raw = (info.root / "model-package.json").read_bytes()
    (info.root / "README.md").write_text(
        render_readme(info.manifest, hashlib.sha256(raw).hexdigest()), encoding="utf-8")


def replace(old: str, new: str = "") -> Rewrite:
    def rewrite(text: str, info: PackageInfo) -> str:
        assert old in text, old
        return text.replace(old, new)
    return rewrite


def drop_line(containing: str) -> Rewrite:
    def rewrite(text: str, info: PackageInfo) -> str:
        lines = text.splitlines()
        kept = [line for line in lines if containing not in line]
        assert len(kept) < len(lines), containing
        return "\n".join(kept)
    return rewrite


def drop_value(key: str) -> Rewrite:
    """Remove a source_model value (e.g. its sha256) from the text, wherever it appears."""
    def rewrite(text: str, info: PackageInfo) -> str:
        value = info.manifest["source_model"][key]
        assert value in text, key
        return text.replace(value, "(see the manifest)")
    return rewrite


@pytest.mark.parametrize("kind", ["llama", "glm"])
def test_the_generated_model_card_mentions_everything(packages: PackageFactory,
                                                       kind: str) -> None:
    assert not readme_findings(certify_dir(packages.build(kind).root))


def test_no_readme_is_a_warning(packages: PackageFactory) -> None:
    report = certify_dir(packages.build("llama", readme=False).root)
    [found] = [f for f in report.findings if f.code in README_CODES]
    assert (found.code, found.severity, found.path) == ("readme_missing", "warning", "README.md")


def test_an_unreadable_package_is_not_blamed_for_its_readme(packages: PackageFactory) -> None:
    info = packages.build("llama", readme=False)
    packages.write_manifest_text(info, "{not json")
    assert not codes(certify_dir(info.root)) & README_CODES


@pytest.mark.parametrize(("rewrite", "item"), [
    (lambda text, info: text.replace(info.manifest["model_id"], "a tiny model")
     .replace(info.manifest["source_model"]["repo"], "its source"), "source model coordinate"),
    (replace("at revision main", "at the published revision"), "source model revision"),
    (drop_value("path"), "source artifact filename"),
    (drop_value("sha256"), "source artifact checksum"),
    (drop_line("- Manifest:"), "manifest checksum"),
    (replace("- Layer count: 4", "- Layer count: four"), "layer count"),
    (drop_line("Activation width"), "activation width"),
    (replace("Skippy ABI version: 0.1.0", "Skippy ABI version: 10.1.0"), "skippy ABI version"),
    (replace("`meshcert models certify", "`meshcert check"), "validation command"),
    (replace("--report-out cert.json`: passed", "--report-out cert.json`"),
     "validation result"),
    (lambda text, info: text.replace("## Certification notes", "## Notes")
     .replace("Model-family certification:", "Fixture:"), "certification notes"),
], ids=["coordinate", "revision", "source file", "source sha256", "manifest sha256",
        "layer count", "activation width", "abi", "command", "result", "notes"])
def test_each_missing_item_is_named(packages: PackageFactory, rewrite: Rewrite,
                                    item: str) -> None:
    info = packages.build("llama")
    rewrite_readme(info, rewrite)
    [message] = readme_findings(certify_dir(info.root))
    assert item in message


@pytest.mark.parametrize(("rewrite", "item"), [
    (replace("speculative strategy mtp (native MTP, prediction depth 1)",
             "speculative decoding (prediction depth 1)"), "default speculative strategy id"),
    (replace("prediction depth 1", "prediction depth one"), "prediction depth (1)"),
], ids=["strategy id", "prediction depth"])
def test_generation_defaults_are_required_when_declared(packages: PackageFactory,
                                                        rewrite: Rewrite, item: str) -> None:
    info = packages.build("glm")
    rewrite_readme(info, rewrite)
    [message] = readme_findings(certify_dir(info.root))
    assert item in message


def test_projectors_are_named_with_their_checksums(packages: PackageFactory) -> None:
    info = packages.build("llama")
    projector = {"kind": "mmproj", "path": "projectors/mmproj-tiny.gguf", "tensor_count": 1,
                 "tensor_bytes": 4, "artifact_bytes": 64, "sha256": "ab" * 32}
    # the writer omits an empty projectors list (package-v2.md): one is added here
    packages.edit_manifest(info, lambda m: m.setdefault("projectors", []).append(projector))
    rerender_readme(info)
    assert not readme_findings(certify_dir(info.root))
    rewrite_readme(info, drop_line("- Projector:"))
    messages = readme_findings(certify_dir(info.root))
    assert len(messages) == 2
    assert "projector filename" in messages[0] and "projector checksum" in messages[1]


def test_a_card_in_any_layout_passes_when_the_values_are_there(
        packages: PackageFactory) -> None:
    """A table, upper-case hex and other words: values count, labels do not."""
    info = packages.build("glm")
    m = info.manifest
    manifest_sha = hashlib.sha256((info.root / "model-package.json").read_bytes()).hexdigest()
    card = f"""# GLM-DSA tiny

Built from `{m['source_model']['repo']}` (commit `{m['source_model']['revision']}`), file
`{m['source_model']['path']}`, digest {m['source_model']['sha256'].upper()}.

| Blocks | Hidden size | Skippy ABI |
|---|---|---|
| {m['layer_count']} | {m['activation_width']} | v{m['skippy_abi_version']} |

model-package.json digest: {manifest_sha.upper()}

Speculation: `mtp` by default, MTP depth = 1.

    $ mesh-llm models certify ./pkg --package-only
    status: passed

### Certification
GLM-DSA family notes go here.
"""
    (info.root / "README.md").write_text(card, encoding="utf-8")
    assert not readme_findings(certify_dir(info.root))


def test_every_missing_item_is_its_own_finding(packages: PackageFactory) -> None:
    info = packages.build("glm")
    (info.root / "README.md").write_text("# A model\n", encoding="utf-8")
    messages = readme_findings(certify_dir(info.root))
    assert len(messages) == 13
    assert all(message.startswith("README.md does not mention the ") for message in messages)


# --- facts the card states otherwise than the manifest ------------------------------------------

CONTRADICTS = "readme_contradicts_manifest"


def contradiction_messages(report: CertReport) -> list[str]:
    return [f.message for f in report.findings if f.code == CONTRADICTS]


@pytest.mark.parametrize(("rewrite", "said"), [
    (replace("- Layer count: 4", "- Layer count: 5"), "says layer count '5'; model-package.json "
     "says '4'"),
    (lambda text, info: text.replace("- Layer count: 4", f"- Layer count: 4\n- Model id: "
                                     f"{info.manifest['model_id']}-other"),
     "says model id"),
    (replace("- Generation defaults: speculative strategy mtp (native MTP, prediction depth 1)",
             "- Generation defaults: speculative strategy mtp (native MTP, prediction depth 1)"
             "\n- Generation defaults: none declared"), "says generation defaults 'none "
     "declared'"),
], ids=["layer count", "model id", "defaults"])
def test_a_card_that_contradicts_the_manifest_is_flagged(packages: PackageFactory,
                                                         rewrite: Rewrite, said: str) -> None:
    info = packages.build("glm")
    rewrite_readme(info, rewrite)
    report = certify_dir(info.root)
    [message] = contradiction_messages(report)
    assert said in message
    [found] = [f for f in report.findings if f.code == CONTRADICTS]
    assert (found.severity, found.path) == ("warning", "README.md")


def test_a_card_that_states_its_facts_rightly_is_not_flagged(packages: PackageFactory) -> None:
    info = packages.build("glm")
    rewrite_readme(info, lambda text, i: text + f"\n| **Model id** | `{i.manifest['model_id']}` |"
                   f"\n| **Layer count** | {i.manifest['layer_count']} |\n")
    assert contradiction_messages(certify_dir(info.root)) == []


def test_a_card_that_is_not_utf8_gets_one_clear_finding(packages: PackageFactory) -> None:
    info = packages.build("llama")
    card = (info.root / "README.md").read_bytes()
    (info.root / "README.md").write_bytes(card.replace(b"Layer count", b"Layer \xff count"))
    report = certify_dir(info.root)
    found = [f for f in report.findings if f.code.startswith("readme")]
    assert [(f.code, f.severity) for f in found] == [("readme_not_utf8", "warning")]
    assert "byte 0xff at offset" in found[0].message
    assert report.status == "passed"  # a warning: the card is not what nodes load


def test_a_card_in_latin1_is_not_utf8(packages: PackageFactory) -> None:
    info = packages.build("llama")
    text = (info.root / "README.md").read_text(encoding="utf-8") + "\nMod\u00e8le fran\u00e7ais\n"
    (info.root / "README.md").write_bytes(text.encode("latin-1"))
    assert {f.code for f in certify_dir(info.root).findings if f.code.startswith("readme")} \
        == {"readme_not_utf8"}
