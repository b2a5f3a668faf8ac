"""HubRangeSource / HubFiles: ranged reads on the resolve URL at a commit, through the LFS
redirect, counted, retried, with the token kept on the Hub's origin."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from meshcert.core.gguf.reader import read_header, read_header_file
from meshcert.core.hub.errors import HubError, Redactor
from meshcert.core.hub.files import HubFiles
from meshcert.core.hub.range_source import HubRangeSource
from meshcert.core.hub.settings import HubSettings
from meshcert.core.hub.stats import TransferCounter
from tests.support.hub_packages import build_package
from tests.support.hub_server import FakeHub

REPO = "ns/ranges"
DATA = bytes(range(256)) * 40  # 10240 bytes
TOKEN = "hf_RangeSourceToken0001"


@pytest.fixture
def files(hub: FakeHub) -> Iterator[tuple[HubFiles, TransferCounter, str]]:
    sha = hub.commit(REPO, {"blob.gguf": DATA, "plain.txt": DATA[:1000]})
    counter = TransferCounter()
    reader = HubFiles(HubSettings(endpoint=hub.url), repo=REPO, commit=sha, counter=counter,
                      redact=Redactor([TOKEN]), sleep=hub.sleeps.append,
                      headers=({"User-Agent": "test"}, {"Authorization": f"Bearer {TOKEN}"}))
    hub.reset_counters()
    yield reader, counter, sha
    reader.close()


def test_reads_ranges_through_the_lfs_redirect(hub: FakeHub, files: tuple) -> None:
    reader, counter, sha = files
    source = HubRangeSource(reader, "blob.gguf", len(DATA))
    assert source.read(100, 50) == DATA[100:150]
    assert [r.route for r in hub.requests()] == ["resolve", "lfs"]
    assert hub.requests("resolve")[0].path == f"/{REPO}/resolve/{sha}/blob.gguf"
    assert source.read(5000, 10) == DATA[5000:5010]
    assert [r.route for r in hub.requests()] == ["resolve", "lfs", "lfs"]  # target remembered
    assert [r.range for r in hub.requests("lfs")] == ["bytes=100-149", "bytes=5000-5009"]
    assert all(r.status == 206 for r in hub.requests("lfs"))
    assert counter.as_dict() == {"requests": 3, "bytes_transferred": 60, "header_bytes": 60}
    assert source.bytes_read == 60 and source.reads == 2


def test_token_only_on_the_hub_origin(hub: FakeHub, files: tuple) -> None:
    reader, _, _ = files
    HubRangeSource(reader, "blob.gguf", len(DATA)).read(0, 8)
    assert hub.requests("resolve")[0].authorization == f"Bearer {TOKEN}"
    assert hub.requests("lfs")[0].authorization is None
    assert hub.requests("lfs")[0].host.startswith("localhost:")


def test_reads_are_clamped_to_the_file(hub: FakeHub, files: tuple) -> None:
    reader, _, _ = files
    source = HubRangeSource(reader, "blob.gguf", len(DATA))
    assert source.read(len(DATA) - 4, 100) == DATA[-4:]
    assert source.read(len(DATA), 10) == b""
    assert source.read(-1, 10) == b"" and source.read(0, 0) == b""
    assert hub.requests("lfs")[-1].range == f"bytes={len(DATA) - 4}-{len(DATA) - 1}"
    unknown = HubRangeSource(reader, "blob.gguf", None)
    assert unknown.read(len(DATA) - 2, 100) == DATA[-2:]  # short read at EOF is fine
    assert unknown.read(len(DATA) + 5, 10) == b""  # 416


def test_plain_files_are_served_by_the_hub_itself(hub: FakeHub, files: tuple) -> None:
    reader, _, _ = files
    assert HubRangeSource(reader, "plain.txt", 1000).read(10, 20) == DATA[10:30]
    assert [(r.route, r.status) for r in hub.requests()] == [("resolve", 206)]


def test_an_expired_storage_url_is_resolved_again(hub: FakeHub, files: tuple) -> None:
    reader, _, _ = files
    source = HubRangeSource(reader, "blob.gguf", len(DATA))
    source.read(0, 4)
    hub.inject("lfs", 403)
    assert source.read(4, 4) == DATA[4:8]
    assert [r.route for r in hub.requests()] == ["resolve", "lfs", "lfs", "resolve", "lfs"]


def test_a_server_ignoring_ranges(hub: FakeHub, files: tuple) -> None:
    reader, _, _ = files
    hub.ignore_ranges = True
    assert HubRangeSource(reader, "blob.gguf", len(DATA)).read(300, 20) == DATA[300:320]


def test_retries_honour_retry_after(hub: FakeHub, files: tuple) -> None:
    reader, _, _ = files
    hub.inject("lfs", 429, times=2, headers={"Retry-After": "4"})
    assert HubRangeSource(reader, "blob.gguf", len(DATA)).read(0, 4) == DATA[:4]
    assert hub.sleeps == [4.0, 4.0]


def test_a_failure_is_a_hub_error_not_an_os_error(hub: FakeHub, files: tuple) -> None:
    reader, _, _ = files
    hub.inject("lfs", 500, times=None)
    source = HubRangeSource(reader, "blob.gguf", len(DATA))
    with pytest.raises(HubError) as raised:
        source.read(0, 4)
    assert not isinstance(raised.value, OSError)
    assert source.failure is raised.value and raised.value.code == "hub_unreachable"
    assert hub.count("lfs") == 5


def test_read_all_caps_and_streams(hub: FakeHub, files: tuple) -> None:
    reader, counter, _ = files
    assert reader.read_all("plain.txt", 4096) == DATA[:1000]
    assert reader.read_all("blob.gguf", 100) == DATA[:101]  # cap + 1: "too large"
    digest, size = reader.sha256("blob.gguf")
    import hashlib

    assert (digest, size) == (hashlib.sha256(DATA).hexdigest(), len(DATA))


def test_gguf_header_over_http_equals_the_local_read(hub: FakeHub, tmp_path: Path) -> None:
    info = build_package(tmp_path, layers=2)
    sha = hub.publish_dir("ns/pkg", info.root)
    reader = HubFiles(HubSettings(endpoint=hub.url), repo="ns/pkg", commit=sha,
                      counter=TransferCounter(), redact=Redactor())
    try:
        for rel in ("shared/metadata.gguf", "layers/layer-001.gguf"):
            path = info.root / rel
            remote = read_header(HubRangeSource(reader, rel, path.stat().st_size))
            assert remote == read_header_file(path)
    finally:
        reader.close()


def test_storage_errors_say_nothing_about_the_repo(hub: FakeHub, files: tuple) -> None:
    reader, _, _ = files
    hub.inject("lfs", 404, times=None)
    with pytest.raises(HubError) as raised:
        HubRangeSource(reader, "blob.gguf", len(DATA)).read(0, 4)
    assert raised.value.code == "hub_unreachable" and not raised.value.retryable
    assert "storage host" in raised.value.message
