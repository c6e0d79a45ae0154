"""The core band: what every other part of the package is built on; it imports nothing above it.

Each concept lives here once:

- ``child``: run a Python function in a fresh child process and get its JSON result back
  (``start_python`` / ``run_python``); a failure comes back as ``ChildError``.
- ``processes``: free ports, starting a command in a process group of its own, and
  stopping that whole group (nothing left behind); finding processes by command line.
- ``rss``: a process's resident memory and its peak (Linux ``VmHWM``, psutil elsewhere).
- ``files``: writing a JSON file atomically.
- ``paths``: the project folder.
- ``places``: where the course writes for this user (``COURSE_HOME``), and the error when it cannot.
- ``variables``: every ``COURSE_*`` environment variable, named, documented and parsed once.
- ``errors``: the course's exceptions (``CourseError(what, fix)`` and its kinds); ``i18n``: messages in English or
  Chinese.
- ``tf_setup``: TensorFlow's start-up switches and log capture; ``gpu_config``: a GPU's memory policy (growth, a
  limit), set before TensorFlow starts; ``plot_fonts``: a Chinese font for plots.

Importing these modules is cheap: none imports TensorFlow, and psutil is imported where it is used.
"""
