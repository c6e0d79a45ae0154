"""``course bench``: the course's benchmark from the command line (JSON with ``--json``).

``dense-memory``: notebook 04's training, peak memory and time, two ways, each in a fresh process
(``course_tools.bench.dense_memory``); the command line is in ``course_tools.bench.cli``.
Speed is measured by notebook 05 itself (its speed ladder), which ``course run`` runs headless.
"""
