"""Identical runs across the sweeps of one invocation: run once, copy the finished result.

Two runs are *identical* when their fully resolved scenario configurations are equal (every
key, the seed included: :meth:`scenarios.config.ScenarioConfig.to_dict`, compared as canonical JSON).
A run is a deterministic function of its configuration (the seeded streams of docs/model.md), so the second
one would only repeat the first. This happens in the matched comparison, whose budget and SNR
sweeps share their ε = 8, 20 dB points with the main sweep.

The rule :func:`scenarios.experiments.sweep.run_sweep` follows, per group of identical runs:

* if one of them is already finished, every unfinished one is copied from it at once;
* otherwise the first (in sweep order) runs, and the others are copied once it has finished
  (if it fails, the others are reported failed with the same error and run on the next rerun).

A copy works like a run: its files go into ``.<name>.partial``, it is verified
(:func:`scenarios.store.verify_run`), and renamed to ``<name>`` atomically. Its
``sweep_run.json`` is the copy's own record plus ``copied_from`` (the source run's directory,
relative to the sweep root). The source's ``checkpoint.npz`` is not copied (a finished run has
no use for it). Key material never enters the identity written anywhere: the identity is only
held in memory.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any, Iterable

from scenarios.errors import StorageError
from scenarios.experiments.outcome import RunOutcome
from scenarios.store import CHECKPOINT, RUN_RECORD, atomic_write_json, run_status, verify_run

__all__ = ["identity", "group_identical", "copy_run", "split_identical", "copy_outcome"]


def identity(config: Any) -> str | None:
    """Canonical JSON of a resolved configuration, or None when it cannot be compared
    (a test's stand-in object without ``to_dict``)."""
    to_dict = getattr(config, "to_dict", None)
    if to_dict is None:
        return None
    return json.dumps(to_dict(), sort_keys=True, default=str)


def group_identical(tasks: Iterable) -> dict[str, list]:
    """{identity: tasks with that identity, in order} for identities shared by ≥ 2 tasks."""
    groups: dict[str, list] = {}
    for t in tasks:
        key = identity(t.config)
        if key is not None:
            groups.setdefault(key, []).append(t)
    return {k: v for k, v in groups.items() if len(v) > 1}


def finished_source(group: list):
    """The first task of ``group`` whose run is finished, else None."""
    for t in group:
        if run_status(Path(t.out_dir), t.name) == "done":
            return t
    return None


def copy_run(source, target) -> list[str]:
    """Copy the finished run of task ``source`` into task ``target``'s run directory.

    Returns the problems :func:`scenarios.store.verify_run` finds in the copy (empty: copied and
    renamed into place). Raises OSError / StorageError on a failed write.
    """
    src = Path(source.out_dir) / source.name
    out = Path(target.out_dir)
    partial, final = out / f".{target.name}.partial", out / target.name
    if partial.exists():
        shutil.rmtree(partial)
    partial.mkdir(parents=True)
    for item in sorted(src.iterdir()):
        if item.is_file() and item.name not in (CHECKPOINT, RUN_RECORD):
            shutil.copy2(item, partial / item.name)
    root = os.path.commonpath([str(src), str(out)])
    atomic_write_json(partial / RUN_RECORD, {**target.record, "copied_from": os.path.relpath(src, root)})
    problems = verify_run(partial)
    if problems:
        return problems
    os.replace(partial, final)
    return []


def split_identical(tasks: list, todo: list) -> tuple[list, dict, list]:
    """(tasks to execute, {(out_dir, name) of a task executed: (that task, identical tasks copied after it)},
    [(finished source, task copied now)]): :mod:`scenarios.experiments.identical`."""
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


def copy_outcome(source, target) -> RunOutcome:
    """Copy ``source``'s finished run to ``target`` (:func:`scenarios.experiments.identical.copy_run`) as an outcome."""
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
