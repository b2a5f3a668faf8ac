"""v1 metadata-role tensor copies over hf://: hashed from the header reads' last block (no
extra request), so a copy that differs is caught over the Hub as in the local folder."""

from __future__ import annotations

from pathlib import Path

from tests.certify.v2_packages import build_v1, flip_tensor_byte
from tests.support.hub_packages import certify_ref, finding_keys
from tests.support.hub_server import FakeHub

REPO = "meshcert/tiny-llama3-v1"
ROPE = "rope_freqs.weight"
LAYER = "layers/layer-002.gguf"


def test_copies_over_the_hub_pass_as_the_local_folder_does(hub: FakeHub,
                                                           tmp_path: Path) -> None:
    pkg = build_v1(tmp_path, rope_freqs=True)
    sha = hub.publish_dir(REPO, pkg.root)
    local = certify_ref(str(pkg.root), verify_sha256=True)
    remote = certify_ref(f"hf://{REPO}@{sha}")
    assert remote.status == local.status == "passed"
    assert finding_keys(remote) == finding_keys(local)
    assert remote.transfer is not None
    # fixed requests + a header read (and its LFS redirect) per fragment: the copies' bytes
    # came with the header reads
    assert remote.transfer.requests <= 4 + 2 * len(pkg.files)


def test_a_differing_copy_is_caught_over_the_hub(hub: FakeHub, tmp_path: Path) -> None:
    pkg = build_v1(tmp_path, rope_freqs=True)
    flip_tensor_byte(pkg, LAYER, ROPE)
    sha = hub.publish_dir(REPO, pkg.root)
    remote = certify_ref(f"hf://{REPO}@{sha}")
    [found] = [f for f in remote.findings if f.code == "metadata_tensor_copies_differ"]
    assert found.path == LAYER and remote.status == "failed"
