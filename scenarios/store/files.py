"""Atomic file writes and output-location checks: the only way results reach the disk.

Every file is written to a unique temporary name in its final folder
(``.<name>.<random>.floras-tmp``), flushed and ``fsync``-ed, moved into place with
:func:`os.replace` and the folder is ``fsync``-ed, so a reader sees either the old file or the
complete new one, never a prefix; a failure (full disk, interrupt) removes the temporary file
and leaves the previous version untouched. Stale temporaries of a killed process are removed
by :func:`remove_stale_temporaries` (called under the directory's lock).
"""

from __future__ import annotations

import errno
import json
import math
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from scenarios.errors import StorageError

__all__ = [
    "TMP_SUFFIX",
    "atomic_write_bytes",
    "atomic_write_text",
    "atomic_write_json",
    "check_output_location",
    "remove_stale_temporaries",
    "storage_error",
    "json_safe",
    "format_size",
]

TMP_SUFFIX = ".floras-tmp"


def storage_error(exc: OSError, action: str, path: str | os.PathLike) -> StorageError:
    """A one-line :class:`StorageError` for an :class:`OSError` while ``action``-ing ``path``."""
    reason = exc.strerror or str(exc)
    hint = ""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        hint = "; free space there (finished files are kept; nothing half-written was left)"
    elif exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        hint = "; choose a writable location"
    return StorageError(f"cannot {action} {os.fspath(path)}: {reason}{hint}")


def _write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd`` (the one low-level write; tests replace it)."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems do not support fsync on directories
    finally:
        os.close(fd)


def current_umask() -> int:
    """The process umask, read without changing it where the system allows (``/proc``)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o022)  # elsewhere: set and restore at once
    os.umask(old)
    return old


def atomic_write_bytes(path: str | os.PathLike, data: bytes, *, mode: int = 0o644) -> Path:
    """Write ``data`` to ``path`` atomically (unique temporary, fsync, rename, fsync folder).

    The file gets ``mode`` less the process umask (``mkstemp`` makes its temporary 0600
    whatever the umask, so the mode is set explicitly): under ``umask 077`` results are 0600.

    Raises :class:`scenarios.errors.StorageError` (one line, path and reason) on any
    :class:`OSError`; the temporary file is removed and an existing ``path`` is unchanged.
    """
    path = Path(path)
    folder = path.parent
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TMP_SUFFIX, dir=folder)
    except OSError as exc:
        raise storage_error(exc, "write", path) from None
    try:
        try:
            _write_all(fd, data)
            os.fchmod(fd, mode & ~current_umask() & 0o7777)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise storage_error(exc, "write", path) from None
        raise
    _fsync_dir(folder)
    return path


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def json_safe(obj: Any) -> Any:
    """``obj`` with non-finite floats (NaN, ±∞) replaced by ``None`` (strict JSON)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj


def atomic_write_json(path: str | os.PathLike, obj: Any, *, strict: bool = False) -> Path:
    """Write ``obj`` as indented JSON atomically; ``strict`` writes non-finite floats as null.

    The text is parsed back before it is written, so a file that reaches its final name is
    always valid JSON.
    """
    if strict:
        text = json.dumps(json_safe(obj), indent=2, allow_nan=False, ensure_ascii=False)
    else:
        text = json.dumps(obj, indent=2, sort_keys=True, default=str, ensure_ascii=False)
    json.loads(text)
    return atomic_write_text(path, text + "\n")


def remove_stale_temporaries(folder: str | os.PathLike) -> list[Path]:
    """Delete temporaries (``*.floras-tmp``, legacy ``.*.tmp``) left in ``folder`` by a killed writer.

    Call only while holding the folder's lock (no live writer can own them then).
    """
    removed = []
    folder = Path(folder)
    if not folder.is_dir():
        return removed
    for p in folder.iterdir():
        if p.is_file() and (p.name.endswith(TMP_SUFFIX) or (p.name.startswith(".") and p.name.endswith(".tmp"))):
            try:
                p.unlink()
                removed.append(p)
            except OSError:
                pass
    return removed


def _nearest_existing(path: Path) -> Path:
    p = path
    while not p.exists():
        if p.parent == p:
            break
        p = p.parent
    return p


def check_output_location(path: str | os.PathLike, *, need_bytes: int = 0, kind: str = "directory",
                          what: str = "output") -> None:
    """Check, before long work, that ``path`` can receive about ``need_bytes`` of output.

    ``kind`` is ``"directory"`` (``path`` is, or will be created as, a folder) or ``"file"``
    (``path``'s parent folder receives it). Checks: the existing part of the path is a folder
    (a file is not), it is writable and searchable, and ``shutil.disk_usage`` reports at least
    ``need_bytes`` free (an estimate), and that it does not resolve (``..``, symbolic links
    followed) into the package's own ``scenarios/`` source folder. Raises
    :class:`StorageError` naming ``what``.
    """
    path = Path(path)
    source = Path(__file__).resolve().parents[1]
    resolved = path.resolve()
    if resolved == source or source in resolved.parents:
        raise StorageError(f"{what} {path} resolves to {resolved}, inside the simulator's own source folder {source}; "
                           f"choose an output location outside it (e.g. results/)")
    if kind == "file":
        if path.is_dir():
            raise StorageError(f"{what} {path} is a directory; give a file name")
        folder = path.parent if str(path.parent) else Path(".")
    else:
        if path.exists() and not path.is_dir():
            raise StorageError(f"{what} {path} exists and is not a directory")
        folder = path
    base = _nearest_existing(folder.absolute())
    if not base.is_dir():
        raise StorageError(f"{what} {path}: {base} exists and is not a directory")
    if not os.access(base, os.W_OK | os.X_OK):
        raise StorageError(f"{what} {path}: {base} is not writable; choose a writable location")
    try:
        free = shutil.disk_usage(base).free
    except OSError as exc:
        raise storage_error(exc, "check free space of", base) from None
    if need_bytes > free:
        raise StorageError(f"{what} {path}: needs about {format_size(need_bytes)} but {base} has {format_size(free)} free")


def format_size(n: float) -> str:
    """Bytes in binary units, three significant digits (``"32 GiB"``)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"):
        if abs(n) < 1024 or unit == "EiB":
            return f"{int(n)} B" if unit == "B" else f"{n:.3g} {unit}"
        n /= 1024
    return f"{n:.3g} EiB"
