"""One run of a sweep as the engine and the executors see it: its task, its outcome, its error record.

A leaf of :mod:`scenarios.experiments`: :mod:`.sweep`, :mod:`.run_task`, :mod:`.executors` and
:mod:`.identical` import it, it imports none of them.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from scenarios.errors import StorageError
from scenarios.store import ERROR, atomic_write_json

__all__ = ["Runner", "RunTask", "RunOutcome", "record_error"]

Runner = Callable[..., dict]


@dataclass(frozen=True)
class RunTask:
    """Everything a worker needs to execute one grid point × seed."""

    out_dir: str
    name: str
    config: Any
    record: dict
    runner: Runner | None = None
    threads: int = 1


@dataclass(frozen=True)
class RunOutcome:
    name: str
    status: str  # "done", "skipped", "copied" (from an identical run: scenarios.experiments.identical) or "failed"
    summary: dict = field(default_factory=dict)
    error: dict | None = None
    seconds: float = 0.0
    out_dir: str = ""


def record_error(partial: Path, exc: BaseException, record: dict) -> dict:
    err = {"type": type(exc).__name__, "message": str(exc)}
    try:
        atomic_write_json(partial / ERROR, {**err, "traceback": traceback.format_exc(),
                                            "overrides": record.get("overrides")})
    except (StorageError, OSError):
        pass  # e.g. the disk is full: the outcome still carries the error
    return err
