"""MODEL argument parsing: hf:// refs, local dirs, and what is no package."""

from __future__ import annotations

import pytest

from meshcert.core.refs import RefError, is_full_sha, parse_ref

SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize(("text", "repo", "revision"), [
    ("hf://ns/repo", "ns/repo", None),
    (f"hf://ns/repo@{SHA}", "ns/repo", SHA),
    ("hf://ns/repo:main", "ns/repo", "main"),
    ("hf://ns/repo@refs/pr/1", "ns/repo", "refs/pr/1"),
    ("hf://Qwen/Qwen3-235B-A22B-GGUF@v1.0", "Qwen/Qwen3-235B-A22B-GGUF", "v1.0"),
])
def test_hf_refs(text: str, repo: str, revision: str | None) -> None:
    ref = parse_ref(text)
    assert (ref.kind, ref.repo, ref.revision) == ("hf", repo, revision)


@pytest.mark.parametrize("text", [
    "hf://", "hf://just-a-name", "hf://a/b/c", "hf://ns/repo@", "hf://../x", "s3://bucket/x", "",
    "hf://ns/re po",
])
def test_invalid_refs(text: str) -> None:
    with pytest.raises(RefError) as err:
        parse_ref(text)
    assert err.value.code == "invalid_package_ref"


@pytest.mark.parametrize("text", ["model.gguf", "/models/GLM-Q2_K-00001-of-00003.GGUF",
                                  "hf://ns/repo/model.gguf"])
def test_direct_gguf_is_rejected(text: str) -> None:
    with pytest.raises(RefError) as err:
        parse_ref(text)
    assert err.value.code == "direct_gguf_input"


def test_local_dir() -> None:
    ref = parse_ref("./packages/glm")
    assert ref.kind == "local" and ref.local_path == "./packages/glm"


def test_full_sha() -> None:
    assert is_full_sha(SHA) and not is_full_sha(SHA[:12]) and not is_full_sha(None)
