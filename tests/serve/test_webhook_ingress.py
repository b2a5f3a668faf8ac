"""POST /webhook: what each bad input is answered, and that nothing it refuses is queued.

Decided per case (docs/serve.md): no secret 401 and a wrong one 403 (nothing read, nothing
queued, the secret in no log line); a body over 1 MiB 413; a body that is not a JSON object
400 (the Hub always sends one); everything else 2xx, so the Hub never suspends the webhook:
an unknown scope, action or version, an unwatched repo, a replayed Webhook-Id (200, ignored).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import httpx
import pytest

from tests.support.catalog_packages import PackageShelf
from tests.support.hub_server import FakeHub
from tests.support.serve_rig import BOT_TOKEN, SECRET, LogCollector, ServeRig

REPO = "meshllm/tiny-layers"


@pytest.fixture
def logs() -> Iterator[LogCollector]:
    collector = LogCollector()
    root = logging.getLogger()
    old = root.level
    root.addHandler(collector)
    root.setLevel(logging.DEBUG)
    yield collector
    root.removeHandler(collector)
    root.setLevel(old)


@pytest.fixture
def served(rig: ServeRig, monkeypatch: pytest.MonkeyPatch) -> Iterator[ServeRig]:
    rig.write_config(watch=["meshllm/*-layers"])
    monkeypatch.setenv("HF_TOKEN", BOT_TOKEN)
    with rig.running():
        yield rig


def post(rig: ServeRig, body: bytes, headers: dict[str, str], query: str = ""
         ) -> httpx.Response:
    return httpx.post(f"{rig.url}/webhook{query}", content=body, headers=headers, timeout=10)


def push_payload(sha: str = "a" * 40, **over: object) -> dict[str, object]:
    return {"event": {"action": "update", "scope": "repo.content"},
            "repo": {"type": "model", "name": REPO, "headSha": sha},
            "updatedRefs": [{"ref": "refs/heads/main", "oldSha": None, "newSha": sha}],
            "webhook": {"id": "w1", "version": 3}, **over}


def test_a_missing_or_wrong_secret_is_refused_queues_nothing_and_is_in_no_log(
        served: ServeRig, logs: LogCollector) -> None:
    import json

    body = json.dumps(push_payload()).encode()
    assert post(served, body, {"Webhook-Id": "d1"}).status_code == 401
    assert post(served, body, {"Webhook-Id": "d2", "X-Webhook-Secret": "guess"}
                ).status_code == 403
    assert post(served, body, {"Webhook-Id": "d3"}, "?secret=guess").status_code == 403
    counts = served.status()["counts"]
    assert counts["deliveries"] == 0 and counts["pending"] == 0
    # the right secret in the query works, and is written down nowhere
    assert post(served, body, {"Webhook-Id": "d4"}, f"?secret={SECRET}").status_code == 202
    served.status()
    assert "webhook refused: wrong secret (403)" in logs.text()
    assert SECRET not in logs.text() and "guess" not in logs.text()


def test_a_body_over_1_mib_is_413_and_queues_nothing(served: ServeRig) -> None:
    big = b"{" + b" " * (10 * 1024 * 1024) + b"}"
    answer = post(served, big, {"Webhook-Id": "big", "X-Webhook-Secret": SECRET})
    assert answer.status_code == 413
    assert served.status()["counts"]["deliveries"] == 0


@pytest.mark.parametrize("body", [b"not json", b"[1, 2]", b"\xff\xfe", b"[" * 100_000])
def test_a_body_that_is_not_a_json_object_is_400(served: ServeRig, body: bytes) -> None:
    answer = post(served, body, {"Webhook-Id": "bad", "X-Webhook-Secret": SECRET})
    assert answer.status_code == 400
    assert "Traceback" not in answer.text
    assert served.status()["counts"]["deliveries"] == 0


@pytest.mark.parametrize("change", [
    {"event": {"action": "update", "scope": "repo.future-thing"}},
    {"event": {"action": "transmogrify", "scope": "repo.content"}},
    {"webhook": {"id": "w1", "version": 4}},
    {"repo": {"type": "space", "name": REPO}},
    {"repo": {"type": "model", "name": "someone/else-layers"}},
])
def test_what_is_not_understood_is_a_2xx_and_ignored(served: ServeRig,
                                                     change: dict[str, object]) -> None:
    import json

    answer = post(served, json.dumps(push_payload() | change).encode(),
                  {"Webhook-Id": "odd", "X-Webhook-Secret": SECRET})
    assert answer.status_code == 200 and answer.json()["ignored"]
    counts = served.status()["counts"]
    assert counts["deliveries"] == 1 and counts["pending"] == counts["done"] == 0


def test_a_replayed_delivery_starts_nothing(served: ServeRig, hub: FakeHub,
                                            shelf: PackageShelf) -> None:
    served.hook()
    hub.publish_dir(REPO, shelf.v2())
    first = served.settle()
    (push, _) = hub.webhooks.deliveries
    hub.webhooks.replay(push)
    again = served.settle()
    assert push.statuses == [202, 200]
    assert again["counts"]["done"] == first["counts"]["done"] == 1
    assert again["counts"]["certifications"] == 1
    assert served.attestation_commits() == 2  # the dataset's first commit and one upload


def test_a_delivery_the_service_could_not_answer_is_retried_with_the_same_id(
        rig: ServeRig, hub: FakeHub, shelf: PackageShelf,
        monkeypatch: pytest.MonkeyPatch) -> None:
    rig.write_config(watch=["meshllm/*-layers"])
    monkeypatch.setenv("HF_TOKEN", BOT_TOKEN)
    rig.hook()  # the service is not up yet: the first attempts get no answer
    hub.publish_dir(REPO, shelf.v2())
    hub.webhooks.wait_idle()
    (down,) = hub.webhooks.deliveries
    assert down.statuses == [None] * (1 + len(hub.webhooks.retry_delays_s))
    with rig.running():
        hub.webhooks.replay(down)
        status = rig.settle()
    assert down.statuses[-1] == 202 and status["counts"]["done"] == 1


def test_healthz_and_the_status_page(served: ServeRig) -> None:
    assert httpx.get(f"{served.url}/healthz").json() == {"ok": True}
    page = httpx.get(f"{served.url}/status", headers={"Accept": "text/html"})
    assert page.headers["content-type"].startswith("text/html")
    assert "<h2>Last verdicts</h2>" in page.text and "<script" not in page.text
    assert served.status()["attestation_repo"] == "meshllm/meshcert-attestations"


def test_a_known_webhook_id_with_another_body_queues_nothing_and_is_logged(
        served: ServeRig, logs: LogCollector) -> None:
    """The Hub sends a delivery again as it was; a known id with another body is someone
    else's request (one who saw the secret): answered 200, nothing queued, a warning."""
    import json

    headers = {"Webhook-Id": "same", "X-Webhook-Secret": SECRET}
    assert post(served, json.dumps(push_payload()).encode(), headers).status_code == 202
    other = push_payload(repo={"type": "model", "name": "meshllm/other-layers"})
    answer = post(served, json.dumps(other).encode(), headers)
    assert answer.status_code == 200 and answer.json()["replay"] is True
    counts = served.status()["counts"]
    assert counts["deliveries"] == 1 and counts["pending"] + counts["running"] + \
        counts["done"] + counts["failed"] == 1
    assert "delivery same replayed with another body: nothing queued" in logs.text()


def test_a_body_sent_in_chunks_without_a_length_is_cut_at_the_cap(served: ServeRig) -> None:
    """The cap holds while the body streams in (no Content-Length to refuse it by)."""
    sent = 0

    def chunks() -> Iterator[bytes]:
        nonlocal sent
        yield b"{"
        for _ in range(160):  # 10 MiB in 64 KiB chunks
            sent += 65536
            yield b" " * 65536
        yield b"}"

    try:
        answer = httpx.post(f"{served.url}/webhook", content=chunks(), timeout=30,
                            headers={"Webhook-Id": "chunked", "X-Webhook-Secret": SECRET})
        assert answer.status_code == 413
    except httpx.TransportError:
        pass  # the service answered 413 and closed the connection while the rest was sent
    assert served.status()["counts"]["deliveries"] == 0


def test_the_secret_is_in_no_answer_status_or_state_file(served: ServeRig) -> None:
    import json

    query = f"?secret={SECRET}"
    post(served, json.dumps(push_payload()).encode(), {"Webhook-Id": "q"}, query)
    post(served, b"not json", {"Webhook-Id": "bad"}, query)
    post(served, b"{}", {"Webhook-Id": "odd"}, query)
    pages = [httpx.get(f"{served.url}/status{q}").text for q in ("", "?format=json")]
    assert all(SECRET not in page for page in pages)
    state = served.base / "state"
    for path in state.iterdir():
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path.name


def test_deliveries_at_once_are_each_answered_once_recorded(served: ServeRig) -> None:
    """200 deliveries on their own connections at once (recorded in shared transactions),
    a quarter of them a Webhook-Id sent twice: every answer is a 2xx, each id recorded once,
    each distinct push queued once."""
    import asyncio
    import json

    async def send_all() -> list[httpx.Response]:
        async with httpx.AsyncClient(limits=httpx.Limits(max_connections=200),
                                     timeout=60) as client:
            return list(await asyncio.gather(*(client.post(
                f"{served.url}/webhook", headers={"Webhook-Id": f"at-once-{i % 150}",
                                                  "X-Webhook-Secret": SECRET},
                content=json.dumps(push_payload(
                    repo={"type": "model", "name": f"meshllm/p{i % 150}-layers"})).encode())
                for i in range(200))))

    answers = asyncio.run(send_all())
    assert sorted({a.status_code for a in answers}) == [200, 202]
    assert sum(a.status_code == 202 for a in answers) == 150
    counts = served.status()["counts"]
    assert counts["deliveries"] == 150
    assert sum(counts[s] for s in ("pending", "running", "done", "failed")) == 150
