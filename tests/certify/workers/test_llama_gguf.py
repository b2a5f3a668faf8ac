"""The llama.cpp worker's containment: a parser that aborts on one file costs that file only.

llama.cpp itself cannot be made to abort on demand, so this one fault comes from a stand-in
library compiled here with the same C interface (gguf_init_from_file & co.) that calls abort()
on any path containing "ABORT" (and hangs on "HANG"); everything else is the real worker and
its process handling. Also here: when the files are shared by two workers, and when one does."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from meshcert.certify.manifest_parse import ParsedManifest
from meshcert.certify.report_ref import RefInfo
from meshcert.certify.view import CertOptions, PackageView
from meshcert.certify.workers.llama_gguf import (
    HASH_BYTES_PER_S,
    PARALLEL_FROM,
    PARSE_BYTES_PER_S,
    LlamaCppGGUF,
    split_pays,
)
from meshcert.core.file_facts import FileFact
from meshcert.core.gguf.model import GGUFHeader

STAND_IN = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <stdbool.h>
#include <unistd.h>
typedef void (*log_cb)(int, const char *, void *);
static log_cb cb;
struct params { bool no_alloc; void **ctx; };
void ggml_log_set(log_cb c, void *u) { (void)u; cb = c; }
void *gguf_init_from_file(const char *path, struct params p) {
    (void)p;
    const char *pids = getenv("STAND_IN_PIDS");  /* which worker parsed each file */
    FILE *log = pids ? fopen(pids, "a") : 0;
    if (log) { fprintf(log, "%d\n", (int)getpid()); fclose(log); }
    if (strstr(path, "ABORT")) abort();
    if (strstr(path, "HANG")) for (;;) sleep(1);
    if (strstr(path, "REFUSE")) { if (cb) cb(4, "stand-in: refused\n", 0); return 0; }
    return malloc(1);
}
void gguf_free(void *ctx) { free(ctx); }
int64_t gguf_get_n_tensors(void *ctx) { (void)ctx; return 7; }
int64_t gguf_get_n_kv(void *ctx) { (void)ctx; return 3; }
"""


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory: pytest.TempPathFactory) -> Path:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler")
    folder = tmp_path_factory.mktemp("standin")
    (folder / "s.c").write_text(STAND_IN)
    lib = folder / "libggml-base.so"
    subprocess.run([compiler, "-shared", "-fPIC", "-o", str(lib), str(folder / "s.c")],
                   check=True)
    return lib


def test_a_crash_rejects_that_file_and_a_new_worker_takes_the_rest(stand_in: Path,
                                                                    tmp_path: Path) -> None:
    files = {name: tmp_path / f"{name.upper()}.gguf"
             for name in ("first", "abort", "refuse", "last")}
    facts = LlamaCppGGUF(library=stand_in).check(files)
    assert facts.unavailable is None
    assert list(facts.verdicts) == ["first", "abort", "refuse", "last"]
    assert facts.verdicts["first"].accepted and facts.verdicts["first"].n_tensors == 7
    crash = facts.verdicts["abort"]
    assert not crash.accepted and "killed by SIGABRT" in crash.log
    assert crash.death is not None and crash.death.signal == "SIGABRT"
    assert crash.death.model == str(files["abort"])
    refuse = facts.verdicts["refuse"]
    assert not refuse.accepted and refuse.log == "stand-in: refused\n"
    assert facts.verdicts["last"].accepted and facts.verdicts["last"].n_kv == 3


def test_a_hung_worker_is_stopped_and_only_that_file_rejected(stand_in: Path,
                                                              tmp_path: Path) -> None:
    files = {name: tmp_path / f"{name.upper()}.gguf" for name in ("first", "hang", "last")}
    facts = LlamaCppGGUF(library=stand_in, timeout_s=3).check(files)
    assert facts.verdicts["first"].accepted and facts.verdicts["last"].accepted
    hang = facts.verdicts["hang"]
    assert not hang.accepted and "outlived its 3 s wall clock" in hang.log
    assert hang.death is not None and hang.death.returncode is None


def test_many_files_are_shared_by_two_workers_and_keep_their_order(stand_in: Path,
                                                                   tmp_path: Path) -> None:
    """From PARALLEL_FROM files two workers each take half; a crash in either half still
    costs only its file, and the verdicts come back in the files' order."""
    names = [f"f{i:02d}" for i in range(PARALLEL_FROM + 4)]
    names[1], names[-2] = "abort-a", "abort-b"  # one crash in each half
    files = {name: tmp_path / f"{name.upper()}.gguf" for name in names}
    facts = LlamaCppGGUF(library=stand_in).check(files)
    assert facts.unavailable is None
    assert list(facts.verdicts) == names
    assert [n for n, v in facts.verdicts.items() if not v.accepted] == ["abort-a", "abort-b"]
    assert all("killed by SIGABRT" in facts.verdicts[n].log for n in ("abort-a", "abort-b"))


def test_without_a_split_one_worker_parses_every_file(stand_in: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    pids = tmp_path / "pids"
    monkeypatch.setenv("STAND_IN_PIDS", str(pids))
    files = {f"f{i:02d}": tmp_path / f"F{i:02d}.gguf" for i in range(PARALLEL_FROM + 4)}
    one = LlamaCppGGUF(library=stand_in, split=False).check(files)
    assert len(set(pids.read_text().split())) == 1 and list(one.verdicts) == list(files)
    pids.unlink()
    two = LlamaCppGGUF(library=stand_in).check(files)
    assert len(set(pids.read_text().split())) == 2 and two.verdicts == one.verdicts


def _view(header_bytes: int, file_bytes: int, files: int = PARALLEL_FROM,
          verify: bool = True) -> PackageView:
    view = PackageView(ref=RefInfo(kind="local", pinned=False), display_ref="pkg",
                       local_dir="/pkg", manifest_raw=None, parsed=ParsedManifest(None),
                       options=CertOptions(verify_sha256=verify))
    for i in range(files):
        path = f"layers/layer-{i:05d}.gguf"
        view.files[path] = FileFact(path, "file", size=file_bytes // files)
        view.headers[path] = GGUFHeader(version=3, kv={}, tensors=[], alignment=32,
                                        data_offset=header_bytes // files, file_size=None,
                                        header_end=header_bytes // files)
    return view


def _paths(view: PackageView) -> dict[str, Path]:
    return {path: Path("/pkg", path) for path in view.headers}


@pytest.mark.parametrize(("header_mb", "file_mb", "verify", "split"), [
    (64, 100, True, True),       # SmolLM2 in 32 fragments: the parse outlasts the hashing
    (1, 4300, True, False),      # the whole-process bench's 4.3 GB package: hashing hides it
    (1, 4300, False, True),      # nothing is hashed: the parse is what certify waits for
    (16, 16_000, True, False),   # a big-vocabulary model of 16 GB
])
def test_a_second_worker_only_when_the_parse_would_outlast_the_hashing(
        header_mb: int, file_mb: int, verify: bool, split: bool,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    view = _view(header_mb << 20, file_mb << 20, verify=verify)
    assert split_pays(view, _paths(view)) is split


def test_the_split_threshold_follows_the_measured_rates(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("os.cpu_count", lambda: 4)
    header = 10 << 20
    even = int(header / PARSE_BYTES_PER_S * HASH_BYTES_PER_S * 4)  # parse time == hash time
    below, above = _view(header, even - (64 << 20)), _view(header, even + (64 << 20))
    assert split_pays(below, _paths(below)) and not split_pays(above, _paths(above))
