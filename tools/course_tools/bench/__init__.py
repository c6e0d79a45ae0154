"""``course bench``: the course's benchmark from the command line (docs/instructors.md, "Benchmarks: `course bench`").
"""
