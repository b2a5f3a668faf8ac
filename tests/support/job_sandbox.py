"""Start one fake-Hub job: run under `unshare --mount --propagation private` (so every mount
made here is private to the job and vanishes with it), build a root that shows the host's
top-level directories, mount each volume read-only at its path, chroot there and exec the
job's command with the environment this process was given.

Only the standard library: the fake Hub runs it as a script with its own interpreter.

    unshare --mount --propagation private python job_sandbox.py '{"root": ..., "mounts":
        [{"source": "/tmp/.../vol0", "target": "/source"}], "cwd": ..., "argv": [...]}'

A mount path whose top-level directory does not exist on the host (`/source`, `/data`) is
created inside the job's root only; one inside an existing host directory must already exist
there (creating it would change the host), else the job stops with status 125.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

REFUSED = 125


def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True)


def _refuse(message: str) -> None:
    print(f"job sandbox: {message}", file=sys.stderr, flush=True)
    sys.exit(REFUSED)


def build_root(root: str) -> None:
    os.makedirs(root, exist_ok=True)
    _mount("-t", "tmpfs", "-o", "mode=755", "job-root", root)
    # the host's /tmp (which holds `root`) is bound into the root below: an unbindable root
    # is left out of that copy instead of being copied into itself
    _mount("--make-unbindable", root)
    for name in sorted(os.listdir("/")):
        host, inside = "/" + name, os.path.join(root, name)
        if os.path.islink(host):
            os.symlink(os.readlink(host), inside)
        elif os.path.isdir(host):
            os.mkdir(inside)
            _mount("--rbind", host, inside)


def mount_volume(root: str, source: str, target: str) -> None:
    clean = os.path.normpath(target)
    if not clean.startswith("/") or clean == "/":
        _refuse(f"mount path {target!r} must be an absolute path below /")
    top = "/" + clean.strip("/").split("/")[0]
    if os.path.lexists(top) and not os.path.isdir(clean):
        _refuse(f"cannot mount at {clean}: {top} exists on this machine and {clean} does not "
                "(the fake Hub never creates directories on the host)")
    inside = root + clean
    os.makedirs(inside, exist_ok=True)
    _mount("--bind", source, inside)
    _mount("-o", "remount,bind,ro", inside)


def main(argv: list[str]) -> None:
    spec = json.loads(argv[1])
    root = spec["root"]
    try:
        build_root(root)
        for volume in spec["mounts"]:
            mount_volume(root, volume["source"], volume["target"])
    except (OSError, subprocess.CalledProcessError) as exc:
        _refuse(f"could not prepare the job's mounts: {exc}")
    os.chroot(root)
    os.chdir(spec["cwd"])
    command = spec["argv"]
    try:
        os.execvpe(command[0], command, dict(os.environ))
    except OSError as exc:
        print(f"job sandbox: cannot run {command[0]!r}: {exc}", file=sys.stderr, flush=True)
        sys.exit(127)


if __name__ == "__main__":
    main(sys.argv)
