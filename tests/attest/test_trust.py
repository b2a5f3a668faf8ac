"""trust.toml: signers by key or CI identity, each for repo globs, and the file's errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from meshcert.attest.keys import generate, load_public
from meshcert.attest.trust import TrustFileError, TrustPolicy, load_trust, repo_matches


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "trust.toml"
    path.write_text(text)
    return path


def test_keys_by_id_and_pem_and_a_ci_identity(tmp_path: Path) -> None:
    a = generate(tmp_path / "a")
    (tmp_path / "keys").mkdir()
    b = generate(tmp_path / "keys" / "b")
    policy = load_trust(write(tmp_path, f'''
mode = "enforce"
[[signer]]
key = "{a.key_id}"
repos = ["meshllm/*"]
[[signer]]
pem = "keys/b.pub"
repos = ["*"]
[[signer]]
oidc_issuer = "https://token.actions.githubusercontent.com"
subject = "https://github.com/Mesh-LLM/catalog/.github/workflows/*@refs/heads/main"
repos = ["meshllm/*"]
'''))
    assert policy.mode == "enforce"
    assert [s.key_id for s in policy.keys] == [a.key_id, b.key_id]
    assert policy.keys_for("meshllm/qwen") == [policy.keys[0].key, policy.keys[1].key]
    assert policy.keys_for("other/qwen") == [policy.keys[1].key]
    assert policy.keys_for(None) == [policy.keys[1].key]  # a local package: only "*"
    identity = policy.identities_for("MeshLLM/Qwen")[0]
    assert identity.matches("https://token.actions.githubusercontent.com",
                            "https://github.com/Mesh-LLM/catalog/.github/workflows/certify.yml"
                            "@refs/heads/main")
    assert not identity.matches("https://accounts.google.com",
                                "https://github.com/Mesh-LLM/catalog/.github/workflows/x"
                                "@refs/heads/main")
    assert policy.identities_for("other/x") == []


def test_the_default_mode_is_off_and_repos_default_to_all(tmp_path: Path) -> None:
    a = generate(tmp_path / "a")
    policy = load_trust(write(tmp_path, f'[[signer]]\nkey = "{a.key_id}"\n'))
    assert policy.mode == "off" and policy.keys[0].repos == ("*",)


def test_trusted_keys_on_the_command_line_are_for_every_repo(tmp_path: Path) -> None:
    key = load_public(generate(tmp_path / "a").key_id)
    policy = TrustPolicy.of_keys([key])
    assert policy.mode == "enforce" and policy.keys_for("any/repo") == [key]


def test_repo_globs_are_case_insensitive() -> None:
    assert repo_matches(("meshllm/*",), "MeshLLM/Qwen3")
    assert not repo_matches(("meshllm/*",), "evil/meshllm")


@pytest.mark.parametrize(("text", "says"), [
    ('mode = "loose"', "mode must be one of off, warn, enforce"),
    ("mode = ", "is not TOML"),
    ('[[signer]]\nrepos = ["*"]', r"signer\[0\] names no key, pem, or oidc_issuer"),
    ('[[signer]]\nkey = "ed25519:00"', r"signer\[0\]: 'ed25519:00' is not a key id"),
    ('[[signer]]\npem = "nope.pub"', r"signer\[0\]: cannot read key file"),
    ('[[signer]]\noidc_issuer = "https://x"', "needs oidc_issuer and subject"),
    ('[[signer]]\noidc_issuer = "https://x"\nsubject = "s"\nrepos = []', "repos must be"),
    ("signer = 3", "signer must be an array of tables"),
])
def test_a_bad_trust_file_names_itself_and_the_entry(tmp_path: Path, text: str,
                                                     says: str) -> None:
    with pytest.raises(TrustFileError, match=says) as caught:
        load_trust(write(tmp_path, text))
    assert "trust.toml" in str(caught.value)


def test_an_unreadable_trust_file(tmp_path: Path) -> None:
    with pytest.raises(TrustFileError, match=r"cannot read trust file .*missing\.toml"):
        load_trust(tmp_path / "missing.toml")
