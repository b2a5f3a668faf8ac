"""What a job runs: a stock Python image, meshcert installed with pip (no compiler, no clone),
then one meshcert command whose report comes back through the logs.

The command is one `sh -c` script built with shlex quoting from data, never from text a user
typed into a shell. The token is never on the command line: it reaches the job as the secret
HF_TOKEN, which huggingface_hub reads itself.
"""

from __future__ import annotations

import shlex

from meshcert.core.version import __version__

IMAGE = "python:3.12-slim"
PACKAGE_MOUNT = "/package"
SOURCE_MOUNT = "/source"
# a job has its own /tmp on the Hub; $$ keeps jobs that share a host's /tmp apart too
REPORT_FILE = '"${TMPDIR:-/tmp}/meshcert-report-$$.json"'
WORK_DIR = '"${TMPDIR:-/tmp}/meshcert-work-$$"'
WORK = "\0work\0"  # in meshcert_args: stands for the job's own scratch directory
# in meshcert_args: stands for a file the script writes from GENERATION_DEFAULTS_ENV (the
# content of a local --generation-defaults file, passed as a plain env value: it is no secret)
GENERATION_DEFAULTS = "\0generation-defaults\0"
GENERATION_DEFAULTS_ENV = "GENERATION_DEFAULTS_JSON"  # the name mesh-llm's job script reads
GENERATION_DEFAULTS_FILE = '"${TMPDIR:-/tmp}/meshcert-generation-defaults-$$.json"'
INSTALL_FAILED = 90  # exit statuses the launcher can tell from meshcert's own (0-3)
EMIT_FAILED = 91
DEFAULTS_FAILED = 92  # the generation defaults file could not be written
# inside a job Xet uploads have failed (mesh-llm sets this too): meshcert publishes over LFS only
# (meshcert/publish/hub_writer.py), and the variable also keeps huggingface_hub's downloads off it
JOB_ENV = {"HF_HUB_DISABLE_XET": "1", "HF_HUB_DISABLE_TELEMETRY": "1",
           "PYTHONUNBUFFERED": "1"}


def default_install() -> str:
    return f"meshcert=={__version__}"


def job_script(install: str, meshcert_args: list[str], tag: str) -> list[str]:
    """`meshcert_args` end with `--report-out`: the report file is added by the script."""
    q = shlex.quote
    placeholders = {WORK: '"$work"', GENERATION_DEFAULTS: '"$defaults"'}
    run = " ".join(placeholders.get(a, q(a))
                   for a in ["python", "-m", "meshcert", *meshcert_args])
    with_defaults = GENERATION_DEFAULTS in meshcert_args
    scratch = ['"$report"', '"$work"', *(['"$defaults"'] if with_defaults else [])]
    script = "\n".join([
        "set -u",
        f"report={REPORT_FILE}",
        f"work={WORK_DIR}",
        *([f"defaults={GENERATION_DEFAULTS_FILE}"] if with_defaults else []),
        # what the script writes in the temp dir goes with it, however it exits: a host whose
        # temp dir outlives the job (a shared machine, a local runner) keeps nothing of it
        f"trap 'rm -rf {' '.join(scratch)}' EXIT",
        *([f'printf \'%s\' "${GENERATION_DEFAULTS_ENV}" > "$defaults" '
           f"|| exit {DEFAULTS_FAILED}"] if with_defaults else []),
        f"python -m pip install --quiet --no-input --disable-pip-version-check {q(install)} "
        f"|| exit {INSTALL_FAILED}",
        f'{run} "$report"',
        "status=$?",
        f'python -m meshcert report emit "$report" --tag {q(tag)} || exit {EMIT_FAILED}',
        "exit $status",
    ])
    return ["sh", "-c", script]


def certify_slice_command(repo: str, commit: str, index: int, count: int, *, install: str,
                          runtime_abi: str | None = None) -> list[str]:
    """Certify stage `index` of `count` of the package mounted at /package (the repo at
    `commit`), hashing every byte of its share of the plan (--hash-once: the N slices hash
    each byte once), and print its report to the logs."""
    args = ["models", "certify", PACKAGE_MOUNT, "--package-only", "--stage",
            f"{index}/{count}", "--hash-once", "--verify-sha256", "--mounted-from",
            f"hf://{repo}@{commit}", "--quiet"]
    if runtime_abi:
        args += ["--runtime-abi", runtime_abi]
    return job_script(install, [*args, "--report-out"], slice_tag(index, count))


def slice_tag(index: int, count: int) -> str:
    return f"slice-{index}-of-{count}"
