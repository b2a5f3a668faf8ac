"""`meshcert serve` on the in-repo Hub, for the tests and the bench: a fake Hub with the
service's bot account, an attestation dataset, a signing key and a serve.toml; the service run
under uvicorn on 127.0.0.1 (in a thread, or as a `meshcert serve` subprocess), and the Hub's
webhook pointed at it.

    rig = ServeRig(hub, tmp_path)
    rig.write_config(watch=["meshllm/*-layers"], catalogs=["meshllm/catalog"])
    with rig.running():
        rig.hook()                      # the Hub's webhook -> the service
        hub.publish_dir("meshllm/x-layers", root)
        rig.settle()                    # deliveries answered, queue empty
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from meshcert.attest.keys import KeyPair, generate
from tests.support.hub_server import FakeHub
from tests.support.hub_webhooks import Webhook

SECRET = "s3cret-webhook-value"
BOT_TOKEN, BOT = "hf_meshcert_bot", "meshcert-bot"
MAINTAINER_TOKEN, MAINTAINER = "hf_maintainer", "maintainer"
CONTRIBUTOR_TOKEN, CONTRIBUTOR = "hf_contributor", "contributor"
ATTESTATIONS = "meshllm/meshcert-attestations"
ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LogCollector(logging.Handler):
    """Every log line of the process but the test's own HTTP client's, formatted (to look for
    secrets in them)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.threadName == "MainThread" and record.name.startswith(("httpx", "httpcore")):
            return  # the test's own client, which sent the secret on purpose
        self.lines.append(self.format(record))

    def text(self) -> str:
        return "\n".join(self.lines)


class ServeRig:
    def __init__(self, hub: FakeHub, base: Path) -> None:
        self.hub = hub
        self.base = base
        self.port = free_port()
        base.mkdir(parents=True, exist_ok=True)
        hub.add_token(BOT_TOKEN, user=BOT, orgs={"meshllm": "write"})
        hub.add_token(MAINTAINER_TOKEN, user=MAINTAINER, orgs={"meshllm": "write"})
        hub.add_token(CONTRIBUTOR_TOKEN, user=CONTRIBUTOR)
        hub.create_repo(ATTESTATIONS, repo_type="dataset")
        hub.commit(ATTESTATIONS, {"README.md": b"# attestations\n"}, repo_type="dataset")
        self.key: KeyPair = generate(base / "release")
        self.config = base / "serve.toml"
        self.webhook: Webhook | None = None
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def write_config(self, *, watch: list[str], catalogs: tuple[str, ...] = (),
                     budgets: dict[str, Any] | None = None, extra: str = "") -> Path:
        lines = ["[webhook]", 'secret_env = "MESHCERT_WEBHOOK_SECRET"', "[state]",
                 'dir = "state"', "[signing]", 'key = "release.key"', "[attestations]",
                 f'repo = "{ATTESTATIONS}"']
        lines += [f'[[watch]]\nrepo = "{w}"' for w in watch]
        lines += [f'[[catalog]]\nrepo = "{c}"' for c in catalogs]
        budget = {"retry_s": 0.2, "lease_s": 30.0, "drain_s": 2.0} | (budgets or {})
        lines += ["[budgets]", *(f"{k} = {json.dumps(v)}" for k, v in budget.items())]
        self.config.write_text("\n".join(lines) + "\n" + extra)
        return self.config

    def env(self) -> dict[str, str]:
        return {"MESHCERT_WEBHOOK_SECRET": SECRET, "HF_TOKEN": BOT_TOKEN,
                "HF_ENDPOINT": self.hub.url}

    # --- in this process ------------------------------------------------------------------
    @contextlib.contextmanager
    def running(self) -> Iterator[ServeRig]:
        """The service under uvicorn in a thread of this process (env from `env()`)."""
        import uvicorn

        from meshcert.serve.app import build_app
        from meshcert.serve.config import load_config
        from meshcert.serve.service import open_service

        saved = {k: os.environ.get(k) for k in self.env()}
        os.environ.update(self.env())
        try:
            service = open_service(load_config(self.config))
            config = uvicorn.Config(build_app(service), host="127.0.0.1", port=self.port,
                                    access_log=False, log_level="warning", lifespan="on")
            self._server = uvicorn.Server(config)
            self._thread = threading.Thread(target=self._server.run, daemon=True)
            self._thread.start()
            self.wait_up()
            yield self
        finally:
            if self._server is not None:
                self._server.should_exit = True
            if self._thread is not None:
                self._thread.join(30)
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    # --- as a subprocess ------------------------------------------------------------------
    def spawn(self, log: Path) -> subprocess.Popen[bytes]:
        """`python -m meshcert serve --config ... --port ...` with this rig's environment."""
        path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
        env = {**os.environ, **self.env(), "PYTHONPATH": path,
               "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HOME": str(self.base / "hf-home")}
        handle = open(log, "ab")  # noqa: SIM115 (the child writes to it)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "meshcert", "serve", "--config", str(self.config),
             "--port", str(self.port)], env=env, stdout=handle, stderr=subprocess.STDOUT)
        handle.close()
        self.wait_up()
        return self.process

    def wait_up(self, timeout_s: float = 60.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"meshcert serve exited with {self.process.returncode}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return
            threading.Event().wait(0.1)
        raise TimeoutError("meshcert serve did not come up")

    # --- the Hub's side ---------------------------------------------------------------------
    def hook(self, watched: list[dict[str, str]] | None = None) -> Webhook:
        """The Hub's webhook to the service: the meshllm org, repo and discussion events."""
        self.webhook = self.hub.webhooks.create(
            f"{self.url}/webhook", secret=SECRET,
            watched=watched or [{"type": "org", "name": "meshllm"}])
        return self.webhook

    def status(self) -> dict[str, Any]:
        data: dict[str, Any] = httpx.get(f"{self.url}/status?format=json", timeout=10).json()
        return data

    def settle(self, timeout_s: float = 240.0) -> dict[str, Any]:
        """Every delivery answered and no task pending or running; the last status."""
        assert self.hub.webhooks.wait_idle(timeout_s)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            status = self.status()
            counts = status["counts"]
            if counts["pending"] == 0 and counts["running"] == 0:
                return status
            threading.Event().wait(0.1)
        raise TimeoutError(f"the queue did not empty: {self.status()['counts']}")

    def attestation_files(self) -> dict[str, bytes]:
        repo = self.hub.get_repo(ATTESTATIONS, "dataset")
        assert repo is not None
        head = repo.commits[repo.branches["main"]]
        return {p: self.hub.blobs[f.key] for p, f in head.files.items()
                if p.endswith(".intoto.jsonl")}

    def attestation_commits(self) -> int:
        return len(self.hub.all_commits(ATTESTATIONS, "dataset"))
