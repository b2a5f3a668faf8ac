"""The catalog report in its formats: the view, HTML, Markdown, JUnit, and the files a
catalog run writes."""
