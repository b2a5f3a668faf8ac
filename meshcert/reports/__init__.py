"""Reports for reviewers: HTML, Markdown and JUnit XML renderings of cert.json and the evidence
report. Renderers take the pydantic models only; they never re-run a check."""
