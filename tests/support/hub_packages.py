"""Helpers for hf:// tests: real packages to publish on the fake Hub, and certifying refs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from meshcert.certify.report import CertReport
from meshcert.certify.service import CertRequest, certify_package
from meshcert.certify.view import CertOptions
from meshcert.testing import PackageInfo, llama_spec, write_package

REPO = "meshcert/tiny-llama-layers"


def certify_ref(ref: str, **options: Any) -> CertReport:
    """Certify package-only in process; hf:// refs default to Hub-attested hashes (as the CLI)."""
    options.setdefault("verify_sha256", False)
    return certify_package(CertRequest(model=ref, options=CertOptions(**options)))


def build_package(base: Path, name: str = "pkg", *, layers: int = 4, n_embd: int = 64,
                  n_ff: int = 128, **kwargs: Any) -> PackageInfo:
    """A real llama-style package; bigger n_embd/n_ff make tensors dominate the file sizes."""
    spec = llama_spec(block_count=layers, n_embd=n_embd, n_ff=n_ff)
    return write_package(spec, base / name, **kwargs)


def finding_keys(report: CertReport) -> list[tuple[str, str, str | None, int | None]]:
    """What two certifications of the same package must agree on (messages may differ).
    llama.cpp's second opinion needs whole local files, so only local packages get it."""
    return sorted((f.code, f.severity, f.path, f.layer_index) for f in report.findings
                  if f.code not in LOCAL_ONLY_CODES)


LOCAL_ONLY_CODES = frozenset({"llama_cpp_gguf_rejected"})
