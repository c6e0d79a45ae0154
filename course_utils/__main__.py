"""``python -m course_utils COMMAND ...`` - the course's command line.

Commands are modules with a ``main(argv) -> int``; they are imported only when used.
"""

from __future__ import annotations

import importlib
import sys

COMMANDS = {
    "run": ("course_utils.runner", "run notebooks headless (papermill), over parameter grids; write a report"),
    "data": ("course_utils.data", "fetch datasets for offline use, or show which source each would use"),
    "doctor": ("course_utils.doctor", "diagnose this machine (or captured nvidia-smi/nvcc output): what to install"),
    "bench": ("course_utils.bench", "measure seed 004's CNN speed ladder, or notebook 04's memory, both ways (JSON)"),
    "logs": ("course_utils.tb_logs", "read TensorBoard logs back as a table (CSV: run, split, tag, step, value)"),
}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in COMMANDS:
        lines = ["usage: python -m course_utils COMMAND [ARGS]", "", "commands:"]
        lines += [f"  {name:<8} {help_}" for name, (_, help_) in COMMANDS.items()]
        print("\n".join(lines))
        if argv and argv[0] not in ("-h", "--help"):
            print(f"\nerror: unknown command {argv[0]!r}", file=sys.stderr)
            return 2
        return 0
    module = importlib.import_module(COMMANDS[argv[0]][0])
    return module.main(argv[1:])


if __name__ == "__main__":
    raise SystemExit(main())
