"""The llama.cpp worker's containment: a parser that aborts on one file costs that file only.

llama.cpp itself cannot be made to abort on demand, so this one fault comes from a stand-in
library compiled here with the same C interface (gguf_init_from_file & co.) that calls abort()
on any path containing "ABORT" (and hangs on "HANG"); everything else is the real worker and
its process handling."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from certify.llama_cpp_gguf import LlamaCppGGUF

STAND_IN = r"""
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
    assert not crash.accepted and "signal 6" in crash.log
    refuse = facts.verdicts["refuse"]
    assert not refuse.accepted and refuse.log == "stand-in: refused\n"
    assert facts.verdicts["last"].accepted and facts.verdicts["last"].n_kv == 3


def test_a_hung_worker_is_stopped_and_only_that_file_rejected(stand_in: Path,
                                                              tmp_path: Path) -> None:
    files = {name: tmp_path / f"{name.upper()}.gguf" for name in ("first", "hang", "last")}
    facts = LlamaCppGGUF(library=stand_in, timeout_s=3).check(files)
    assert facts.verdicts["first"].accepted and facts.verdicts["last"].accepted
    hang = facts.verdicts["hang"]
    assert not hang.accepted and "timed out after 3 s" in hang.log


def test_many_files_are_shared_by_two_workers_and_keep_their_order(stand_in: Path,
                                                                   tmp_path: Path) -> None:
    """From PARALLEL_FROM files two workers each take half; a crash in either half still
    costs only its file, and the verdicts come back in the files' order."""
    from certify.llama_cpp_gguf import PARALLEL_FROM

    names = [f"f{i:02d}" for i in range(PARALLEL_FROM + 4)]
    names[1], names[-2] = "abort-a", "abort-b"  # one crash in each half
    files = {name: tmp_path / f"{name.upper()}.gguf" for name in names}
    facts = LlamaCppGGUF(library=stand_in).check(files)
    assert facts.unavailable is None
    assert list(facts.verdicts) == names
    assert [n for n, v in facts.verdicts.items() if not v.accepted] == ["abort-a", "abort-b"]
    assert all("signal 6" in facts.verdicts[n].log for n in ("abort-a", "abort-b"))
