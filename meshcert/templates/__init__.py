"""Jinja2 templates and the stylesheet for the HTML reports (package data: *.j2, *.css)."""
