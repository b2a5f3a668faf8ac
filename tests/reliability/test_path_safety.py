"""Path and file safety: what tests/certify/checks/test_artifact_checks.py does not cover yet.

- Windows drive, UNC and device-namespace forms written into REAL manifests (the unit test
  covers `unsafe_path_reason` strings), locally and on the Hub, where an unsafe path must
  never become a request (`../` in a URL would leave the repository);
- symlinks to a device, real character devices (os.mknod), a symlinked parent directory
  leaving the package, special files as manifest or README: each is named, never read (a read
  of /dev/zero would never end: the hang guard catches it), never `passed`;
- a hard link whose other name is then used to change the content;
- files growing or shrinking while they are hashed, through the whole certification.
"""

from __future__ import annotations

import os
import shutil
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest

from meshcert.certify.report import CertReport
from meshcert.certify.service import CertRequest, certify_package
from meshcert.certify.view import CertOptions
from meshcert.core.progress import NullProgress
from meshcert.testing import PackageInfo
from tests.conftest import PackageFactory, certify_dir, codes
from tests.reliability.hub_faults import FaultyHub
from tests.support.hub_packages import REPO, build_package, certify_ref

LAYER = "layers/layer-001.gguf"

# (path written into the manifest, what it is)
WINDOWS_AND_ESCAPING_PATHS = [
    ("C:/Windows/System32/layer.gguf", "drive letter, forward slashes"),
    ("C:\\models\\layer.gguf", "drive letter, backslashes"),
    ("c:layer.gguf", "drive-relative"),
    ("\\\\server\\share\\layer.gguf", "UNC"),
    ("//server/share/layer.gguf", "UNC with forward slashes"),
    ("\\\\?\\C:\\models\\layer.gguf", "Win32 device namespace (\\\\?\\)"),
    ("\\\\.\\PhysicalDrive0", "raw device (\\\\.\\)"),
    ("layers\\..\\..\\layer.gguf", "traversal with backslashes"),
    ("layers/../../outside.gguf", "traversal"),
    ("/etc/passwd", "absolute"),
    ("layers/./layer-00001.gguf", "dot component"),
    ("layers/layer-00001.gguf\x00.txt", "NUL byte"),
]


def _only_layer_path(info: PackageInfo, path: str, factory: PackageFactory) -> None:
    def edit(manifest: dict[str, Any]) -> None:
        manifest["layers"][1]["path"] = path
    factory.edit_manifest(info, edit)


def _not_passed_with(report: CertReport, code: str) -> None:
    assert report.status == "failed", report.findings
    assert code in codes(report), report.findings
    assert "internal_error" not in codes(report)


@pytest.mark.parametrize(("path", "what"), WINDOWS_AND_ESCAPING_PATHS,
                         ids=[w for _, w in WINDOWS_AND_ESCAPING_PATHS])
def test_windows_and_escaping_paths_in_a_real_manifest(
        packages: PackageFactory, tmp_path: Path, path: str, what: str) -> None:
    info = packages.build("llama")
    outside = tmp_path / "outside.gguf"  # what the traversal would reach
    shutil.copy(info.root / LAYER, outside)
    _only_layer_path(info, path, packages)
    report = certify_dir(info.root)
    _not_passed_with(report, "unsafe_artifact_path")
    hit = next(f for f in report.findings if f.code == "unsafe_artifact_path")
    assert hit.layer_index == 1
    # never looked at: no file facts, no header findings for that entry
    assert not [f for f in report.findings if f.path == path and f.code != "unsafe_artifact_path"]


@pytest.mark.parametrize("path", ["../other-repo/resolve/main/layer.gguf", "C:/layer.gguf",
                                  "\\\\server\\share\\layer.gguf", "/layers/layer.gguf",
                                  "layers/%2e%2e/%2e%2e/x.gguf"])
def test_unsafe_paths_on_the_hub_never_become_requests(
        hub: FaultyHub, tmp_path: Path, path: str, figures: Callable[..., None]) -> None:
    info = build_package(tmp_path)
    PackageFactory.edit_manifest(info, lambda m: m["layers"][1].update(path=path))
    sha = hub.publish_dir(REPO, info.root)
    report = certify_ref(f"hf://{REPO}@{sha}")
    figures(hub_requests=hub.count())
    assert report.status == "failed"
    if "%2e" in path:  # literal on the Hub and on disk: safe, just not there
        assert "hub_artifact_missing" in codes(report) or "missing_artifact" in codes(report)
    else:
        assert "unsafe_artifact_path" in codes(report)
    published = set(hub.repos[REPO].commits[sha].files)
    asked = {unquote(r.path.split("?")[0].split(f"/resolve/{sha}/", 1)[1])
             for r in hub.requests("resolve")}
    assert asked <= published, asked - published  # only files of this repo, at this commit
    assert not hub.requests("unknown"), hub.requests("unknown")


# -- links, devices, special files -----------------------------------------------------------
@pytest.mark.timeout(60)
def test_symlink_to_a_device_is_not_a_file_and_is_never_read(packages: PackageFactory) -> None:
    info = packages.build("llama")
    target = info.root / LAYER
    target.unlink()
    target.symlink_to("/dev/zero")  # reading it would never end
    report = certify_dir(info.root)
    _not_passed_with(report, "artifact_not_file")
    hit = next(f for f in report.findings if f.code == "artifact_not_file")
    assert hit.path == LAYER and "outside the package" in hit.message


def _mknod_or_skip(path: Path) -> None:
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 5))  # what /dev/zero is
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot create a device node here: {exc}")


@pytest.mark.timeout(60)
def test_a_real_character_device_in_the_package(packages: PackageFactory) -> None:
    info = packages.build("llama")
    target = info.root / LAYER
    target.unlink()
    _mknod_or_skip(target)
    assert stat.S_ISCHR(os.lstat(target).st_mode)
    report = certify_dir(info.root)
    _not_passed_with(report, "artifact_not_file")
    hit = next(f for f in report.findings if f.code == "artifact_not_file")
    assert "FIFO, socket or device" in hit.message


@pytest.mark.timeout(60)
def test_a_symlink_to_a_device_inside_the_package(packages: PackageFactory) -> None:
    info = packages.build("llama")
    (info.root / "dev").mkdir()
    _mknod_or_skip(info.root / "dev" / "zero")
    target = info.root / LAYER
    target.unlink()
    target.symlink_to(info.root / "dev" / "zero")
    _not_passed_with(certify_dir(info.root), "artifact_not_file")


def test_a_symlinked_parent_directory_leaving_the_package(packages: PackageFactory,
                                                         tmp_path: Path) -> None:
    info = packages.build("llama")
    elsewhere = tmp_path / "elsewhere-layers"
    shutil.copytree(info.root / "layers", elsewhere)  # same bytes: only the location is wrong
    shutil.rmtree(info.root / "layers")
    (info.root / "layers").symlink_to(elsewhere, target_is_directory=True)
    report = certify_dir(info.root)
    _not_passed_with(report, "artifact_not_file")
    flagged = {f.path for f in report.findings if f.code == "artifact_not_file"}
    assert flagged == {f"layers/layer-{i:03d}.gguf" for i in range(4)}
    assert all("outside the package" in f.message for f in report.findings
               if f.code == "artifact_not_file")


def test_a_symlinked_parent_directory_inside_the_package_is_fine(
        packages: PackageFactory) -> None:
    info = packages.build("llama")
    (info.root / "layers").rename(info.root / "store")
    (info.root / "layers").symlink_to(info.root / "store", target_is_directory=True)
    report = certify_dir(info.root)
    assert "artifact_not_file" not in codes(report)
    assert report.status == "passed", report.findings


def test_hard_link_then_changed_through_its_other_name(packages: PackageFactory,
                                                      tmp_path: Path) -> None:
    """A hard link is a warning (the bytes are still hashed); a change made through the other
    name is the same inode, so the hash catches it."""
    info = packages.build("llama")
    other = tmp_path / "shared-storage.gguf"
    os.link(info.root / LAYER, other)
    assert certify_dir(info.root).status == "passed"
    with open(other, "r+b") as handle:  # same size, one byte changed, via the outside name
        handle.seek(-1, os.SEEK_END)
        last = handle.read(1)
        handle.seek(-1, os.SEEK_END)
        handle.write(bytes([last[0] ^ 0xFF]))
    report = certify_dir(info.root)
    _not_passed_with(report, "artifact_sha256_mismatch")
    assert "artifact_hard_link" in codes(report)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("special", ["dev-zero-link", "fifo"])
@pytest.mark.parametrize("name", ["model-package.json", "README.md"])
def test_special_files_as_manifest_or_readme_are_never_read(
        packages: PackageFactory, name: str, special: str) -> None:
    info = packages.build("llama")
    target = info.root / name
    target.unlink()
    if special == "fifo":
        os.mkfifo(target)  # opening it for reading would block forever
    else:
        target.symlink_to("/dev/zero")
    report = certify_dir(info.root)
    if name == "model-package.json":
        _not_passed_with(report, "artifact_not_file")
    else:
        assert "readme_missing" in codes(report)  # a warning: the package itself is fine


# -- files changing while hashed -------------------------------------------------------------
_hashing = threading.local()  # .path: the file this worker thread is hashing


class _Changer(NullProgress):
    """Changes the target file under the hasher's feet: on the first progress tick of the
    worker thread hashing it (one chunk read, many to go)."""

    def __init__(self, target: Path, change: Callable[[Path], None]) -> None:
        self.target = str(target)
        self.change = change
        self.done = False

    def advance(self, amount: int) -> None:
        if not self.done and getattr(_hashing, "path", None) == self.target:
            self.done = True
            self.change(Path(self.target))


def _tracking_open(file: Any, *args: Any, **kwargs: Any) -> Any:
    _hashing.path = str(file)
    return open(file, *args, **kwargs)


def _grow(path: Path) -> None:
    with open(path, "ab") as handle:
        handle.write(b"\0" * 4096)


def _shrink(path: Path) -> None:
    os.truncate(path, path.stat().st_size // 2)


@pytest.mark.parametrize("change", [_grow, _shrink], ids=["grows", "shrinks"])
def test_a_file_changing_size_while_hashed_is_never_verified(
        packages: PackageFactory, monkeypatch: pytest.MonkeyPatch,
        change: Callable[[Path], None]) -> None:
    monkeypatch.setattr("meshcert.core.hashing.CHUNK", 4096)  # many reads per file: a window to act
    monkeypatch.setattr("meshcert.core.hashing.open", _tracking_open, raising=False)
    info = packages.build("llama")
    target = info.root / LAYER
    changer = _Changer(target, change)
    report = certify_package(CertRequest(model=str(info.root), options=CertOptions()), changer)
    assert changer.done
    assert report.status == "failed", report.findings
    unreadable = [f for f in report.findings if f.code == "artifact_sha256_unreadable"]
    assert unreadable, report.findings
    assert any("changed size" in f.message for f in unreadable)
