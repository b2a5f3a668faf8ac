"""serve.toml and `meshcert serve`'s refusals before it listens: each names what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from meshcert.attest.keys import generate
from meshcert.cli import app
from meshcert.serve.config import ConfigError, load_config

GOOD = ('[webhook]\nsecret_env = "MY_SECRET"\n[state]\ndir = "st"\n[signing]\nkey = "k.key"\n'
        '[attestations]\nrepo = "meshllm/att"\n[[watch]]\nrepo = "meshllm/*-layers"\n'
        '[[catalog]]\nrepo = "meshllm/catalog"\n[budgets]\nmax_jobs = 3\n')


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "serve.toml"
    path.write_text(text)
    return path


def test_the_contract_keys_are_read_and_paths_are_relative_to_the_file(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, GOOD))
    assert config.webhook.secret_env == "MY_SECRET"
    assert config.state_dir == tmp_path / "st"
    assert config.path(config.signing.key) == tmp_path / "k.key"
    assert config.watches("meshllm/tiny-layers") and not config.watches("other/tiny-layers")
    assert config.is_catalog("meshllm/catalog") and config.budgets.max_jobs == 3
    assert config.secret({"MY_SECRET": "x"}) == "x"
    with pytest.raises(ConfigError, match="export MY_SECRET"):
        config.secret({})


@pytest.mark.parametrize(("text", "message"), [
    ("[signing\n", "is not TOML"),
    ('[signing]\nkey = "k"\n', "attestations: Field required"),
    (GOOD + "[extra]\nx = 1\n", "extra: Extra inputs are not permitted"),
    (GOOD.replace("max_jobs = 3", "max_jobs = 0"), "budgets.max_jobs"),
    ('[signing]\nkey = "k"\n[attestations]\nrepo = "meshllm/att"\n', "nothing to watch"),
])
def test_a_bad_file_says_what_is_wrong(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config(write(tmp_path, text))


def test_serve_refuses_before_listening(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    config = write(tmp_path, GOOD)
    monkeypatch.delenv("MY_SECRET", raising=False)
    missing = runner.invoke(app, ["serve", "--config", str(config)])
    assert missing.exit_code == 2 and "export MY_SECRET" in missing.output
    monkeypatch.setenv("MY_SECRET", "value")
    nokey = runner.invoke(app, ["serve", "--config", str(config)])
    assert nokey.exit_code == 2 and "[signing] key" in nokey.output
    assert "value" not in nokey.output
    unreadable = runner.invoke(app, ["serve", "--config", str(tmp_path / "none.toml")])
    assert unreadable.exit_code == 2 and "cannot read" in unreadable.output
    generate(tmp_path / "k")
    (tmp_path / "st").mkdir()
    from meshcert.serve.queue import Queue

    held = Queue(tmp_path / "st")  # another service owns the state folder
    try:
        busy = runner.invoke(app, ["serve", "--config", str(config)])
    finally:
        held.close()
    assert busy.exit_code == 2 and "another meshcert serve" in busy.output


def test_the_complete_file_in_docs_serve_md_loads_and_shows_the_defaults(tmp_path: Path) -> None:
    import re

    from meshcert.serve.config import ServeConfig

    doc = (Path(__file__).resolve().parents[2] / "docs" / "serve.md").read_text()
    shown = re.search(r"```toml\n(.*?)```", doc, re.S)
    assert shown is not None
    config = load_config(write(tmp_path, shown.group(1)))
    defaults = ServeConfig.model_validate({"signing": {"key": "k"},
                                           "attestations": {"repo": "a/b"}})
    for section in ("webhook", "state", "recheck", "hf_jobs", "budgets"):
        assert getattr(config, section) == getattr(defaults, section), section
