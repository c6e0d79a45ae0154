"""The commands the tools add to ``course`` (tools/pyproject.toml registers this table in ``course.commands``).

Each is a module with a ``main(argv) -> int``: ``course_utils.cli`` imports it only when its command runs.
"""

COMMANDS = {  # command: (its module, what it does)
    "run": ("course_tools.batch.runner",
            "run notebooks headless (papermill), over parameter grids; write a report"),
    "bench": ("course_tools.bench.cli",
              "measure notebook 04's memory, two ways (JSON)"),
    "preflight": ("course_tools.classroom.preflight",
                  "check this machine before a class: one JSON record, problems"),
    "class-report": ("course_tools.classroom.class_report", "the students' preflight records as one report"),
    "hand-in": ("course_tools.classroom.handin",
                "hand in your progress (each notebook's exercises and checkpoint) to your instructor"),
    "progress": ("course_tools.classroom.progress",
                 "the students' hand-ins as one report: who is done, stuck or not started"),
    "grading": ("course_tools.classroom.grading",
                "write the exercises as an nbgrader course: graded by the course's own checks"),
}
