"""Test support: in-process fake servers shared by the test suites."""
