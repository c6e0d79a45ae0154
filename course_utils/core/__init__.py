"""The course's process machinery - what the tools are built on, and what no notebook imports directly.

Each concept lives here once:

- ``system.child``: run a Python function in a fresh child process and get its JSON result back
  (``start_python`` / ``run_python``); a failure comes back as ``errors.ChildError``.
- ``system.processes``: free ports, starting a command in a process group of its own, and
  stopping that whole group (nothing left behind); finding processes by command line.
- ``system.rss``: a process's resident memory and its peak (Linux ``VmHWM``, psutil elsewhere).
- ``system.files``: writing a JSON file atomically.
- ``system.paths``: the project folder.
- ``system.places``: where the course writes for this user (``COURSE_HOME``), and the error when it cannot.

Importing these modules is cheap: none imports TensorFlow, and psutil is imported where it is used.
"""
