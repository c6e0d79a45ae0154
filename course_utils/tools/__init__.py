"""The tools band: the ``course`` command and what only it runs - no notebook and no lesson module imports these.

- ``cli``: the ``course`` command, which hands each sub-command to its module here;
- ``batch/``: ``course run`` (notebooks run headless, grids, shards, the report);
- ``bench/``: ``course bench``;
- ``classroom/``: ``course preflight``, ``course class-report`` and the JupyterHub settings;
- ``doctor_cli``, ``data_cli``: ``course doctor`` and ``course data``.

Tools import the face (the package's top level) and the core; ``tests/test_architecture.py`` keeps it that way.
"""
