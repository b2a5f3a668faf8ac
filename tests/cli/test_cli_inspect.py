"""`meshcert models inspect PATH.gguf` as users run it: exit statuses, outputs, split sets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meshcert.cli import app
from tests.core.gguf.hostile import CORPUS, base_file, write_case

runner = CliRunner()


def inspect(*args: str):
    return runner.invoke(app, ["models", "inspect", *args])


def test_a_clean_file_exits_0_and_writes_every_format(tmp_path: Path) -> None:
    path = base_file().write(tmp_path / "model.gguf")
    out = tmp_path / "out"
    result = inspect(str(path), "--report-out", str(out / "r.json"), "--html",
                     str(out / "r.html"), "--md", str(out / "r.md"), "--junit",
                     str(out / "r.xml"), "--sarif", str(out / "r.sarif"))
    assert result.exit_code == 0, result.output
    assert result.output.startswith("GGUF inspection: passed\nFile: ")
    report = json.loads((out / "r.json").read_text())
    assert report["status"] == "passed" and report["input"] == str(path)
    assert report["manifest_sha256"] is None and report["layer_count"] is None
    assert {c["name"] for c in report["checks"]} >= {"gguf_structure", "llama_cpp_gguf"}
    assert not {c["name"] for c in report["checks"]} & {"manifest_json", "readme"}
    for name in ("r.html", "r.md", "r.xml", "r.sarif"):
        assert (out / name).stat().st_size > 0


def test_it_lists_only_what_it_can_do_and_ends_with_a_verdict_about_one_file(
        tmp_path: Path) -> None:
    """issue 45: no skipped check pointing at an option `inspect` rejects, and no "package
    gate passed" for one file; every format says the same."""
    path = base_file().write(tmp_path / "model.gguf")
    md = tmp_path / "r.md"
    result = inspect(str(path), "--report-out", str(tmp_path / "r.json"), "--md", str(md))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[-1].startswith("inspection passed: model.gguf: 0 errors, ")
    assert "package gate" not in result.output
    for flag in ("--stages", "--layers", "--stage", "--materialize", "--parity", "--source"):
        assert flag not in result.output
        assert inspect(str(path), flag, "x").exit_code == 2  # an option inspect rejects
    report = json.loads((tmp_path / "r.json").read_text())
    assert not [c for c in report["checks"] if (c["details"] or "").startswith("not asked")]
    assert report["coverage"]["scope"]["kind"] == "file"
    assert f"**Verdict:** {lines[-1]}" in md.read_text().replace("\\", "")
    assert md.read_text().startswith("## \u2705 Inspection passed: ")


def test_a_file_has_no_manifest_by_nature_and_a_text_file_gave_nothing_to_read(
        tmp_path: Path) -> None:
    # the checks of a package's manifest do not apply to one file ("not applicable"); those
    # that read its header read nothing when it is no GGUF ("nothing read"), never `passed`
    clean = inspect(str(base_file().write(tmp_path / "model.gguf")))
    assert "    not applicable: metadata_tensor_copies, stale_split_metadata" in clean.output
    assert "nothing read" not in clean.output
    text = tmp_path / "notes.gguf"
    text.write_text("hi\n")
    result = inspect(str(text))
    assert result.exit_code == 1, result.output
    assert "    nothing read (no GGUF header): slice_metadata, tokenizer, tokenizer_copies" \
        in result.output
    assert "the file starts with b'hi\\n', not b'GGUF'" in result.output


def test_a_hostile_file_exits_1_with_its_code_in_the_json(tmp_path: Path) -> None:
    case = next(c for c in CORPUS if c.code == "gguf_trailing_bytes")
    result = inspect(str(write_case(case, tmp_path)), "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["status"] == "failed"
    [hit] = [f for f in report["findings"] if f["code"] == case.code]
    assert hit["severity"] == "error" and hit["remediation"]


@pytest.mark.parametrize("args", [[], ["does-not-exist.gguf"], ["--nope", "x.gguf"]])
def test_usage_errors_exit_2(args: list[str], tmp_path: Path) -> None:
    assert inspect(*args).exit_code == 2


def test_a_directory_is_a_usage_error(tmp_path: Path) -> None:
    assert inspect(str(tmp_path)).exit_code == 2


def _split(tmp_path: Path, count: int) -> list[Path]:
    return [base_file().write(tmp_path / f"m-{i:05d}-of-{count:05d}.gguf")
            for i in range(1, count + 1)]


def test_a_split_set_is_inspected_from_its_first_shard(tmp_path: Path) -> None:
    first, second, third = _split(tmp_path, 3)
    second.write_bytes(second.read_bytes() + b"\x00" * 64)
    result = inspect(str(first), "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert {f["path"] for f in report["findings"] if f["code"] == "gguf_trailing_bytes"} == {
        str(second)}


def test_a_missing_shard_makes_the_result_incomplete(tmp_path: Path) -> None:
    first, _, third = _split(tmp_path, 3)
    third.unlink()
    result = inspect(str(first), "--json")
    assert result.exit_code == 3
    report = json.loads(result.stdout)
    assert report["status"] == "incomplete"
    [missing] = [f for f in report["findings"] if f["code"] == "check_not_run"]
    assert missing["path"] == str(third)


def test_a_later_shard_is_inspected_alone(tmp_path: Path) -> None:
    _, second = _split(tmp_path, 2)
    result = inspect(str(second), "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["status"] == "passed"
