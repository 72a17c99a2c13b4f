"""Sweeps: run every grid point × seed of one or more sweep files, resumably, on dask.distributed.

The sweep file and its expansion live in :mod:`scenarios.experiments.sweep_file`; reading and writing
run directories, manifests and summaries in :mod:`scenarios.store`. This module is the
engine: it locks each sweep directory, writes its manifest, runs what is not finished and
summarizes. One run's task, outcome and execution are in :mod:`.outcome` and :mod:`.run_task`;
the sweep directories' lock, manifest and housekeeping in :mod:`.sweep_dirs`; identical runs in
:mod:`.identical`.

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
import sys
from pathlib import Path
from typing import Any, Callable, Iterable

from scenarios.config.keys import redact_overrides, resolve_key, warn_simulation_key
from scenarios.experiments.executors import DaskExecutor, InProcessExecutor  # re-exported
from scenarios.experiments.outcome import RunOutcome, Runner, RunTask
from scenarios.experiments.run_task import execute_run
from scenarios.experiments.sweep_dirs import (
    extension_note,
    foreign_entries,
    lock_sweep_dirs,
    move_damaged_aside,
    sweep_manifest,
)
from scenarios.experiments.sweep_file import Sweep, SweepPoint, load_sweep, validate_sweep
from scenarios.store import (
    MANIFEST,
    SUMMARY,
    DirectoryLock,
    atomic_write_json,
    format_summary,
    read_manifest,
    read_metrics,
    run_status,
    summarize,
    write_summary,
)

__all__ = [
    "Sweep", "SweepPoint", "RunTask", "RunOutcome", "InProcessExecutor", "DaskExecutor", "load_sweep",
    "validate_sweep", "lock_sweep_dirs", "run_sweep", "execute_run", "summarize", "write_summary",
    "format_summary", "read_metrics", "read_manifest", "MANIFEST", "SUMMARY",
]


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
    _prepare_dirs(jobs, tasks, echo=echo, simulated=simulated)
    outcomes, todo, followers, copies = _select(tasks, echo=echo)
    _execute(tasks, outcomes, todo, followers, copies, executor=executor, progress=progress, echo=echo)
    _summarize(jobs, echo=echo)
    return outcomes


def _prepare_dirs(jobs, tasks, *, echo, simulated) -> None:
    """Manifests written; foreign entries listed once; damaged runs moved aside."""
    for sweep, out in jobs:
        manifest = sweep_manifest(sweep)
        note = extension_note(out, manifest)
        if note and echo:
            echo(note)
        atomic_write_json(out / MANIFEST, manifest)
    if simulated:
        warn_simulation_key("this sweep")
    for sweep, out in jobs:  # entries that are no run of this sweep: never touched, listed once
        foreign = foreign_entries(out, [t.name for t in tasks if Path(t.out_dir) == out.resolve()])
        if foreign and echo:
            echo(f"sweep directory {out}: ignored {len(foreign)} foreign entr{'y' if len(foreign) == 1 else 'ies'} "
                 f"(not runs of this sweep): {', '.join(foreign)}")
    move_damaged_aside(tasks, echo)


def _select(tasks, *, echo):
    """(outcomes of the finished runs, tasks to execute, their identical followers, copies to make now)."""
    from scenarios.experiments.identical import split_identical

    todo = [t for t in tasks if run_status(Path(t.out_dir), t.name) != "done"]
    outcomes = [RunOutcome(t.name, "skipped", out_dir=t.out_dir) for t in tasks if t not in todo]
    todo, followers, copies = split_identical(tasks, todo)
    if echo and (followers or copies):
        n = len(copies) + sum(len(targets) for _, targets in followers.values())
        echo(f"{n} run(s) identical to another run of these sweeps (same resolved configuration and seed): "
             f"copied from it instead of run again (scenarios/experiments/identical.py)")
    return outcomes, todo, followers, copies


def _execute(tasks, outcomes, todo, followers, copies, *, executor, progress, echo) -> None:
    """Copy, then execute (on ``executor``) and copy after, appending every outcome to ``outcomes``."""
    from scenarios.experiments.identical import copy_outcome

    executor = executor or InProcessExecutor()
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(tasks), initial=len(outcomes), unit="run", desc="sweep", file=sys.stderr, dynamic_ncols=True)
    failed = 0
    try:
        for source, target in copies:
            outcomes.append(copy_outcome(source, target))
            if bar is not None:
                bar.update(1)
        for outcome in executor.map_unordered(execute_run, todo):
            outcomes.append(outcome)
            source, targets = followers.get((outcome.out_dir, outcome.name), (None, []))
            for target in targets:
                copied = copy_outcome(source, target) if outcome.status == "done" else RunOutcome(
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


def _summarize(jobs, *, echo) -> None:
    """Each sweep directory's ``summary.csv``, echoed as a table."""
    for sweep, out in jobs:
        rows = summarize(out)
        write_summary(out, rows)
        if echo:
            echo(format_summary(rows, title=f"{sweep.name} ({out})"))
