"""A poisoned `--verify-cache` never passes, and never signs, bytes nobody hashed (issue 41).

The attack: certify with a cache, flip one byte of a layer, then edit the cache so its entry
matches the tampered file's new stat. Each way of forging the cache (an edited entry, entries
copied between files or packages, a file that is not a cache) is re-hashed and the change is
found; a user holding the cache key can forge entries, so a signed certification reads no cache
at all and a report with cache hits is never signed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from meshcert.certify.report import CertReport
from meshcert.cli import app
from meshcert.core.verify_cache import FORMAT, VerifyCache
from tests.conftest import PackageFactory, certify_dir, codes
from tests.support.attestations import flip_last_byte

runner = CliRunner()
LAYER = "layers/layer-001.gguf"


def cached_then_tampered(packages: PackageFactory, tmp_path: Path) -> tuple[Path, Path]:
    """A package certified once with a cache (every digest in it), then one layer flipped."""
    root = packages.build("llama").root
    cache = tmp_path / "digests.json"
    assert certify_dir(root, verify_cache=str(cache)).status == "passed"
    flip_last_byte(root / LAYER)
    return root, cache


def cache_entries(cache: Path) -> dict[str, list[str]]:
    return dict(json.loads(cache.read_text())["entries"])


def save_entries(cache: Path, entries: dict[str, list[str]]) -> None:
    cache.write_text(json.dumps({"format": FORMAT, "entries": entries}))


def entry_of(entries: dict[str, list[str]], file: Path) -> str:
    return next(n for n in entries if json.loads(n)[1] == str(file.resolve()))


def rekeyed(name: str, file: Path, package: str | None = None) -> str:
    """The entry name `name`, moved to `file` as it is now (and to `package`)."""
    fields = json.loads(name)
    st = file.stat()
    fields[1:] = [str(file.resolve()), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
    if package is not None:
        fields[0] = package
    return json.dumps(fields)


def assert_found(report: CertReport) -> None:
    assert report.status == "failed"
    hit = next(f for f in report.findings if f.code == "artifact_sha256_mismatch")
    assert hit.path == LAYER and "verification cache" not in hit.message
    assert report.cache_hits < len(report.digests)


def test_an_entry_edited_to_the_tampered_files_new_stat_is_rehashed(
        packages: PackageFactory, tmp_path: Path) -> None:
    root, cache = cached_then_tampered(packages, tmp_path)
    entries = cache_entries(cache)
    old = entry_of(entries, root / LAYER)
    entries[rekeyed(old, root / LAYER)] = entries.pop(old)
    save_entries(cache, entries)
    report = certify_dir(root, verify_cache=str(cache))
    assert_found(report)
    assert "verify_cache_rejected" in codes(report)
    assert report.cache_hits == len(report.digests) - 1  # the untouched files still hit


def test_entries_copied_from_a_copy_of_the_package_are_rehashed(
        packages: PackageFactory, tmp_path: Path) -> None:
    """Two copies of one package: the first one's (valid) entries renamed to the second's
    files, whose layer was tampered with."""
    import shutil

    first = packages.build("llama").root
    second = tmp_path / "copy"
    shutil.copytree(first, second)
    cache = tmp_path / "digests.json"
    certify_dir(first, verify_cache=str(cache))
    flip_last_byte(second / LAYER)
    entries = cache_entries(cache)
    for name in list(entries):
        rel = Path(json.loads(name)[1]).relative_to(first.resolve())
        entries[rekeyed(name, second / rel)] = entries[name]
    save_entries(cache, entries)
    report = certify_dir(second, verify_cache=str(cache))
    assert_found(report)
    assert report.cache_hits == 0 and "verify_cache_rejected" in codes(report)


def test_another_packages_cache_is_never_used(packages: PackageFactory, tmp_path: Path) -> None:
    other, _ = cached_then_tampered(packages, tmp_path)  # its cache holds every digest
    root = packages.build("llama").root
    cache = tmp_path / "digests.json"
    flip_last_byte(root / LAYER)
    report = certify_dir(root, verify_cache=str(cache))
    assert_found(report)
    assert report.cache_hits == 0 and "verify_cache_rejected" not in codes(report)
    # renamed to this package and its files, the other package's entries fail their MAC
    package = json.loads(next(iter(cache_entries(cache))))[0]
    entries = {rekeyed(n, root / Path(json.loads(n)[1]).relative_to(other.resolve()),
                       package): v
               for n, v in cache_entries(cache).items()
               if Path(json.loads(n)[1]).is_relative_to(other.resolve())}
    save_entries(cache, entries)
    again = certify_dir(root, verify_cache=str(cache))
    assert_found(again)
    assert again.cache_hits == 0 and "verify_cache_rejected" in codes(again)


@pytest.mark.parametrize("text", ["{not json", "[]", '{"x": "y"}'])
def test_a_cache_that_is_not_one_is_a_warning_and_every_file_hashed(
        packages: PackageFactory, tmp_path: Path, text: str) -> None:
    root = packages.build("llama").root
    flip_last_byte(root / LAYER)
    cache = tmp_path / "digests.json"
    cache.write_text(text)
    report = certify_dir(root, verify_cache=str(cache))
    assert_found(report)
    warning = next(f for f in report.findings if f.code == "verify_cache_rejected")
    assert warning.severity == "warning" and str(cache) in warning.message


# --- signing: only bytes hashed in this run --------------------------------------------------

def run(*args: str) -> Result:
    return runner.invoke(app, list(args))


@pytest.fixture
def key(tmp_path: Path) -> Path:
    assert run("attest", "keygen", "--out", str(tmp_path / "signer")).exit_code == 0
    return tmp_path / "signer"


def forged_by_the_key_holder(root: Path, cache: Path) -> None:
    """What the MAC cannot stop: whoever can read the key file writes entries that verify
    (here, the tampered layer's old digest under its new stat)."""
    package = json.loads(next(iter(cache_entries(cache))))[0]
    old = entry_of(cache_entries(cache), root / LAYER)
    forged = VerifyCache(str(cache), package=package)
    forged.put(str(root / LAYER), cache_entries(cache)[old][0])
    forged.save()


def test_a_cache_forged_with_the_key_passes_unsigned_but_signs_nothing_passed(
        packages: PackageFactory, key: Path, tmp_path: Path) -> None:
    root, cache = cached_then_tampered(packages, tmp_path)
    forged_by_the_key_holder(root, cache)
    fooled = certify_dir(root, verify_cache=str(cache))
    assert fooled.status == "passed" and fooled.cache_hits == len(fooled.digests)
    out = tmp_path / "cert.json"
    result = run("models", "certify", str(root), "--package-only", "--verify-cache", str(cache),
                 "--report-out", str(out), "--attest-key", f"{key}.key")
    assert "--verify-cache is written, not read" in result.output
    assert result.exit_code == 1, result.output
    report = CertReport.model_validate_json(out.read_text())
    assert report.cache_hits == 0
    assert "artifact_sha256_mismatch" in codes(report)
    assert report.attestation is not None and report.attestation.result == "FAILED"
    signed = (tmp_path / "cert.intoto.jsonl").read_text()
    assert signed.count("\n") == 1 and "PASSED" not in result.output


def test_a_report_with_cache_hits_is_never_signed(packages: PackageFactory,
                                                  tmp_path: Path) -> None:
    from meshcert.attest.keys import generate, load_private_spec
    from meshcert.attest.sign import sign_report

    root = packages.build("llama").root
    cache = tmp_path / "digests.json"
    certify_dir(root, verify_cache=str(cache))
    report = certify_dir(root, verify_cache=str(cache))
    assert report.status == "passed" and report.cache_hits > 0
    pair = generate(str(tmp_path / "k"))
    why = sign_report(report, load_private_spec(str(pair.private_path)), str(tmp_path / "a.jsonl"))
    assert why == (f"{report.cache_hits} of {len(report.digests)} artifact digest(s) came from "
                   "the --verify-cache, not hashed in this run: certify again without it (a "
                   "signed certification hashes every artifact itself)")


@pytest.mark.slow
def test_on_the_real_smollm2_package_a_poisoned_cache_signs_nothing_passed(
        key: Path, tmp_path: Path) -> None:
    """Issue 41 as a reviewer tried it: SmolLM2 split into a v2 package, certified with a
    cache, one byte of a layer flipped, the cache entry moved to the file's new stat."""
    from tests.support.real_models import smollm2_path
    from tests.support.splits import split_v2

    package = split_v2(smollm2_path(), tmp_path / "smol", model_id="HuggingFaceTB/"
                       "SmolLM2-135M-Instruct-GGUF:Q4_1")
    root, cache = package.root, tmp_path / "digests.json"
    assert certify_dir(root, verify_cache=str(cache)).status == "passed"
    layer = root / next(p for p in package.files if p.startswith("layers/"))
    flip_last_byte(layer)
    entries = cache_entries(cache)
    old = entry_of(entries, layer)
    entries[rekeyed(old, layer)] = entries.pop(old)
    save_entries(cache, entries)
    poisoned = tmp_path / "poisoned-copy.json"
    poisoned.write_text(cache.read_text())
    out = tmp_path / "cert.json"
    result = run("models", "certify", str(root), "--package-only", "--verify-cache", str(cache),
                 "--report-out", str(out), "--attest-key", f"{key}.key")
    assert result.exit_code == 1, result.output
    report = CertReport.model_validate_json(out.read_text())
    assert "artifact_sha256_mismatch" in codes(report) and report.cache_hits == 0
    assert report.attestation is not None and report.attestation.result == "FAILED"
    unsigned = certify_dir(root, verify_cache=str(poisoned))  # unsigned: the MAC catches it
    assert unsigned.status == "failed" and "verify_cache_rejected" in codes(unsigned)
