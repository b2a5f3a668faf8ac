"""The 4-stage HF Jobs plan of the real Gemma 3 270M package (v2, shared/common.gguf loaded by
every stage): the dry run's slices hash the package's bytes exactly once, and the slice jobs
run `--hash-once`, so each job hashes only what its share says."""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from meshcert.certify.scope import parse_stage
from meshcert.cli import app
from meshcert.hubjobs.costs import CERTIFY_BYTES_PER_S, timeout_for
from tests.certify.test_scope import certify
from tests.support.hub_server import FakeHub
from tests.support.real_models import gemma3_path
from tests.support.splits import SplitPackage, split_v2

pytestmark = pytest.mark.slow
REPO = "meshllm/gemma-3-270m-layers"
N = 4


@pytest.fixture(scope="module")
def gemma(tmp_path_factory: pytest.TempPathFactory) -> SplitPackage:
    return split_v2(gemma3_path(), tmp_path_factory.mktemp("gemma") / "pkg",
                    model_id="google/gemma-3-270m:Q4_K_M")


def dry_run(hub: FakeHub, package: SplitPackage) -> dict[str, Any]:
    sha = hub.publish_dir(REPO, package.root)
    done = CliRunner().invoke(app, ["models", "certify", f"hf://{REPO}@{sha}", "--package-only",
                                    "--hf-job", "--stages", str(N), "--json"],
                              catch_exceptions=False)
    assert done.exit_code == 0, done.output
    return dict(json.loads(done.stdout))


def test_the_four_stage_plan_hashes_the_gemma3_package_once(
        hub: FakeHub, gemma: SplitPackage) -> None:
    package_bytes = sum(f.stat().st_size for f in gemma.files.values())
    every_stage = sum(gemma.files[p].stat().st_size  # the parts each stage loads
                      for p in ("shared/common.gguf", "shared/metadata.gguf"))
    plan = dry_run(hub, gemma)
    assert plan["hashed_bytes"] == sum(s["bytes"] for s in plan["slices"]) == package_bytes
    # what the stages load counts the shared parts once per stage: what the slices hashed before
    assert plan["loaded_bytes"] == package_bytes + (N - 1) * every_stage
    assert sum(s["hashed_artifacts"] for s in plan["slices"]) == len(gemma.files)
    # the timeouts (and so the maximum cost) follow the bytes each slice hashes
    assert [s["timeout_seconds"] for s in plan["slices"]] == [
        timeout_for(s["bytes"], CERTIFY_BYTES_PER_S) for s in plan["slices"]]


def test_the_slices_the_plan_describes_hash_what_it_says(gemma: SplitPackage) -> None:
    """What each job runs (`--stage I/4 --hash-once`) hashes exactly the bytes of its share."""
    reports = [certify(gemma.root, parse_stage(f"{i}/{N}", hash_once=True)) for i in range(N)]
    hashed = [sorted(r.digests) for r in reports]
    assert sorted(p for share in hashed for p in share) == sorted(gemma.files)
    assert sum(gemma.files[p].stat().st_size for share in hashed for p in share) == sum(
        f.stat().st_size for f in gemma.files.values())
    assert all(r.status == "passed" for r in reports)
