"""Verifying a signed certification vs certifying again, side by side in one run.

1. A local package of `--layers` layers (94 by default, a large model's layer count):
   `models certify --package-only` of it (in process: hash every artifact, read every header,
   run every check) vs `attest verify` of its attestation (hash every artifact, compare with
   the signed subjects, no header). The same package published on the test suite's fake Hub
   (in a child process, every request answered `--latency-ms` late): certify hf:// (Hub-attested
   hashes, a header range read per artifact) vs `attest verify hf://` (the listing, the
   manifest and the attestation: 3 requests, no byte of any artifact). Goal: verify < 2% of
   certify's time for hf://. Then a v2 package with all five publisher files (plain git on the
   Hub): `attest verify hf://` requests with its attestation (gitBlob subjects, matched from the
   listing) vs the same statement signed without gitBlob (as before it: each file downloaded).
   Goal: <= 3 requests.
2. A catalog of `--packages` attested packages, pinned at the commits that carry their
   attestations: plain `catalog certify` vs `catalog certify --trust FILE --trust-attested`,
   Hub requests per package counted by the fake Hub. Goal: <= 3 requests per attested package.

    python bench/attest_verify.py
    python bench/attest_verify.py --layers 94 --packages 25 --latency-ms 20 --rounds 3

Nothing leaves 127.0.0.1. Request counts are deterministic; times are indicative (median of
--rounds after a warm-up).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests.support package
sys.path.insert(0, str(Path(__file__).resolve().parent))  # remote_certify's HubProcess

from remote_certify import HubProcess  # noqa: E402  (prepares the Hub environment first)

from meshcert.attest.catalog_trust import CatalogTrust  # noqa: E402
from meshcert.attest.keys import KeyPair, generate, load_private, load_public  # noqa: E402
from meshcert.attest.package_state import ATTESTATION_PATH  # noqa: E402
from meshcert.attest.sign import sign_report, write_attestation  # noqa: E402
from meshcert.attest.trust import TrustPolicy  # noqa: E402
from meshcert.attest.verify import verify_ref  # noqa: E402
from meshcert.catalog.run import CatalogRequest, certify_catalog  # noqa: E402
from meshcert.catalog.sources import LocalCatalog  # noqa: E402
from tests.certify.publisher_packages import build_published, five_publisher_files  # noqa: E402
from tests.support.attestations import certify, edit_statement  # noqa: E402
from tests.support.catalog_packages import PackageShelf, package_ref, variant, write_entry
from tests.support.hub_packages import build_package  # noqa: E402


def median_time(action: Callable[[], Any], rounds: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(rounds):
        started = time.perf_counter()
        result = action()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def sign_to(ref: str, key_path: Path, out: Path) -> None:
    signed = sign_report(certify(ref), load_private(key_path), str(out))
    assert not isinstance(signed, str), signed
    write_attestation(str(out), [signed.envelope])


def with_attestation(root: Path, attestation: Path, into: Path) -> Path:
    """A copy of the package plus attestations/meshcert.intoto.jsonl (what a publish commits
    on top: the artifacts unchanged)."""
    shutil.copytree(root, into)
    (into / "attestations").mkdir()
    shutil.copy(attestation, into / ATTESTATION_PATH)
    return into


def verify_vs_certify(work: Path, hub: HubProcess, layers: int, rounds: int,
                      policy: TrustPolicy, key: Path) -> list[tuple[str, float, float, int, int]]:
    root = build_package(work, "big", layers=layers).root
    local_att = work / "big.intoto.jsonl"
    sign_to(str(root), key, local_att)
    certify(str(root))  # warm-up: imports, worker processes
    local_certify, report = median_time(lambda: certify(str(root)), rounds)
    assert report.status == "passed", report.status
    local_verify, verdict = median_time(lambda: verify_ref(str(root), str(local_att), policy),
                                        rounds)
    assert verdict.valid, verdict.findings
    repo = "bench/big"
    first = hub.publish_dir(repo, root)
    remote_att = work / "big-hf.intoto.jsonl"
    sign_to(f"hf://{repo}@{first}", key, remote_att)
    later = hub.publish_dir(repo, with_attestation(root, remote_att, work / "big-attested"))
    ref = f"hf://{repo}@{later}"
    hub.reset_counters()
    hf_certify, report = median_time(lambda: certify(ref), rounds)
    certify_requests = hub.count() // rounds
    assert report.status == "passed", [f.code for f in report.findings]
    hub.reset_counters()
    hf_verify, verdict = median_time(lambda: verify_ref(ref, None, policy), rounds)
    verify_requests = hub.count() // rounds
    assert verdict.valid, verdict.findings
    return [("local", local_certify, local_verify, 0, 0),
            ("hf://", hf_certify, hf_verify, certify_requests, verify_requests)]


def publisher_requests(work: Path, hub: HubProcess, policy: TrustPolicy, key: KeyPair
                       ) -> tuple[int, int]:
    """`attest verify hf://` requests of a package with five publisher files: (its attestation
    with gitBlob subjects, the same statement signed without gitBlob)."""
    root = build_published(work / "publisher", five_publisher_files()).root
    repo = "bench/publisher"
    first = hub.publish_dir(repo, root)
    att = work / "publisher.intoto.jsonl"
    sign_to(f"hf://{repo}@{first}", key.private_path, att)
    old = work / "publisher-old.intoto.jsonl"
    shutil.copy(att, old)

    def drop_git_blobs(statement: dict[str, Any]) -> None:
        for subject in statement["subject"]:
            subject["digest"].pop("gitBlob", None)

    edit_statement(old, drop_git_blobs, key)
    counts = []
    for name, attestation in (("new", att), ("old", old)):
        later = hub.publish_dir(repo, with_attestation(root, attestation,
                                                       work / f"publisher-{name}"))
        hub.reset_counters()
        verdict = verify_ref(f"hf://{repo}@{later}", None, policy)
        assert verdict.valid, verdict.findings
        counts.append(hub.count())
    return counts[0], counts[1]


def catalog_rows(work: Path, hub: HubProcess, packages: int, policy: TrustPolicy, key: Path
                 ) -> tuple[int, int, int]:
    shelf = PackageShelf(work / "shelf")
    root = shelf.v2()
    refs = []
    for i in range(packages):
        repo = f"bench/attested-{i:03d}"
        first = hub.publish_dir(repo, root)
        att = work / f"att-{i:03d}.intoto.jsonl"
        sign_to(f"hf://{repo}@{first}", key, att)
        later = hub.publish_dir(repo, with_attestation(root, att, work / f"attested-{i:03d}"))
        refs.append(package_ref(repo, revision=later))
    catalog = work / "catalog"
    write_entry(catalog, "meshcert/tiny-llama", {"F16": variant(*refs)})
    hub.reset_counters()
    plain = certify_catalog(LocalCatalog(catalog), CatalogRequest()).report
    plain_requests = hub.count()
    hub.reset_counters()
    trusted = certify_catalog(LocalCatalog(catalog), CatalogRequest(
        attestation=CatalogTrust(policy, trust_attested=True))).report
    trusted_requests = hub.count()
    attested = sum(r.attested_only for r in trusted.packages)
    assert plain.status == "passed" and trusted.status == "passed"
    return plain_requests, trusted_requests, attested


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=94)
    parser.add_argument("--packages", type=int, default=25)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="meshcert-bench-attest-"))
    try:
        with HubProcess(args.latency_ms / 1000) as hub:
            os.environ["HF_ENDPOINT"] = hub.url
            pair = generate(work / "signer")
            policy = TrustPolicy.of_keys([load_public(pair.key_id)])
            rows = verify_vs_certify(work, hub, args.layers, args.rounds, policy,
                                     pair.private_path)
            with_blobs, without_blobs = publisher_requests(work, hub, policy, pair)
            plain, trusted, attested = catalog_rows(work, hub, args.packages, policy,
                                                    pair.private_path)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"1. a {args.layers}-layer package; every Hub request answered {args.latency_ms:g} ms "
          f"late; median of {args.rounds}")
    print(f"{'package':<8}{'certify':>11}{'verify':>11}{'verify/certify':>16}"
          f"{'requests':>18}")
    for name, certify_s, verify_s, cert_req, verify_req in rows:
        requests = f"{cert_req} -> {verify_req}" if cert_req else "-"
        print(f"{name:<8}{certify_s:>10.3f}s{verify_s:>10.3f}s{verify_s / certify_s:>15.1%}"
              f"{requests:>18}")
    print(f"   five publisher files (plain git): attest verify hf:// {with_blobs} requests "
          f"(gitBlob subjects); {without_blobs} with an attestation without gitBlob")
    print(f"2. a catalog of {args.packages} attested packages (pinned at the attestation's "
          "commit)")
    print(f"{'mode':<34}{'requests':>10}{'per package':>13}")
    print(f"{'catalog certify':<34}{plain:>10}{plain / args.packages:>13.1f}")
    print(f"{'catalog certify --trust-attested':<34}{trusted:>10}"
          f"{trusted / args.packages:>13.1f}   ({attested} accepted by attestation)")


if __name__ == "__main__":
    main()
