"""Reports for reviewers: each report kind (certification, evidence, catalog) in JSON, HTML,
Markdown, JUnit XML and SARIF, looked up in one table (`registry.py`) and written by
`outputs.py`. Renderers take the pydantic models only; they never re-run a check."""
