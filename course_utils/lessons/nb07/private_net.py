"""A network of its own for a run's workers: no other process on the machine can reach their ports.

TensorFlow's gRPC workers listen on every interface without authentication (``distribute``), so on a class
server any classmate could run operations in them. The workers of one run share a Linux network namespace with
only a loopback interface, which an unprivileged user creates inside a user namespace (``unshare --user
--map-root-user --net``: https://man7.org/linux/man-pages/man7/network_namespaces.7.html,
https://man7.org/linux/man-pages/man7/user_namespaces.7.html). A holder process creates it, brings loopback up
(``SIOCSIFFLAGS``) and waits until its standard input closes; each worker joins with ``nsenter --target HOLDER
--user --net --preserve-credentials`` (without that option nsenter calls ``setgroups``, which such a namespace
refuses). Where user namespaces are forbidden (Ubuntu from 23.10, AppArmor's
``kernel.apparmor_restrict_unprivileged_userns``; some containers) ``PrivateNetwork`` raises a ``WorkerError``
that says why.
"""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
from pathlib import Path
from types import TracebackType

from course_utils.core.errors import WorkerError
from course_utils.core.i18n import translator
from course_utils.core.processes import start_in_group, stop_group

_ = translator("course")

START_TIMEOUT_S = 10.0

# Run as the holder, inside the new namespaces: loopback up, say so, then wait for standard input to close.
_HOLDER = """
import fcntl, socket, struct, sys
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
    flags = struct.unpack("16sh", fcntl.ioctl(s, SIOCGIFFLAGS, struct.pack("16sh", b"lo", 0)))[1]
    fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sh", b"lo", flags | IFF_UP))
print("ready", flush=True)
sys.stdin.read()
"""


class PrivateNetwork:
    """A network namespace with only loopback, alive inside ``with``; ``python()`` is an interpreter inside it.

    ``folder``: where the wrapper script goes (the run's folder).
    """

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self.holder: subprocess.Popen | None = None

    def __enter__(self) -> PrivateNetwork:
        missing = [tool for tool in ("unshare", "nsenter") if shutil.which(tool) is None]
        if missing or not sys.platform.startswith("linux"):
            raise WorkerError(
                _("The workers cannot get a network of their own here: {why}.").format(
                    why=_("this is not Linux") if not sys.platform.startswith("linux")
                    else _("{tools} not found").format(tools=" and ".join(missing))),
                _("Install util-linux (it has unshare and nsenter), or run the workers on a machine of your own."))
        cmd = ["unshare", "--user", "--map-root-user", "--net", "--", sys.executable, "-c", _HOLDER]
        self.holder = start_in_group(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            said = self._wait_ready()
        except BaseException:
            self.close()
            raise
        if said != "ready":
            self.close()
            raise WorkerError(
                _("The workers cannot get a network of their own here: {command} failed ({error}).").format(
                    command="unshare --user --map-root-user --net", error=said or _("no message")),
                _("This system forbids user namespaces to users (on Ubuntu: the AppArmor setting "
                  "kernel.apparmor_restrict_unprivileged_userns). Ask the administrator, or run the workers on a "
                  "machine of your own."))
        return self

    def _wait_ready(self) -> str:
        """``"ready"``, or what the holder said on its way out ('' when it said nothing in time)."""
        assert self.holder is not None and self.holder.stdout is not None and self.holder.stderr is not None
        readable, _w, _x = select.select([self.holder.stdout], [], [], START_TIMEOUT_S)
        line = self.holder.stdout.readline().decode(errors="replace").strip() if readable else ""
        if line == "ready":
            return line
        self.holder.kill()
        return " ".join(self.holder.stderr.read().decode(errors="replace").split())[-300:]

    def python(self) -> str:
        """A script that runs the workers' interpreter inside the namespace (what ``start_python`` is given)."""
        assert self.holder is not None, "use PrivateNetwork in a with block"
        script = self.folder / "in-private-network.sh"
        script.write_text(
            "#!/bin/sh\n# Runs Python in the network namespace of process "
            f"{self.holder.pid} (course_utils.lessons.nb07.private_net).\n"
            f"exec nsenter --target {self.holder.pid} --user --net --preserve-credentials -- "
            f'"{sys.executable}" "$@"\n',
            encoding="utf-8")
        script.chmod(0o700)
        return str(script)

    def close(self) -> None:
        """End the holder (closing its input is enough); the namespace goes when its last process has ended."""
        holder, self.holder = self.holder, None
        if holder is None:
            return
        for stream in (holder.stdin, holder.stdout, holder.stderr):  # all three are pipes (__enter__)
            stream.close()
        stop_group(holder, grace_s=START_TIMEOUT_S)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
