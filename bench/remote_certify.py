"""Remote certification cost: meshcert on an hf:// ref vs downloading the package.

Generates real layer packages (4, 32 and 94 layers by default; small tensors), publishes each
to the test suite's fake Hub on 127.0.0.1, and measures on the server side, per package:

- meshcert (default, Hub-attested hashes): one model_info, one refs, manifest + README, GGUF
  header ranges per fragment;
- meshcert --verify-sha256: the same, plus every artifact streamed through SHA-256;
- naive: what a downloader does, `hf_hub_download` of every file (a HEAD per file plus the
  full download, through the LFS redirect).

Each layer count is measured for a v1 package and for the same model as a v2 package (carrier
+ shared/common.gguf + one artifact per layer), side by side in one run.

    python bench/remote_certify.py
    python bench/remote_certify.py --layers 4 32 --n-embd 256 --n-ff 1024

Nothing leaves 127.0.0.1. Request and byte counts are deterministic; times are indicative.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests.support package

from tests.support.hub_env import prepare_process_env  # noqa: E402

prepare_process_env()  # before huggingface_hub is imported

from certify.service import CertRequest, certify_package  # noqa: E402
from certify.view import CertOptions  # noqa: E402
from meshcert.packagegen import llama_spec, write_package, write_source_gguf  # noqa: E402
from meshcert.packagegen.split import split_v2  # noqa: E402
from tests.support.hub_server import FakeHub  # noqa: E402


@dataclass
class Row:
    fmt: str
    layers: int
    files: int
    package_bytes: int
    mode: str
    requests: int
    bytes_sent: int
    seconds: float
    status: str = ""


def _measure(hub: FakeHub, action: object) -> tuple[int, int, float, object]:
    hub.reset_counters()
    started = time.perf_counter()
    result = action()  # type: ignore[operator]
    elapsed = time.perf_counter() - started
    return hub.count(), hub.bytes_sent("resolve") + hub.bytes_sent("lfs"), elapsed, result


def _naive(hub: FakeHub, repo: str, sha: str, paths: list[str], cache: Path) -> None:
    from huggingface_hub import hf_hub_download

    for path in paths:
        hf_hub_download(repo, path, revision=sha, cache_dir=cache, endpoint=hub.url)
    shutil.rmtree(cache, ignore_errors=True)


def _write(fmt: str, work: Path, layers: int, n_embd: int, n_ff: int) -> Path:
    spec = llama_spec(block_count=layers, n_embd=n_embd, n_ff=n_ff)
    if fmt == "v1":
        return write_package(spec, work / f"pkg-{layers}-v1").root
    source = write_source_gguf(spec, work / f"src-{layers}" / spec.source_file)
    root = split_v2(source, work / f"pkg-{layers}-v2", model_id=spec.model_id).root
    shutil.rmtree(source.parent)
    return root


def bench_package(hub: FakeHub, work: Path, layers: int, n_embd: int, n_ff: int,
                  fmt: str = "v1") -> list[Row]:
    root = _write(fmt, work, layers, n_embd, n_ff)
    repo = f"bench/tiny-llama-{layers}-{fmt}"
    sha = hub.publish_dir(repo, root)
    paths = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    size = sum((root / p).stat().st_size for p in paths)
    shutil.rmtree(root)  # served from memory from here on
    rows: list[Row] = []
    for mode, verify in (("meshcert", False), ("meshcert --verify-sha256", True)):
        request = CertRequest(model=f"hf://{repo}@{sha}",
                              options=CertOptions(verify_sha256=verify))
        n, sent, secs, report = _measure(hub, lambda r=request: certify_package(r))
        rows.append(Row(fmt, layers, len(paths), size, mode, n, sent, secs,
                        report.status))  # type: ignore[attr-defined]
    n, sent, secs, _ = _measure(hub, lambda: _naive(hub, repo, sha, paths, work / "cache"))
    rows.append(Row(fmt, layers, len(paths), size, "naive: HEAD + download per file", n, sent,
                    secs, "-"))
    return rows


def _mb(n: int) -> str:
    return f"{n / 1e6:,.2f} MB"


def print_table(rows: list[Row]) -> None:
    header = ("format", "layers", "files", "package", "approach", "requests", "transferred",
              "% of package", "status", "time")
    lines = [header]
    for r in rows:
        lines.append((r.fmt, str(r.layers), str(r.files), _mb(r.package_bytes), r.mode,
                      str(r.requests), _mb(r.bytes_sent),
                      f"{100 * r.bytes_sent / r.package_bytes:.2f}%", r.status,
                      f"{r.seconds:.2f}s"))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for i, line in enumerate(lines):
        print("  ".join(cell.ljust(w) if j == 4 else cell.rjust(w)
                        for j, (cell, w) in enumerate(zip(line, widths, strict=True))))
        if i == 0:
            print("  ".join("-" * w for w in widths))
    print()
    by_layers: dict[tuple[str, int], dict[str, Row]] = {}
    for r in rows:
        by_layers.setdefault((r.fmt, r.layers), {})[r.mode] = r
    for (fmt, layers), modes in by_layers.items():
        ours, naive = modes["meshcert"], modes["naive: HEAD + download per file"]
        artifacts = layers + (3 if fmt == "v1" else 2)
        fixed = ours.requests - 2 * artifacts
        print(f"{fmt} {layers:>3} layers: meshcert {ours.requests} requests ({fixed} fixed + 2 "
              f"per artifact header read, {artifacts} artifacts) vs naive {naive.requests}; "
              f"{naive.bytes_sent / max(ours.bytes_sent, 1):.1f}x fewer bytes")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, nargs="+", default=[4, 32, 94])
    parser.add_argument("--n-embd", type=int, default=256)
    parser.add_argument("--n-ff", type=int, default=512)
    parser.add_argument("--formats", nargs="+", default=["v1", "v2"], choices=["v1", "v2"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="meshcert-bench-") as tmp, FakeHub() as hub:
        os.environ["HF_ENDPOINT"] = hub.url
        from huggingface_hub import constants

        constants.ENDPOINT = hub.url
        constants.HUGGINGFACE_CO_URL_TEMPLATE = hub.url + "/{repo_id}/resolve/{revision}/{filename}"
        rows: list[Row] = []
        for layers in args.layers:
            for fmt in args.formats:
                rows += bench_package(hub, Path(tmp), layers, args.n_embd, args.n_ff, fmt)
        print(f"llama-style packages, n_embd={args.n_embd}, n_ff={args.n_ff} (F16 weights); "
              "requests and bytes counted by the fake Hub\n")
        print_table(rows)


if __name__ == "__main__":
    main()
