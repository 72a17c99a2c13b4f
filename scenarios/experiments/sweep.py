"""Sweeps: run every grid point × seed of one or more sweep files, resumably, on dask.distributed.

The sweep file and its expansion live in :mod:`scenarios.experiments.sweep_file`; reading and writing
run directories, manifests and summaries in :mod:`scenarios.store`. This module is the
engine: it locks each sweep directory, writes its manifest, runs what is not finished and
summarizes.

Atomicity and resumption (the rule a rerun follows):

* each sweep directory is locked for the whole sweep (a second sweep into it is refused with
  "in use by PID …"), and a directory whose ``sweep.json`` describes another sweep (other
  name, file, variant, seeds or grid points) is refused rather than overwritten;
* a run works in ``.<name>.partial/`` with ``resume=True`` (the run's own checkpoint lets an
  interrupted run continue where it stopped) and is renamed to ``<name>/`` with
  :func:`os.replace` only after its ``DONE`` marker is written and the run is verified
  (:func:`scenarios.store.verify_run`: config parses, one metrics row per round);
* rerunning the same sweep skips every verified ``<name>/``, resumes every ``.partial`` and
  redoes a ``<name>/`` marked finished whose files are incomplete;
* a run that raises writes ``error.json`` (type, message, traceback) into its ``.partial``
  directory and the others go on; the next rerun retries it.

No key material is written: overrides are stored with ``run.key_hex`` replaced by its key
identifier (:func:`scenarios.config.keys.redact_overrides`).

The engine takes an injectable *runner* (``runner(config, out_dir, *, resume, progress) ->
dict``; default :func:`scenarios.runs.run.run_scenario`) and an *executor*
(:class:`InProcessExecutor`, or :class:`DaskExecutor` around a ``distributed.Client``; both in
:mod:`scenarios.experiments.executors`), so it
is testable without training or a cluster. Nothing heavy (TensorFlow, dask) is imported at
module level.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from scenarios.errors import StorageError
from scenarios.experiments.executors import DaskExecutor, InProcessExecutor  # re-exported
from scenarios.config.keys import redact_overrides, resolve_key, warn_simulation_key
from scenarios.store import (
    DONE,
    ERROR,
    MANIFEST,
    RUN_RECORD,
    SUMMARY,
    DirectoryLock,
    atomic_write_json,
    format_summary,
    manifest_identity,
    quarantine,
    read_manifest,
    read_metrics,
    remove_stale_temporaries,
    run_status,
    summarize,
    verify_run,
    write_summary,
)
from scenarios.experiments.sweep_file import Sweep, SweepPoint, load_sweep, validate_sweep

__all__ = [
    "Sweep", "SweepPoint", "RunTask", "RunOutcome", "InProcessExecutor", "DaskExecutor", "load_sweep",
    "validate_sweep", "lock_sweep_dirs", "run_sweep", "execute_run", "summarize", "write_summary",
    "format_summary", "read_metrics", "read_manifest", "MANIFEST", "SUMMARY",
]

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


def _record_error(partial: Path, exc: BaseException, record: dict) -> dict:
    err = {"type": type(exc).__name__, "message": str(exc)}
    try:
        atomic_write_json(partial / ERROR, {**err, "traceback": traceback.format_exc(),
                                            "overrides": record.get("overrides")})
    except (StorageError, OSError):
        pass  # e.g. the disk is full: the outcome still carries the error
    return err


KNOWN_FILES = {MANIFEST, SUMMARY, ".lock", "matched.json", "tune.json"}


def foreign_entries(out: Path, names: list[str]) -> list[str]:
    """Entries of a sweep directory that are neither its records nor runs (finished, partial or
    moved aside) of ``names``: ignored by the sweep and the figures, never touched."""
    known = set(names) | {f".{n}.partial" for n in names}
    found = []
    if not Path(out).is_dir():
        return found
    for p in sorted(Path(out).iterdir()):
        if p.name in known or p.name in KNOWN_FILES or ".damaged-" in p.name:
            continue
        if p.is_file() and not p.is_symlink() and not p.name.startswith("."):
            if p.suffix in (".json", ".csv", ".md", ".txt"):
                continue  # a record another command keeps beside the runs
        found.append(p.name)
    return found


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
        err = _record_error(partial, exc, task.record) if partial.is_dir() else {"type": type(exc).__name__, "message": str(exc)}
        if not isinstance(exc, Exception):
            raise
        return RunOutcome(task.name, "failed", error=err, seconds=time.perf_counter() - start, out_dir=task.out_dir)
    return RunOutcome(task.name, "done", summary=dict(summary or {}), seconds=time.perf_counter() - start, out_dir=task.out_dir)


# --------------------------------------------------------------------------------------
# The sweep
# --------------------------------------------------------------------------------------


def _manifest(sweep: Sweep) -> dict:
    return {
        "name": sweep.name,
        "sweep_file": sweep.path.name,
        "base": sweep.base.name,
        "description": sweep.description,
        "quick": sweep.quick,
        "seeds": list(sweep.seeds),
        "grid_keys": list(sweep.grid_keys),
        "points": [
            {
                "slug": p.slug,
                "label": p.label,
                "grid": p.grid,
                "overrides": redact_overrides(p.overrides),
                "runs": [{"seed": s, "dir": sweep.run_name(p, s)} for s in sweep.seeds],
            }
            for p in sweep.points
        ],
    }


def lock_sweep_dirs(jobs: Iterable[tuple[Sweep, Path]]) -> list[DirectoryLock]:
    """Lock every sweep directory and check it holds this sweep or nothing (before any work).

    Raises :class:`scenarios.errors.BusyError` if another process holds one (nothing is
    touched), or ValueError if one holds a different sweep; every lock taken is released then.
    """
    locks: list[DirectoryLock] = []
    try:
        for sweep, out in jobs:
            lock = DirectoryLock(out, what="sweep directory").acquire()
            locks.append(lock)
            if (Path(out) / MANIFEST).is_file():
                try:
                    stored = read_manifest(out)
                except StorageError:
                    stored = None  # an empty or damaged manifest holds no runs to protect: rewritten
                if stored is not None and manifest_identity(stored) != manifest_identity(_manifest(sweep)):
                    raise ValueError(
                        f"output directory {out} holds another sweep ({stored.get('name')!r} from "
                        f"{stored.get('sweep_file')!r}, {len(stored.get('points', []))} grid points × "
                        f"{len(stored.get('seeds') or [])} seeds{', quick' if stored.get('quick') else ''}); "
                        f"choose another --out, or move that directory away")
            remove_stale_temporaries(out)
    except BaseException:
        for lock in reversed(locks):
            lock.release(remove_directory_if_empty=True)
        raise
    return locks


def _with_key(config: Any, seed: int) -> tuple[Any, bool]:
    """The config with an environment-supplied key put in, and whether the key is seed-derived."""
    run = getattr(config, "run", None)
    if run is None or getattr(getattr(config, "phy", None), "scheme", None) != "floras":
        return config, False
    key = resolve_key(seed=seed, scenario_key_hex=run.key_hex)
    if key.simulated:
        return config, True
    if run.key_hex is None:  # from the environment: carried to the workers in memory only
        config = dataclasses.replace(config, run=dataclasses.replace(run, key_hex=key.key.hex()))
    return config, False


def run_sweep(
    sweeps: Sweep | Iterable[tuple[Sweep, Path]],
    out_dir: str | os.PathLike | None = None,
    *,
    executor=None,
    runner: Runner | None = None,
    loader: Callable[[Path, dict], Any] | None = None,
    progress: bool = True,
    threads: int = 1,
    echo: Callable[[str], None] | None = print,
    locks: list[DirectoryLock] | None = None,
) -> list[RunOutcome]:
    """Validate, then run every grid point × seed of one or several sweeps.

    Parameters
    ----------
    sweeps : Sweep, or iterable of (Sweep, output directory)
        With a single Sweep, ``out_dir`` is its output directory.
    executor : InProcessExecutor or DaskExecutor; default in-process.
    runner : ``runner(config, run_dir, *, resume, progress) -> dict``; default
        :func:`scenarios.runs.run.run_scenario`.
    loader : ``loader(base_path, overrides) -> config``; default
        :func:`scenarios.config.load_scenario`.
    threads : numerical-library threads per run.
    locks : the sweep directories' locks from :func:`lock_sweep_dirs` (taken here if None;
        released here in either case).

    Returns the outcomes (``done``, ``skipped`` or ``failed``) of every run. Writes
    ``sweep.json`` before running and ``summary.csv`` at the end, in each output directory.
    """
    if isinstance(sweeps, Sweep):
        if out_dir is None:
            raise ValueError("out_dir must be given when a single Sweep is passed")
        jobs = [(sweeps, Path(out_dir))]
    else:
        jobs = [(s, Path(o)) for s, o in sweeps]
    # 1. validate everything before any run starts
    tasks: list[RunTask] = []
    simulated = False
    for sweep, out in jobs:
        configs = iter(validate_sweep(sweep, loader=loader))
        for point in sweep.points:
            for seed in sweep.seeds:
                name = sweep.run_name(point, seed)
                config, sim = _with_key(next(configs), seed)
                simulated |= sim
                record = {"sweep": sweep.name, "point": point.slug, "label": point.label, "seed": seed,
                          "base": sweep.base.name, "overrides": redact_overrides(sweep.run_overrides(point, seed))}
                tasks.append(RunTask(out_dir=str(out.resolve()), name=name, config=config, record=record,
                                     runner=runner, threads=threads))
    if locks is None:
        locks = lock_sweep_dirs(jobs)
    try:
        return _run_locked(jobs, tasks, executor=executor, progress=progress, echo=echo, simulated=simulated)
    finally:
        for lock in locks:
            lock.release()


def _run_locked(jobs, tasks, *, executor, progress, echo, simulated) -> list[RunOutcome]:
    # 2. manifests, then skip what is finished
    for sweep, out in jobs:
        atomic_write_json(out / MANIFEST, _manifest(sweep))
    if simulated:
        warn_simulation_key("this sweep")
    for sweep, out in jobs:  # entries that are no run of this sweep: never touched, listed once
        foreign = foreign_entries(out, [t.name for t in tasks if Path(t.out_dir) == out.resolve()])
        if foreign and echo:
            echo(f"sweep directory {out}: ignored {len(foreign)} foreign entr{'y' if len(foreign) == 1 else 'ies'} "
                 f"(not runs of this sweep): {', '.join(foreign)}")
    for t in tasks:  # a damaged run is moved aside (never deleted) and redone
        out, status = Path(t.out_dir), run_status(Path(t.out_dir), t.name)
        if status in ("corrupt", "damaged"):
            path = out / t.name if status == "corrupt" else out / f".{t.name}.partial"
            problems = verify_run(path) if status == "corrupt" else ["cannot be resumed"]
            moved = quarantine(path)
            if echo:
                echo(f"run {t.name} is damaged ({'; '.join(problems)}): moved aside to {moved.name}, redone")
    todo = [t for t in tasks if run_status(Path(t.out_dir), t.name) != "done"]
    outcomes = [RunOutcome(t.name, "skipped", out_dir=t.out_dir) for t in tasks if t not in todo]
    todo, followers, copies = _split_identical(tasks, todo)
    if echo and (followers or copies):
        n = len(copies) + sum(len(targets) for _, targets in followers.values())
        echo(f"{n} run(s) identical to another run of these sweeps (same resolved configuration and seed): "
             f"copied from it instead of run again (scenarios/experiments/identical.py)")
    executor = executor or InProcessExecutor()
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(tasks), initial=len(outcomes), unit="run", desc="sweep", file=sys.stderr, dynamic_ncols=True)
    failed = 0
    try:
        for source, target in copies:
            outcomes.append(_copy_outcome(source, target))
            if bar is not None:
                bar.update(1)
        for outcome in executor.map_unordered(execute_run, todo):
            outcomes.append(outcome)
            source, targets = followers.get((outcome.out_dir, outcome.name), (None, []))
            for target in targets:
                copied = _copy_outcome(source, target) if outcome.status == "done" else RunOutcome(
                    target.name, "failed", error={"type": "IdenticalRunFailed",
                                                  "message": f"the identical run {outcome.name} failed: "
                                                             f"{(outcome.error or {}).get('message', '')}"}, out_dir=target.out_dir)
                outcomes.append(copied)
                if bar is not None:
                    bar.update(1)
            if outcome.status == "failed":
                failed += 1
                if echo:
                    msg = (outcome.error or {}).get("message", "")
                    line = f"run {outcome.name} failed: {(outcome.error or {}).get('type')}: {msg}"
                    (bar.write if bar else echo)(line)
            if bar is not None:
                bar.update(1)
                bar.set_postfix(failed=failed, refresh=False)
    finally:
        if bar is not None:
            bar.close()
    # 3. summaries
    for sweep, out in jobs:
        rows = summarize(out)
        write_summary(out, rows)
        if echo:
            echo(format_summary(rows, title=f"{sweep.name} ({out})"))
    return outcomes


def _split_identical(tasks: list, todo: list) -> tuple[list, dict, list]:
    """(tasks to execute, {(out_dir, name) of a task executed: (that task, identical tasks copied after it)},
    [(finished source, task copied now)]): :mod:`scenarios.experiments.identical`."""
    from scenarios.experiments.identical import finished_source, group_identical

    waiting = {(t.out_dir, t.name) for t in todo}
    followers: dict = {}
    copies: list = []
    drop: set = set()
    for group in group_identical(tasks).values():
        pending = [t for t in group if (t.out_dir, t.name) in waiting]
        if not pending:
            continue
        source = finished_source(group)
        if source is not None:
            copies += [(source, t) for t in pending]
            drop |= {(t.out_dir, t.name) for t in pending}
        elif len(pending) > 1:
            followers[(pending[0].out_dir, pending[0].name)] = (pending[0], pending[1:])
            drop |= {(t.out_dir, t.name) for t in pending[1:]}
    return [t for t in todo if (t.out_dir, t.name) not in drop], followers, copies


def _copy_outcome(source, target) -> RunOutcome:
    """Copy ``source``'s finished run to ``target`` (:func:`scenarios.experiments.identical.copy_run`) as an outcome."""
    from scenarios.experiments.identical import copy_run

    start = time.perf_counter()
    try:
        problems = copy_run(source, target)
    except (OSError, StorageError) as exc:
        return RunOutcome(target.name, "failed", error={"type": type(exc).__name__, "message": str(exc)}, out_dir=target.out_dir)
    if problems:
        return RunOutcome(target.name, "failed", out_dir=target.out_dir,
                          error={"type": "StorageError", "message": f"copy of {source.name} is incomplete: {'; '.join(problems)}"})
    return RunOutcome(target.name, "copied", summary={"copied_from": source.name}, seconds=time.perf_counter() - start,
                      out_dir=target.out_dir)
