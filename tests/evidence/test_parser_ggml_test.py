"""The patched fork's `ggml_test:` stderr lines: per-sample timings, summaries, metadata."""

from __future__ import annotations

from meshcert.evidence.parsers import ggml_test
from meshcert.evidence.parsers.base import GGML_TEST, MALFORMED, UNKNOWN_LINE
from meshcert.evidence.table import table_from_parsed
from tests.evidence.samples import Q3_DOWN, ffn

FFN = ffn("q2_K", 1, 0)


def records(log: str) -> tuple[ggml_test.ParsedFile, list[dict]]:
    parsed = ggml_test.parse(log, "samples.log")
    return parsed, table_from_parsed([(parsed, "samples.log", "default", "r")]).to_dict(
        "records")


LOG = "\n".join([
    "ggml_metal_device_init: GPU name:   Apple M3 Max",
    f"ggml_test: perf_warmup op=GLM_FFN_CONSUMER params={FFN} sample=1/1 runs=64 avg_us=830.10",
    f"ggml_test: perf_sample op=GLM_FFN_CONSUMER params={FFN} sample=1/3 runs=64 avg_us=815.50",
    f"ggml_test: perf_sample op=GLM_FFN_CONSUMER params={FFN} sample=2/3 runs=64 avg_us=814.25",
    f"ggml_test: perf_sample op=GLM_FFN_CONSUMER params={FFN} sample=3/3 runs=64 avg_us=816.00",
    f"ggml_test: perf_summary op=GLM_FFN_CONSUMER params={FFN} warmup_samples=1 samples=3 "
    "min_us=814.25 median_us=815.50 max_us=816.00",
    f"ggml_test: perf_metadata op=MUL_MAT_ID params={Q3_DOWN} kernel=kernel_mul_mv_id_q3_K_f32 "
    "nsg=2 nr0=4 backend=Metal",
]) + "\n"


def test_samples_warmup_summary_and_metadata() -> None:
    parsed, rows = records(LOG)
    assert parsed.problems == [] and parsed.format == GGML_TEST and parsed.ignored == 1
    assert [r["kind"] for r in rows] == ["perf_warmup", "perf_sample", "perf_sample",
                                         "perf_sample", "perf_summary", "perf_metadata"]
    samples = [r for r in rows if r["kind"] == "perf_sample"]
    assert [(r["sample"], r["runs"], r["us_per_run"]) for r in samples] == [
        (1, 64, 815.5), (2, 64, 814.25), (3, 64, 816.0)]
    assert samples[0]["params"] == FFN and samples[0]["param_dict"]["weighted_down"] == 1
    assert samples[0]["extra"] == {"n_samples": 3} and samples[0]["backend"] is None
    summary = rows[4]
    assert summary["us_per_run"] == 815.5 and summary["metric"] == "median_us"
    assert summary["extra"] == {"warmup_samples": 1, "samples": 3, "min_us": 814.25,
                                "max_us": 816.0}
    meta = rows[5]
    assert meta["extra"] == {"kernel": "kernel_mul_mv_id_q3_K_f32", "nsg": 2, "nr0": 4}
    assert meta["backend"] == "Metal"                       # backend= key on the line


def test_bad_and_unknown_lines_are_problems() -> None:
    log = "\n".join([
        f"ggml_test: perf_sample op=MUL_MAT_ID params={Q3_DOWN} sample=1/3 runs=512",
        f"ggml_test: perf_sample op=MUL_MAT_ID params={Q3_DOWN} sample=x runs=512 avg_us=1.0",
        f"ggml_test: perf_summary op=MUL_MAT_ID params={Q3_DOWN} samples=3",
        "ggml_test: perf_histogram op=MUL_MAT_ID bins=10",
        "ggml_test: perf_sample params=x sample=1/1 runs=1 avg_us=2.0",
        f"ggml_test: perf_sample op=MUL_MAT_ID params={Q3_DOWN} sample=2/3 runs=512 avg_us=164.4",
    ]) + "\n"
    parsed, rows = records(log)
    assert [(p.line, p.kind) for p in parsed.problems] == [
        (1, MALFORMED), (2, MALFORMED), (3, MALFORMED), (4, UNKNOWN_LINE), (5, MALFORMED)]
    assert [(r["source_line"], r["us_per_run"]) for r in rows] == [(6, 164.4)]


def test_other_field_order_and_extra_keys_still_parse() -> None:
    log = (f"ggml_test: perf_sample op=MUL_MAT_ID avg_us=164.9 runs=512 sample=1/3 "
           f"params={Q3_DOWN} nsg=4\n")
    parsed, rows = records(log)
    assert parsed.problems == []
    assert rows[0]["us_per_run"] == 164.9 and rows[0]["sample"] == 1
    assert rows[0]["extra"] == {"nsg": 4, "n_samples": 3}
