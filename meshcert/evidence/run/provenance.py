"""Where a run's numbers came from: the binary (path, sha256), its version line, the host.

The version line: llama.cpp's `llama-*` tools answer `--version` with `version: N (commit)` and
`built with ...`; they are asked once per binary. Any other command is never run with an
argument it was not given (a script might ignore it and run the whole benchmark): its version
is the first `version:` / `build:` line its own output printed, if any.
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

_VERSION_LINE = re.compile(r"^\s*(?:[\d.:]+ [IWE] )?((?:version|build)\s*[:=]\s*\S.*?)\s*$",
                           re.MULTILINE)
_SECRET_NAME = re.compile(r"(?i)(token|secret|passw|api_?key|credential|auth)")
MASK = "***"
_PROBE_TIMEOUT_S = 30.0


def host() -> str:
    return platform.node() or "unknown"


def redact_env(env: Mapping[str, str]) -> dict[str, str]:
    """A variant's environment for the record: values of secret-looking names masked."""
    return {k: (MASK if _SECRET_NAME.search(k) else v) for k, v in env.items()}


def is_llama_tool(binary: str) -> bool:
    return Path(binary).name.startswith("llama-")


def version_in(text: str) -> str | None:
    """The first version/build line a tool printed (log prefixes such as `0.00.001 I ` off)."""
    match = _VERSION_LINE.search(text)
    return match.group(1) if match else None


@dataclass
class BinaryInfo:
    path: str | None  # resolved path; None when the command is not found
    sha256: str | None
    version: str | None


@dataclass
class Provenance:
    """Caches per binary (a sweep runs the same binary dozens of times)."""

    _binaries: dict[tuple[str, str], BinaryInfo] = field(default_factory=dict)

    def binary(self, command: str, env: Mapping[str, str], cwd: str | None) -> BinaryInfo:
        path = _resolve(command, env, cwd)
        key = (command, path or "")
        if key not in self._binaries:
            digest = _sha256(path) if path else None
            version = _probe_version(path, env) if path and is_llama_tool(path) else None
            self._binaries[key] = BinaryInfo(path, digest, version)
        return self._binaries[key]


def _resolve(command: str, env: Mapping[str, str], cwd: str | None) -> str | None:
    if os.sep in command or (os.altsep and os.altsep in command):
        candidate = Path(cwd or ".", command) if not os.path.isabs(command) else Path(command)
        return str(candidate.resolve()) if candidate.is_file() else None
    found = shutil.which(command, path=env.get("PATH"))
    return str(Path(found).resolve()) if found else None


def _sha256(path: str) -> str | None:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()


def _probe_version(path: str, env: Mapping[str, str]) -> str | None:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, timeout=_PROBE_TIMEOUT_S,
                             env=dict(env), stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout + out.stderr).decode("utf-8", errors="replace")
    lines = [line.strip() for line in text.splitlines()
             if line.strip().startswith(("version:", "built with"))]
    return "; ".join(lines) or None
