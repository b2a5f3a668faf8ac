"""The tidy evidence table's columns: one row per measurement or sample, the contract
downstream code (gates, statistics, decisions, reports) reads. Plain names only (no pandas):
the DataFrame itself is built in `meshcert.evidence.table`.

Columns (`COLUMNS`, dtypes in `DTYPES`): text columns hold str or None (object dtype);
floats are float64 with NaN when missing; runs/sample are Int64 and supported/passed boolean
(nullable, <NA> when missing).

- source_file (str), source_line (int64): where the row is (a split row: its name line).
- format (str): tbo-console, tbo-test, tbo-sql, ggml-test, llama-bench, perplexity.
- kind (str): perf, perf_sample, perf_warmup, perf_summary, perf_metadata, parity,
  parity_backend, parity_total, bench, quality.
- backend, device, build_commit (str): where and what was measured, when known.
- op (str): row name (`GLM_FFN_CONSUMER`), llama-bench test (`tg128`), `perplexity`;
  "" for parity_backend / parity_total rows.
- params (str): canonical `k=v,...` (blanks stripped, original order).
- param_dict (object): the parsed params (int, float, tuple for arrays, str). Shared between
  rows with the same params: read-only.
- variant (str): `default`, the `--label`, or the sweep file name.
- run_id (str): one run (file), `<file name>@<sha256[:12]>`.
- us_per_run (float64): perf us/run; perf_sample/perf_warmup avg_us; perf_summary median_us;
  bench avg_ns / 1000 (and sample_ns / 1000).
- runs (Int64): runs behind the timing.
- sample (Int64): perf rows: ordinal among rows of the same (backend, op, params, variant)
  across runs, in table order; perf_sample/perf_warmup: i of `sample=i/n`; bench: repetition.
- supported (boolean): False for `not supported` perf rows.
- passed (boolean): parity, parity_backend, parity_total.
- nmse (float64): the NMSE (or ERR) a parity failure printed; threshold in extra["threshold"].
- error (str): parity failure text.
- metric (str), value, value_err (float64): us_per_run, median_us, avg_ts, avg_ns, sample_ns,
  sample_ts, ppl, ppl_q, kld_mean, kld_median, same_top_p, delta_p_mean, ...
- extra (object): everything else (throughput, tests_passed/tests_total, backends_passed,
  stddev, file type, result_line of a split row, ...).

Rows with the same (backend, op, params, variant) are samples of one measurement; `run_id`
tells the runs apart.
"""

from __future__ import annotations

COLUMNS: tuple[str, ...] = (
    "source_file", "source_line", "format", "kind", "backend", "device", "build_commit", "op",
    "params", "param_dict", "variant", "run_id", "us_per_run", "runs", "sample", "supported",
    "passed", "nmse", "error", "metric", "value", "value_err", "extra",
)

_STR = "object"     # str values, None when missing (plain Python objects: cheap to build)
DTYPES: dict[str, str] = {
    "source_file": _STR, "source_line": "int64", "format": _STR, "kind": _STR,
    "backend": _STR, "device": _STR, "build_commit": _STR, "op": _STR, "params": _STR,
    "param_dict": "object", "variant": _STR, "run_id": _STR, "us_per_run": "float64",
    "runs": "Int64", "sample": "Int64", "supported": "boolean", "passed": "boolean",
    "nmse": "float64", "error": _STR, "metric": _STR, "value": "float64",
    "value_err": "float64", "extra": "object",
}

MEASUREMENT_KEY = ("backend", "op", "params", "variant")
DEFAULT_VARIANT = "default"
