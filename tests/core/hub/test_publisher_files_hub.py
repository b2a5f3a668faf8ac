"""Publisher files over hf:// (the in-repo Hub, the real huggingface_hub client): each is
downloaded whole (bounded), so the same findings come back as from the local folder; one the
listing says is over 16 MiB is never downloaded."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from tests.certify.chat_template.corpus import HOSTILE
from tests.certify.publisher_packages import TINY_CONFIG, build_published, json_bytes
from tests.support.hub_packages import certify_ref, finding_keys
from tests.support.hub_server import FakeHub

REPO = "meshcert/tiny-llama-publisher"


def test_publisher_findings_over_the_hub_match_the_local_folder(hub: FakeHub,
                                                                tmp_path: Path) -> None:
    files = {"config.json": json_bytes(TINY_CONFIG | {"num_attention_heads": 32}),
             "tokenizer_config.json": json_bytes({"chat_template": HOSTILE["include"][0]}),
             "generation_config.json": b"[1, 2]"}
    pkg = build_published(tmp_path, files)
    sha = hub.publish_dir(REPO, pkg.root)
    local = certify_ref(str(pkg.root), verify_sha256=True)
    remote = certify_ref(f"hf://{REPO}@{sha}")
    codes = {f.code: f.path for f in remote.findings}
    assert codes["publisher_config_geometry_mismatch"] == "metadata/config.json"
    assert codes["chat_template_code_execution"] == "metadata/tokenizer_config.json"
    assert codes["publisher_file_not_object"] == "metadata/generation_config.json"
    # the in-repo Hub stores only .gguf files as LFS: hub_artifact_not_lfs is the Hub's own
    def same(keys: Sequence[tuple[object, ...]]) -> list[tuple[object, ...]]:
        return [k for k in keys if k[0] != "hub_artifact_not_lfs"]

    assert same(finding_keys(remote)) == same(finding_keys(local))


def test_a_huge_publisher_file_is_not_downloaded(hub: FakeHub, tmp_path: Path) -> None:
    data = b"{\"pad\": \"" + b"x" * (16 * 1024 * 1024) + b"\"}"
    pkg = build_published(tmp_path, {"tokenizer_config.json": data}, defaults={})
    sha = hub.publish_dir(REPO, pkg.root)
    hub.reset_counters()
    remote = certify_ref(f"hf://{REPO}@{sha}")
    hits = [f for f in remote.findings if f.code == "publisher_file_too_large"]
    assert [f.path for f in hits] == ["metadata/tokenizer_config.json"]
    assert remote.transfer is not None
    assert remote.transfer.bytes_transferred < 1024 * 1024


def test_publisher_files_are_hashed_first_hand_over_the_hub(hub: FakeHub, tmp_path: Path) -> None:
    """The Hub keeps small JSON as plain git (no LFS sha256): meshcert reads each publisher file
    whole, so it hashes the bytes itself. A clean package raises no hub_artifact_not_lfs for
    them; a publisher file changed on the Hub after the manifest was written is caught."""
    pkg = build_published(tmp_path, {"config.json": json_bytes(TINY_CONFIG),
                                     "generation_config.json": json_bytes({"top_k": 20})})
    sha = hub.publish_dir(REPO, pkg.root)
    clean = certify_ref(f"hf://{REPO}@{sha}")
    not_lfs = {f.path for f in clean.findings if f.code == "hub_artifact_not_lfs"}
    assert not any(p and p.startswith("metadata/") for p in not_lfs)
    assert clean.status == "passed", [f.code for f in clean.findings if f.severity == "error"]
    tampered = hub.commit(REPO, {"metadata/generation_config.json": json_bytes({"top_k": 21})},
                          replace_all=False)
    report = certify_ref(f"hf://{REPO}@{tampered}")
    assert ("artifact_sha256_mismatch", "metadata/generation_config.json") in {
        (f.code, f.path) for f in report.findings}
    assert report.status == "failed"
