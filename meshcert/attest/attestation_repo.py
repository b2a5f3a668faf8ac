"""An attestation repo: a dataset holding signed certifications of other repos' commits, at
`<ns>/<name>/<commit>.intoto.jsonl` (what `meshcert serve` uploads; `attest verify
--attestation-repo` and `catalog certify --trust-attested --attestation-repo` read it there).

A package's commit is then attested without a commit to the package repo itself (which would
make a new commit, docs/attestation.md), so the verdict is bound to the very commit certified.
"""

from __future__ import annotations

import re

from meshcert.attest.dsse import MAX_FILE_BYTES
from meshcert.attest.sign import SUFFIX

_REPO = re.compile(r"^[\w.-]+/[\w.-]+$")


def attestation_path(repo: str, commit: str) -> str:
    """Where the attestation of `repo` at `commit` lives in an attestation repo."""
    return f"{repo}/{commit.lower()}{SUFFIX}"


def web_url(endpoint: str, dataset: str, repo: str, commit: str) -> str:
    return f"{endpoint}/datasets/{dataset}/blob/main/{attestation_path(repo, commit)}"


def valid_repo(text: str) -> bool:
    return bool(_REPO.match(text))


def read_attestation(dataset: str, repo: str, commit: str) -> bytes | None:
    """The attestation file of `repo`@`commit` in the dataset `dataset` (main), None when it
    has none; a HubError when the Hub cannot tell."""
    import tempfile
    from pathlib import Path

    from meshcert.core.hub.api import HubApi
    from meshcert.core.hub.settings import HubSettings

    path = attestation_path(repo, commit)
    api = HubApi(HubSettings.from_env())
    listed = api.call(f"get_paths_info {dataset} {path}", lambda hf: hf.get_paths_info(
        dataset, [path], repo_type="dataset"))
    if not listed:
        return None
    with tempfile.TemporaryDirectory(prefix="meshcert-attestation-") as cache:
        local = api.call(f"download {dataset}/{path}", lambda hf: hf.hf_hub_download(
            dataset, path, repo_type="dataset", cache_dir=cache))
        with open(Path(str(local)), "rb") as handle:
            return handle.read(MAX_FILE_BYTES + 1)
