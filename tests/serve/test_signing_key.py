"""The signing key never leaves the service: given as `env:NAME`, it is read once and taken
out of the environment, and the certification workers get it through their start pipe, so
neither their command line nor their environment (inherited by whatever they start) holds it."""

from __future__ import annotations

from pathlib import Path

import pytest

from meshcert.attest.keys import generate
from meshcert.serve.config import load_config
from meshcert.serve.hub_side import ServeHub
from meshcert.serve.service import open_service

KEY_ENV = "MESHCERT_SERVE_TEST_KEY"


def test_a_key_from_the_environment_is_in_no_worker_process_args_or_environment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pair = generate(tmp_path / "release")
    pem = pair.private_path.read_text()
    body = pem.splitlines()[1]  # the base64 of the key, as it would show in a dump
    config = tmp_path / "serve.toml"
    config.write_text(f'[signing]\nkey = "env:{KEY_ENV}"\n[attestations]\nrepo = "a/b"\n'
                      '[[watch]]\nrepo = "meshllm/*-layers"\n[budgets]\nmax_jobs = 1\n')
    monkeypatch.setenv(KEY_ENV, pem)
    monkeypatch.setenv("MESHCERT_WEBHOOK_SECRET", "s")
    service = open_service(load_config(config), hub=ServeHub())
    try:
        import os

        assert KEY_ENV not in os.environ
        pool = service.pool
        assert pool is not None
        for warm in pool._warm:  # noqa: SLF001  (the workers are up, their key loaded)
            warm.result(timeout=120)
        children = list(getattr(pool._pool, "_processes", {}))  # noqa: SLF001
        assert children
        for pid in children:
            for part in ("cmdline", "environ"):
                data = Path(f"/proc/{pid}/{part}").read_bytes()
                assert body.encode() not in data and KEY_ENV.encode() not in data, part
    finally:
        service.stop()
