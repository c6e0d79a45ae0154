"""Tests of the instructor's tools (course_tools): their own tier, `make tools`."""
