"""The certification report (cert.json) in its formats: the view the HTML and Markdown lay
out, the coverage map of a merge, what a node will apply, JUnit, SARIF."""
