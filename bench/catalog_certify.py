"""Catalog certification vs certifying the packages one by one.

Publishes N real (tiny, generated) layer packages to the test suite's fake Hub, which runs in
a child process and answers every request `--latency-ms` late, as a far-away Hub would; writes
a catalog checkout listing them (no revision recorded, as the real catalog today); then
measures, on the server side:

- catalog: `meshcert catalog certify` in process (resolve each commit, certify it at that
  commit; `--concurrency` packages at a time through one request gate);
- one by one: `models certify hf://repo --allow-unpinned` for each package in sequence (what a
  reviewer does by hand: the same engine, resolving the commit in its own model_info).

    python bench/catalog_certify.py
    python bench/catalog_certify.py --packages 25 --layers 32 --latency-ms 50 --concurrency 4 8

Nothing leaves 127.0.0.1. Request counts are deterministic; times are indicative (median of
--rounds after a warm-up).
"""

from __future__ import annotations

import argparse
import functools
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests.support package
sys.path.insert(0, str(Path(__file__).resolve().parent))  # remote_certify's HubProcess

from remote_certify import HubProcess  # noqa: E402  (prepares the Hub environment first)

from meshcert.catalog.report import CatalogOptions  # noqa: E402
from meshcert.catalog.run import CatalogRequest, certify_catalog  # noqa: E402
from meshcert.catalog.sources import LocalCatalog  # noqa: E402
from meshcert.certify.service import CertRequest, certify_package  # noqa: E402
from meshcert.certify.view import CertOptions  # noqa: E402
from tests.support.catalog_packages import (  # noqa: E402
    RUNTIME_ABI,
    PackageShelf,
    artifact_count,
    variant,
    write_entry,
)


def _timed(hub: HubProcess, action: Callable[[], object]) -> tuple[float, int, object]:
    hub.reset_counters()
    started = time.perf_counter()
    result = action()
    return time.perf_counter() - started, hub.count(), result


def _catalog(root: Path, concurrency: int) -> object:
    report = certify_catalog(LocalCatalog(root), CatalogRequest(
        options=CatalogOptions(runtime_abi=RUNTIME_ABI), concurrency=concurrency)).report
    assert report.status == "passed", [(r.repo, r.error_codes) for r in report.packages]
    return report


def _one_by_one(repos: list[str]) -> object:
    statuses = []
    for repo in repos:
        report = certify_package(CertRequest(model=f"hf://{repo}", options=CertOptions(
            runtime_abi=RUNTIME_ABI, allow_unpinned=True, verify_sha256=False)))
        statuses.append(report.status)
    assert set(statuses) == {"passed"}, statuses
    return statuses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", type=int, default=25)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--format", choices=["v1", "v2"], default="v2")
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[4, 8])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="meshcert-bench-catalog-"))
    latency = args.latency_ms / 1000
    try:
        with HubProcess(latency) as hub:
            import os

            os.environ["HF_ENDPOINT"] = hub.url
            shelf = PackageShelf(work / "packages", layers=args.layers)
            root = shelf.v2() if args.format == "v2" else shelf.v1()
            artifacts = artifact_count(root)
            repos = [f"bench/pkg-{i:03d}" for i in range(args.packages)]
            for repo in repos:
                hub.publish_dir(repo, root)
            catalog = work / "catalog"
            write_entry(catalog, "meshcert/tiny-llama", {"F16": variant(*repos)})
            _catalog(catalog, max(args.concurrency))  # warm-up: imports, worker processes
            rows: list[tuple[str, float, int]] = []
            seq = [_timed(hub, lambda: _one_by_one(repos)) for _ in range(args.rounds)]
            rows.append(("one by one", statistics.median(s[0] for s in seq), seq[0][1]))
            for n in args.concurrency:
                runs = [_timed(hub, functools.partial(_catalog, catalog, n))
                        for _ in range(args.rounds)]
                rows.append((f"catalog, concurrency {n}", statistics.median(r[0] for r in runs),
                             runs[0][1]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    base = rows[0][1]
    print(f"{args.packages} {args.format} packages, {args.layers} layers, {artifacts} artifacts "
          f"each; every request answered {args.latency_ms:g} ms late; median of {args.rounds}")
    print(f"{'mode':<26}{'wall':>9}{'round trips':>13}{'requests':>10}{'per package':>13}"
          f"{'speed-up':>10}")
    for name, seconds, requests in rows:
        print(f"{name:<26}{seconds:>8.2f}s{seconds / latency:>13.1f}{requests:>10}"
              f"{requests / args.packages:>13.1f}{base / seconds:>9.2f}x")


if __name__ == "__main__":
    main()
