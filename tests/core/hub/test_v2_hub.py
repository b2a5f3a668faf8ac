"""Package v2 over hf:// through the in-repo Hub with the real huggingface_hub client: same
findings as the local folder, at the v1 cost (listing, manifest, one header range read per
artifact; the carrier's tensor catalog costs no extra request)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.certify.v2_packages import build_v2, edit_manifest
from tests.support.hub_packages import certify_ref, finding_keys
from tests.support.hub_server import FakeHub
from tests.support.real_models import smollm2_path

REPO = "meshcert/tiny-llama-v2"


def test_v2_package_over_the_hub_matches_the_local_folder(hub: FakeHub, tmp_path: Path) -> None:
    pkg = build_v2(tmp_path)
    sha = hub.publish_dir(REPO, pkg.root)
    local = certify_ref(str(pkg.root), verify_sha256=True)
    remote = certify_ref(f"hf://{REPO}@{sha}")
    assert remote.status == local.status == "passed"
    assert finding_keys(remote) == finding_keys(local)
    assert remote.package_format == "v2" and remote.package_id == pkg.manifest["package_id"]
    for stage in remote.materialized_stages:
        assert stage.verified_artifacts == stage.selected_part_count
    artifacts = len(pkg.manifest["artifact_catalog"]["entries"])
    assert remote.transfer is not None
    # fixed requests (model_info + listing, refs, manifest, README) + a header read (and its
    # LFS redirect) per artifact: nothing grows with the tensor count
    assert remote.transfer.requests <= 4 + 2 * artifacts


def test_a_broken_carrier_locator_is_caught_from_header_ranges(hub: FakeHub,
                                                               tmp_path: Path) -> None:
    from tests.certify.v2_packages import rewrite_carrier

    pkg = build_v2(tmp_path)
    rewrite_carrier(pkg, edit=lambda rows: rows[0].__setitem__(1, 1 << 40))
    sha = hub.publish_dir(REPO, pkg.root)
    remote = certify_ref(f"hf://{REPO}@{sha}")
    assert "storage_out_of_bounds" in {f.code for f in remote.findings}
    assert remote.status == "failed"


def test_a_stale_package_id_is_caught_over_the_hub(hub: FakeHub, tmp_path: Path) -> None:
    pkg = build_v2(tmp_path)
    edit_manifest(pkg, lambda m: m.update(model_id="someone/else"), reid=False)
    sha = hub.publish_dir(REPO, pkg.root)
    assert "package_identity_mismatch" in {f.code for f in certify_ref(
        f"hf://{REPO}@{sha}").findings}


@pytest.mark.slow
def test_real_smollm2_v2_package_passes_over_the_hub_streamed(hub: FakeHub,
                                                              tmp_path: Path) -> None:
    from tests.support.splits import split_v2

    pkg = split_v2(smollm2_path(), tmp_path / "smol-v2",
                   model_id="HuggingFaceTB/SmolLM2-135M-Instruct-GGUF:Q4_1",
                   repo="HuggingFaceTB/SmolLM2-135M-Instruct", revision="main")
    sha = hub.publish_dir("meshcert/smollm2-v2", pkg.root)
    attested = certify_ref(f"hf://meshcert/smollm2-v2@{sha}")
    streamed = certify_ref(f"hf://meshcert/smollm2-v2@{sha}", verify_sha256=True)
    assert attested.status == streamed.status == "passed"
    assert streamed.verification == "sha256-streamed"
    assert finding_keys(attested) == finding_keys(streamed)
