"""The evidence report in its formats: the view, Markdown, JUnit, the mesh-llm measurements
and the performance-history report."""
