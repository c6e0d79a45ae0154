"""``course bench``: the course's benchmarks from the command line (JSON with ``--json``).

- ``cnn``: the blog post's CNN, its own way and the speed ladder (``course_utils.speed``).
- ``dense-memory``: notebook 04's training, peak memory and time, two ways, each in a fresh
  process (``course_utils.bench.dense_memory``).

The command line is in ``course_utils.bench.cli``.
"""
