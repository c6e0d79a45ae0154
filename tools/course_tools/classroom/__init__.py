"""Tools for an instructor who teaches a class: check every student's machine before the first lesson.

Each student runs ``course preflight`` (``classroom.preflight``), which writes one JSON record about
their machine - platform, NVIDIA driver and GPUs, TensorFlow and its build, the doctor's findings, a
timed matrix product, the data sources, the folders the course writes - and the problems found in it.
The instructor collects the records into one folder and runs ``course class-report FOLDER``
(``classroom.class_report``): one table for the class, problems first, in Markdown and HTML.

On a shared GPU server, ``hub/jupyterhub_config.py`` reads its settings through ``classroom.hub``:
who may log in, each student's limits, GPU and environment.
"""
