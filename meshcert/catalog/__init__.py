"""Certify a catalog of published layer packages (`meshcert catalog certify`).

Not to be confused with `meshcert.core.codes`, the catalog of finding codes. Here a *catalog* is
mesh-llm's list of models (`meshllm/catalog`, a dataset repo of `entries/<owner>/<repo>.json`
files) and every `layer-package` reference in it gets a pinned verdict:

- `entries`: an entry file's bytes -> its package references, or findings naming the file;
- `sources`: where the entry files come from (a local checkout, or `hf://datasets/ns/name`);
- `facts`, `compare`: what the package says about itself vs what the entry records (pure);
- `run`: resolve, certify (bounded concurrency, one request gate), assemble the report;
- `model`: the catalog report (its JSON Schema is `docs/catalog-report.schema.json`);
- `since`, `pins`: re-certify only what moved; the entries with each commit pinned.
"""
