"""`GET /status`: the queue, the tasks in flight, the last verdicts with links, the failures;
as JSON, and as one self-contained HTML page (inline CSS, no script, every value escaped)."""

from __future__ import annotations

import time
from html import escape
from typing import TYPE_CHECKING, Any

from meshcert.core.version import MESH_LLM_VERSION, __version__
from meshcert.serve.queue import DONE, FAILED, PENDING

if TYPE_CHECKING:
    from meshcert.serve.service import Service

CSS = ("body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}"
       "table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;"
       "padding:.2em .5em;text-align:left}.passed{color:#080}.failed{color:#b00}"
       ".incomplete{color:#a60}code{font-size:90%}")


def status_data(service: Service) -> dict[str, Any]:
    queue = service.queue
    return {
        "meshcert": __version__, "mesh_llm_rules": MESH_LLM_VERSION,
        "uptime_s": round(time.time() - service.started, 1),
        "attestation_repo": service.config.attestations.repo,
        "counts": queue.counts(),
        "running": [{"id": t.id, "kind": t.kind, "repo": t.repo, "ref": t.ref,
                     "attempt": t.attempts} for t in service.workers.running()],
        "pending": queue.tasks((PENDING,)),
        "failures": queue.tasks((FAILED,), limit=20),
        "done": queue.tasks((DONE,), limit=20),
        "verdicts": [{k: v.get(k) for k in ("repo", "commit", "status", "sentence", "hashing",
                                            "attestation_url", "finished_at")}
                     for v in queue.verdicts(limit=30)],
        "release_matrix": _matrix(service),
    }


def _matrix(service: Service) -> dict[str, Any] | None:
    """The release matrix file, when a recheck wrote one (None: none, or unreadable)."""
    from meshcert.serve.release_matrix import load_matrix

    path = service.config.path(service.config.recheck.matrix)
    if not path.is_file():
        return None
    try:
        return load_matrix(path)
    except ValueError:
        return None


def matrix_table(matrix: dict[str, Any] | None) -> str:
    from meshcert.serve.release_matrix import release_order

    if not matrix or not matrix["releases"]:
        return "<p>no recheck yet</p>"
    releases = release_order(matrix)
    packages = sorted({p for r in releases for p in matrix["releases"][r]["packages"]})
    rows = []
    for package in packages:
        row = [f"<code>{escape(package)}</code>"]
        for release in releases:
            got = matrix["releases"][release]["packages"].get(package)
            if got is None:
                row.append("")
            elif got["verdict"] == "refused":
                row.append('<span class="failed">refused: ' + escape(
                    ", ".join(got["codes"])) + "</span>")
            else:
                cls = "passed" if got["verdict"] == "loads" else "incomplete"
                row.append(f'<span class="{cls}">{escape(str(got["verdict"]))}</span>')
        rows.append(row)
    return _table(["package", *(f"mesh-llm {r}" for r in releases)], rows)


def _table(headers: list[str], rows: list[list[str]]) -> str:
    if not rows:
        return "<p>none</p>"
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>"
                   for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _link(url: object) -> str:
    text = str(url or "")
    if not text.startswith(("http://", "https://")):
        return ""
    return f'<a href="{escape(text)}">attestation</a>'


def render_status(data: dict[str, Any]) -> str:
    counts = data["counts"]
    summary = _table(list(counts), [[escape(str(v)) for v in counts.values()]])
    running = _table(["task", "kind", "repo", "ref", "attempt"], [
        [escape(str(t[k])) for k in ("id", "kind", "repo", "ref", "attempt")]
        for t in data["running"]])
    pending = _table(["task", "kind", "repo", "ref"], [
        [escape(str(t[k])) for k in ("id", "kind", "repo", "ref")] for t in data["pending"]])
    verdicts = _table(["repo", "commit", "verdict", "signed"], [
        [escape(str(v["repo"])), f"<code>{escape(str(v['commit']))}</code>",
         f'<span class="{escape(str(v["status"]))}">{escape(str(v["sentence"]))}</span>',
         _link(v.get("attestation_url"))] for v in data["verdicts"]])
    failures = _table(["task", "kind", "repo", "ref", "why"], [
        [escape(str(t[k])) for k in ("id", "kind", "repo", "ref", "detail")]
        for t in data["failures"]])
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        "<title>meshcert serve: status</title>"
        f"<style>{CSS}</style></head><body><h1>meshcert serve</h1>"
        f"<p>meshcert {escape(data['meshcert'])}, rules of mesh-llm "
        f"{escape(data['mesh_llm_rules'])}; attestations in "
        f"<code>{escape(data['attestation_repo'])}</code>; up {data['uptime_s']} s</p>"
        f"<h2>Queue</h2>{summary}<h2>Running</h2>{running}<h2>Pending</h2>{pending}"
        f"<h2>Last verdicts</h2>{verdicts}<h2>Failures</h2>{failures}"
        f"<h2>Release matrix</h2>{matrix_table(data.get('release_matrix'))}</body></html>\n")
