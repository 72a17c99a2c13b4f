"""Executing one grid point × seed of a sweep in its ``.<name>.partial`` directory (:func:`execute_run`).

The run is renamed to ``<name>`` only once it has written ``DONE`` and
:func:`scenarios.store.verify_run` finds it complete; a failure becomes ``error.json`` and a
``"failed"`` outcome. This is what an executor maps over the tasks (:mod:`.executors`).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from scenarios.errors import StorageError
from scenarios.experiments.outcome import RunOutcome, RunTask, record_error
from scenarios.store import DONE, ERROR, RUN_RECORD, atomic_write_json, quarantine, run_status, verify_run

__all__ = ["execute_run"]


def _limit_threads(threads: int) -> None:
    """Keep one worker's numerical libraries to ``threads`` threads (set before TF starts)."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "TF_NUM_INTRAOP_THREADS"):
        os.environ.setdefault(var, str(threads))
    os.environ.setdefault("TF_NUM_INTEROP_THREADS", "1")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("MPLBACKEND", "Agg")


def _default_runner():
    from scenarios.runs.run import run_scenario

    return run_scenario


def _reopen_incomplete(out: Path, name: str) -> None:
    """A ``<name>/`` marked finished but incomplete goes back to ``.<name>.partial`` (redone)."""
    final, partial = out / name, out / f".{name}.partial"
    if not final.is_dir():
        return
    if partial.exists():
        quarantine(final)  # never deleted
    else:
        os.replace(final, partial)
    (partial / DONE).unlink(missing_ok=True)


def execute_run(task: RunTask) -> RunOutcome:
    """Run (or skip, or resume) one grid point × seed; never raises for a failing run.

    The run works in ``.<name>.partial`` and is renamed to ``<name>`` once it has written
    ``DONE`` and :func:`scenarios.store.verify_run` finds it complete. An exception becomes
    ``error.json`` (type, message, traceback) in the partial directory and a ``"failed"``
    outcome; KeyboardInterrupt and SystemExit are recorded the same way and then re-raised,
    so an interrupted sweep stops and a rerun resumes.
    """
    out = Path(task.out_dir)
    final = out / task.name
    status = run_status(out, task.name)
    if status == "done":
        return RunOutcome(task.name, "skipped", out_dir=task.out_dir)
    partial = out / f".{task.name}.partial"
    start = time.perf_counter()
    try:
        if status == "corrupt" or (final.is_dir() and not (final / DONE).is_file()):
            _reopen_incomplete(out, task.name)
        partial.mkdir(parents=True, exist_ok=True)
        (partial / ERROR).unlink(missing_ok=True)
        atomic_write_json(partial / RUN_RECORD, task.record)
        _limit_threads(task.threads)
        runner = task.runner or _default_runner()
        summary = runner(task.config, partial, resume=True, progress=False)
        problems = verify_run(partial)
        if problems:
            raise StorageError(f"run {task.name} is not complete after its runner returned: {'; '.join(problems)}")
        os.replace(partial, final)
    except BaseException as exc:  # noqa: BLE001 - recorded, and re-raised when it is an interrupt
        err = record_error(partial, exc, task.record) if partial.is_dir() else {"type": type(exc).__name__, "message": str(exc)}
        if not isinstance(exc, Exception):
            raise
        return RunOutcome(task.name, "failed", error=err, seconds=time.perf_counter() - start, out_dir=task.out_dir)
    return RunOutcome(task.name, "done", summary=dict(summary or {}), seconds=time.perf_counter() - start, out_dir=task.out_dir)
