"""Twenty-odd commands given bad input (missing files, bad flags, a Hub that does not answer,
an unreadable decision rules file ...) print exactly what they printed before the CLI's error
boundary was made one (issue 44: no behaviour change): stdout, stderr and the exit status of
each, run through the real entry point, are compared with the record in
tests/cli/snapshots/bad_inputs.txt.

Re-record after an intended change of a message or a status (and say why in the commit):
`PYTHONPATH=$PWD python3 -m tests.cli.test_bad_input_commands --record`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RECORD = ROOT / "tests" / "cli" / "snapshots" / "bad_inputs.txt"
# a port nothing listens on: every Hub call fails at once (connection refused)
NO_HUB = "http://127.0.0.1:9"

# (the arguments after `meshcert`, after any NAME=VALUE set in its environment; {t} is a fresh
# directory holding the files of _inputs)
COMMANDS: tuple[tuple[str, ...], ...] = (
    ("models", "certify", "{t}/missing", "--package-only"),
    ("models", "certify", "{t}/empty", "--no-such-flag"),
    ("models", "certify", "{t}/empty", "--package-only", "--report-out", "{t}/nodir/cert.json"),
    ("models", "inspect", "{t}/missing.gguf"),
    ("models", "inspect", "{t}/not.gguf"),
    ("report", "render", "{t}/not.json", "--md", "{t}/out.md"),
    ("report", "merge", "{t}/not.json", "{t}/missing.json"),
    ("report", "render", "{t}/missing.json"),
    ("report", "emit", "{t}/missing.json", "--tag", "x"),
    ("evidence", "ingest", "{t}/missing.log"),
    ("evidence", "gate", "{t}/not.json"),
    ("evidence", "report", "{t}/empty.log", "--decisions", "{t}/bad_rules.yaml",
     "--out-dir", "{t}/report"),
    ("evidence", "history", "{t}/missing.jsonl", "--gate"),
    ("evidence", "run", "--repeat", "0", "--out-dir", "{t}/run", "--", "true"),
    ("attest", "verify", "{t}/empty", "--attestation", "{t}/missing.intoto.jsonl",
     "--trusted-key", "{t}/missing.pub"),
    ("attest", "keygen", "--out", "{t}/not.json/key"),
    ("catalog", "certify", "{t}/missing-dir"),
    ("catalog", "certify", "hf://datasets/ns/name@main"),
    ("catalog", "recheck", "{t}/missing-dir", "--mesh-llm", "0.1.0"),
    ("package", "write", "{t}/missing.gguf", "--out-dir", "{t}/pkg", "--model-id", "ns/m:Q4"),
    ("package", "plan", "{t}/not.gguf", "--stages", "2"),
    ("package", "publish", "{t}/empty", "--target", "ns/repo"),
    ("package", "job", "ns/repo:Q4_K_M", "--target", "ns/out"),
    ("job", "status", "no-such-job"),
    ("HF_TOKEN=hf_not_a_token", "job", "status", "no-such-job"),
    ("job", "list"),
    ("demo", "--out", "{t}/not.json"),
    ("serve", "--config", "{t}/missing.toml"),
)


def _inputs(t: Path) -> None:
    (t / "empty").mkdir()
    (t / "not.json").write_text("hello, not JSON\n")
    (t / "not.gguf").write_bytes(b"NOTAGGUF" * 8)
    (t / "empty.log").write_text("")
    (t / "bad_rules.yaml").write_text("decisions: [unclosed\n")


def _environment(t: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items()
            if k in ("PATH", "LANG", "LC_ALL", "SYSTEMROOT", "TMPDIR")}
    # 1000 columns: no line is wrapped, so the length of the directory's path changes nothing
    return {**keep, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "COLUMNS": "1000",
            "HOME": str(t / "home"), "XDG_CACHE_HOME": str(t / "cache"),
            "HF_HOME": str(t / "hf"), "HF_ENDPOINT": NO_HUB, "HF_HUB_DISABLE_TELEMETRY": "1"}


def run_all(t: Path) -> str:
    """Each command's stdout, stderr and exit status, with `t` written as `{t}`."""
    _inputs(t)
    env = _environment(t)
    out = []
    for command in COMMANDS:
        settings = dict(arg.split("=", 1) for arg in command if "=" in arg and arg[0].isupper())
        argv = [arg.format(t=t) for arg in command if arg.split("=", 1)[0] not in settings]
        done = subprocess.run([sys.executable, "-m", "meshcert", *argv], capture_output=True,
                              text=True, env={**env, **settings}, cwd=t, timeout=300)
        out += [f"$ meshcert {' '.join(command)}", f"exit {done.returncode}",
                "--- stdout", done.stdout.rstrip("\n"), "--- stderr", done.stderr.rstrip("\n"), ""]
    return "\n".join(out).replace(str(t), "{t}")


def test_bad_inputs_print_what_they_printed(tmp_path: Path) -> None:
    assert run_all(tmp_path) == RECORD.read_text()


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        text = run_all(Path(tmp))
    if "--record" in sys.argv:
        RECORD.write_text(text)
    else:
        sys.stdout.write(text)
