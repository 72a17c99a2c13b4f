"""Exclusive directory locks: one writer per run directory and per sweep directory.

A lock is ``fcntl.flock(LOCK_EX | LOCK_NB)`` on the file ``<directory>/.lock``, which holds
the owner's PID, host name and start time (UTC) for the error message, and nothing else: never
the command line, which may carry a key (``--key-hex=…``). The kernel drops a flock when its process
dies, so a lock file left by a killed process (a *stale* lock) is simply taken over: it is the
flock, not the file's existence, that counts. After taking the flock the holder checks that
the file it locked is still the one at the path (a releasing owner unlinks it), so two
processes can never both believe they hold it. A second writer gets :class:`BusyError`
("… in use by PID …") and touches nothing.
"""

from __future__ import annotations

import fcntl
import os
import socket
import time
from pathlib import Path

from scenarios.errors import BusyError, StorageError
from scenarios.store.files import storage_error

__all__ = ["LOCK_NAME", "DirectoryLock"]

LOCK_NAME = ".lock"


class DirectoryLock:
    """Exclusive, non-blocking lock of a directory (context manager).

    Parameters
    ----------
    directory : path
        Created (with parents) if absent; :attr:`created` tells whether this lock made it, and
        ``release(remove_directory_if_empty=True)`` removes the folders it made while empty.
    what : str
        Names the directory in the error ("run directory", "sweep directory").
    """

    def __init__(self, directory: str | os.PathLike, *, what: str = "directory"):
        self.directory = Path(directory)
        self.what = what
        self.path = self.directory / LOCK_NAME
        self.created = False
        self._made: list[Path] = []  # folders this lock created, outermost first
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> "DirectoryLock":
        if self._fd is not None:
            return self
        if self.directory.exists() and not self.directory.is_dir():
            raise StorageError(f"{self.what} {self.directory} exists and is not a directory")
        missing = []
        p = self.directory.absolute()
        while not p.exists() and p.parent != p:
            missing.append(p)
            p = p.parent
        try:
            for folder in reversed(missing):
                folder.mkdir()
                self._made.append(folder)
        except FileExistsError:
            pass
        except OSError as exc:
            raise storage_error(exc, "create", self.directory) from None
        self.created = bool(self._made) and self._made[-1] == self.directory.absolute()
        for _ in range(20):
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise storage_error(exc, "create the lock file", self.path) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                owner = _read_owner(fd)
                os.close(fd)
                raise BusyError(f"{self.what} {self.directory} is in use by {owner}; wait for it to finish "
                                f"or choose another output location") from None
            try:  # the file we locked must still be the one at the path (not unlinked by a releasing owner)
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            os.ftruncate(fd, 0)
            os.write(fd, _owner_line().encode("ascii", "replace"))
            self._fd = fd
            return self
        raise BusyError(f"{self.what} {self.directory}: could not take its lock (it kept changing owner)")

    def release(self, *, remove_directory_if_empty: bool = False) -> None:
        """Unlink the lock file and drop the flock; optionally remove a directory this lock created."""
        if self._fd is None:
            return
        try:
            self.path.unlink()
        except OSError:
            pass
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None
        if remove_directory_if_empty:
            for folder in reversed(self._made):  # innermost first; stops at the first non-empty one
                try:
                    folder.rmdir()
                except OSError:
                    break
            self._made = []

    def __enter__(self) -> "DirectoryLock":
        return self.acquire()

    def __exit__(self, exc_type, exc, tb) -> None:
        self.release(remove_directory_if_empty=exc_type is not None)


def _owner_line() -> str:
    """``"<pid> host=<name> since=<UTC time>"``: what a lock file holds (no command line, no key)."""
    host = "".join(c for c in socket.gethostname() if c.isalnum() or c in ".-_") or "unknown"
    return f"{os.getpid()} host={host} since={time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n"


def _read_owner(fd: int) -> str:
    try:
        text = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip()
    except OSError:
        text = ""
    if not text:
        return "another process"
    pid, _, rest = text.partition(" ")
    if not pid.isdigit():
        return "another process"
    fields = dict(f.split("=", 1) for f in rest.split() if "=" in f)
    where = ", ".join(f"{k} {fields[k]}" for k in ("host", "since") if k in fields)
    return f"PID {pid}" + (f" ({where})" if where else "")
