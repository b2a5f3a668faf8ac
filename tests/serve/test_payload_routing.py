"""The payload read leniently and routed to tasks (pure): what is acted on, what is ignored
and why, and that a payload's commits are hints only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from meshcert.serve.config import ServeConfig, load_config
from meshcert.serve.payload import Event, Ignored, PayloadError, parse
from meshcert.serve.routing import CATALOG_PR, PACKAGE, PACKAGE_PR, RECHECK_KIND, tasks_for


@pytest.fixture
def config(tmp_path: Path) -> ServeConfig:
    path = tmp_path / "serve.toml"
    path.write_text('[signing]\nkey = "k.key"\n[attestations]\nrepo = "meshllm/att"\n'
                    '[[watch]]\nrepo = "meshllm/*-layers"\n[[catalog]]\nrepo = "meshllm/catalog"\n')
    return load_config(path)


def body(scope: str, action: str, repo: str = "meshllm/a-layers", kind: str = "model",
         **extra: object) -> bytes:
    return json.dumps({"event": {"scope": scope, "action": action},
                       "repo": {"type": kind, "name": repo, "headSha": "c" * 40},
                       "webhook": {"id": "w", "version": 3}, **extra}).encode()


def route(raw: bytes, config: ServeConfig) -> list[tuple[str, str, int | None]] | str:
    event = parse(raw)
    routed = event if isinstance(event, Ignored) else tasks_for(event, config)
    if isinstance(routed, Ignored):
        return routed.reason
    return [(t.kind, t.ref, t.pr) for t in routed]


def refs(*pairs: tuple[str, str | None]) -> dict[str, Any]:
    return {"updatedRefs": [{"ref": r, "oldSha": None, "newSha": s} for r, s in pairs]}


def test_a_push_to_main_and_to_a_pull_request(config: ServeConfig) -> None:
    raw = body("repo.content", "update", **refs(("refs/heads/main", "a" * 40),
                                                ("refs/pr/3", "b" * 40),
                                                ("refs/heads/dev", "d" * 40),
                                                ("refs/pr/4", None)))
    assert route(raw, config) == [(PACKAGE, "refs/heads/main", None),
                                  (PACKAGE_PR, "refs/pr/3", 3)]


def test_a_catalog_pull_request_opened_and_a_recheck_comment(config: ServeConfig) -> None:
    pr = {"num": 7, "isPullRequest": True, "status": "open"}
    opened = body("discussion", "create", "meshllm/catalog", "dataset", discussion=pr)
    assert route(opened, config) == [(CATALOG_PR, "refs/pr/7", 7)]
    comment = body("discussion.comment", "create", "meshllm/catalog", "dataset",
                   discussion=pr, comment={"id": "c1", "content": " /meshcert recheck please"})
    assert route(comment, config) == [(RECHECK_KIND, "refs/pr/7", 7)]
    chatter = body("discussion.comment", "create", "meshllm/catalog", "dataset",
                   discussion=pr, comment={"id": "c2", "content": "looks good"})
    assert "asks nothing" in str(route(chatter, config))
    hidden = body("discussion.comment", "create", "meshllm/catalog", "dataset",
                  discussion=pr, comment={"id": "c3", "hidden": True})
    assert "asks nothing" in str(route(hidden, config))


def test_a_narrower_unknown_scope_counts_as_an_update(config: ServeConfig) -> None:
    raw = body("repo.content.lfs", "whatever", **refs(("refs/heads/main", "a" * 40)))
    assert route(raw, config) == [(PACKAGE, "refs/heads/main", None)]


@pytest.mark.parametrize(("raw", "why"), [
    (body("repo", "delete"), "scope 'repo' is not acted upon"),
    (body("repo.config", "update"), "scope 'repo.config' is not acted upon"),
    (body("discussion", "delete", discussion={"num": 1, "isPullRequest": True}),
     "'discussion' 'delete' is not acted upon"),
    (body("discussion", "update", discussion={"num": 1, "isPullRequest": True,
                                              "status": "closed"}), "is 'closed'"),
    (body("discussion", "create", discussion={"num": 1, "isPullRequest": False}),
     "not a pull request"),
    (body("repo.content", "update", "meshllm/other"), "is not watched"),
    (body("repo.content", "update", "meshllm/catalog", "model"), "is not watched"),
    (body("repo.content", "update", **refs(("refs/heads/main", None))), "no ref"),
    (json.dumps({"event": {}}).encode(), "webhook version None is not 3"),
])
def test_what_is_ignored_says_why(config: ServeConfig, raw: bytes, why: str) -> None:
    assert why in str(route(raw, config))


@pytest.mark.parametrize("name", [
    "meshllm/x-layers/../other", "meshllm/../evil-layers", "meshllm/a/b-layers",
    "meshllm/ a-layers", "meshllm/a-layers\nINFO forged log line", "meshllm/-layers",
    "MESHLLM/A-LAYERS", "Meshllm/a-layers", "meshllm/a-layers?x=1", "meshllm/catalog/..",
])
def test_a_name_that_only_looks_watched_is_not_acted_on(config: ServeConfig, name: str) -> None:
    """A `*` never spans the `/`, a path trick or a new line is no repo id, and a name is
    matched as the Hub spells it (another spelling would file the verdict under a name the
    repo does not have); what is ignored says so without writing the name raw into a log."""
    for kind in ("model", "dataset"):
        why = route(body("repo.content", "update", name, kind,
                         **refs(("refs/heads/main", "a" * 40), ("refs/pr/1", "b" * 40))),
                    config)
        assert isinstance(why, str), (name, why)
        assert "\n" not in why


@pytest.mark.parametrize("raw", [b"", b"nope", b"[]", b"3", b"\xff", b"[" * 100_000,
                                 b'{"a":' * 100_000])
def test_only_a_body_that_is_no_json_object_is_an_error(raw: bytes) -> None:
    with pytest.raises(PayloadError):
        parse(raw)


def test_the_head_sha_is_kept_as_a_hint_only() -> None:
    event = parse(body("repo.content", "update", **refs(("refs/heads/main", "a" * 40))))
    assert isinstance(event, Event) and event.head_sha_hint == "c" * 40


def test_a_commit_hint_that_is_no_commit_id_is_never_kept_raw() -> None:
    forged = "a" * 40 + "\nERROR forged log line"
    event = parse(body("repo.content", "update", **refs(("refs/heads/main", forged)))
                  .replace(b'"' + b"c" * 40 + b'"', b'"<b>"'))
    assert isinstance(event, Event)
    assert event.refs[0].new_sha == "(not a commit id)"
    assert event.head_sha_hint == "(not a commit id)"
