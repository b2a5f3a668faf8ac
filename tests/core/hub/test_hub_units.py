"""The pure parts of meshcert.core.hub: revision classes, error mapping, redaction, listings."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from meshcert.core.hub.errors import (
    HubError,
    Redactor,
    from_exception,
    from_status,
    parse_retry_after,
)
from meshcert.core.hub.listing import RemoteFile, directories, fact_for, from_siblings, from_tree
from meshcert.core.hub.revision import RepoRefs, classify_revision
from meshcert.core.hub.settings import HubSettings

SHA = "0123456789abcdef0123456789abcdef01234567"
REFS = RepoRefs(branches=frozenset({"main", "dev"}), tags=frozenset({"v1"}),
                converts=frozenset({"parquet"}))


@pytest.mark.parametrize(("requested", "pinned", "kind"), [
    (SHA, True, "commit"),
    (SHA.upper(), True, "commit"),
    (None, False, "none"),
    ("main", False, "branch"),
    ("refs/heads/dev", False, "branch"),
    ("v1", False, "tag"),
    ("refs/tags/v1", False, "tag"),
    ("refs/pr/1", False, "pull_request"),
    ("refs/convert/parquet", False, "convert"),
    (SHA[:7], False, "short_sha"),
    ("f" * 40, False, "other"),
])
def test_revision_classes(requested: str | None, pinned: bool, kind: str) -> None:
    result = classify_revision(requested, SHA, REFS)
    assert (result.pinned, result.kind) == (pinned, kind)


def test_a_branch_named_like_the_commit_is_not_pinned() -> None:
    refs = RepoRefs(branches=frozenset({SHA}))
    assert classify_revision(SHA, SHA, refs).kind == "branch"


@pytest.mark.parametrize(("status", "headers", "code", "retryable"), [
    (404, {"X-Error-Code": "RepoNotFound"}, "hub_repo_not_found", False),
    (401, {"X-Error-Code": "RepoNotFound"}, "hub_repo_not_found", False),
    (404, {"X-Error-Code": "RevisionNotFound"}, "hub_revision_not_found", False),
    (403, {"X-Error-Code": "GatedRepo"}, "hub_gated", False),
    (403, {"X-Error-Message": "Access to this resource is disabled."}, "hub_disabled", False),
    (401, {}, "hub_unauthorized", False),
    (403, {}, "hub_unauthorized", False),
    (404, {"X-Error-Code": "EntryNotFound"}, "hub_unreachable", False),
    (429, {"Retry-After": "3"}, "hub_unreachable", True),
    (500, {}, "hub_unreachable", True),
    (503, {}, "hub_unreachable", True),
    (418, {}, "hub_unreachable", False),
])
def test_status_mapping(status: int, headers: dict[str, str], code: str,
                        retryable: bool) -> None:
    err = from_status(status, headers, action="x", redact=Redactor())
    assert (err.code, err.retryable) == (code, retryable)
    assert err.incomplete == (code == "hub_unreachable")


def test_retry_after_is_parsed() -> None:
    assert from_status(429, {"Retry-After": "3"}, action="x", redact=Redactor()
                       ).retry_after == 3.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


def _response(status: int, headers: dict[str, str]) -> Any:
    import httpx2

    request = httpx2.Request("GET", "https://hub.example/api/models/ns/repo")
    return httpx2.Response(status, headers=headers, request=request)


def test_client_exceptions_gated_before_not_found() -> None:
    from huggingface_hub import errors as hf

    redact = Redactor()
    gated = hf.GatedRepoError("gated", response=_response(403, {"X-Error-Code": "GatedRepo"}))
    assert isinstance(gated, hf.RepositoryNotFoundError)
    assert from_exception(gated, action="x", redact=redact).code == "hub_gated"
    missing = hf.RepositoryNotFoundError("nf", response=_response(404, {}))
    assert from_exception(missing, action="x", redact=redact).code == "hub_repo_not_found"
    bare_401 = hf.RepositoryNotFoundError("401", response=_response(401, {}))
    assert from_exception(bare_401, action="x", redact=redact).code == "hub_unauthorized"


def test_transport_errors_are_retryable_unreachable() -> None:
    import httpx2

    err = from_exception(httpx2.ConnectError("refused"), action="x", redact=Redactor())
    assert (err.code, err.retryable) == ("hub_unreachable", True)
    assert from_exception(TimeoutError("slow"), action="x", redact=Redactor()).retryable
    odd = from_exception(KeyError("sha"), action="x", redact=Redactor())
    assert (odd.code, odd.retryable) == ("hub_unreachable", False)
    same = HubError("hub_gated", "m")
    assert from_exception(same, action="x", redact=Redactor()) is same


def test_redactor() -> None:
    redact = Redactor(["hf_SecretValue123456", None])
    text = redact("a hf_SecretValue123456 b Authorization: Bearer abc.def c hf_OtherToken98765")
    assert "hf_SecretValue123456" not in text and "abc.def" not in text
    assert "hf_OtherToken98765" not in text


def test_settings_read_the_environment_at_call_time() -> None:
    settings = HubSettings.from_env({"HF_ENDPOINT": "http://127.0.0.1:1234/",
                                     "MESHCERT_HUB_TIMEOUT": "2.5"})
    assert settings.endpoint == "http://127.0.0.1:1234"
    assert settings.timeout_s == 2.5
    assert settings.origin == ("http", "127.0.0.1", 1234)
    assert HubSettings.from_env({}).endpoint == "https://huggingface.co"
    assert HubSettings.from_env({"MESHCERT_HUB_TIMEOUT": "-1"}).timeout_s == 30.0


def test_listing_records_and_facts() -> None:
    lfs = SimpleNamespace(sha256="AB" * 32, size=10, pointer_size=130)
    siblings = [SimpleNamespace(rfilename="layers/a.gguf", size=10, blob_id="b1", lfs=lfs),
                SimpleNamespace(rfilename="README.md", size=5, blob_id="b2", lfs=None)]
    files = from_siblings(siblings)
    assert files == [RemoteFile("layers/a.gguf", 10, "b1", "ab" * 32, 10),
                     RemoteFile("README.md", 5, "b2")]
    assert from_siblings([SimpleNamespace(rfilename="x", size=None, blob_id=None,
                                          lfs=None)]) is None
    assert from_siblings(None) is None
    by_path = {f.path: f for f in files}
    folders = directories(by_path)
    assert folders == {"layers"}
    fact = fact_for("layers/a.gguf", by_path, folders)
    assert (fact.kind, fact.size, fact.lfs_sha256, fact.is_lfs) == ("file", 10, "ab" * 32, True)
    assert fact_for("README.md", by_path, folders).is_lfs is False
    assert fact_for("layers", by_path, folders).kind == "directory"
    assert fact_for("layers/b.gguf", by_path, folders).kind == "missing"
    tree = [SimpleNamespace(path="layers"),
            SimpleNamespace(path="layers/a.gguf", size=10, blob_id="b1", lfs=lfs)]
    assert from_tree(tree) == [files[0]]
