"""A sweep's output directories: their lock and manifest, and the entries in them that are not its runs.

Before any run starts every sweep directory is locked and checked to hold this sweep, a part of it (fewer seeds or
grid points: :func:`extension`, so a sweep grows in place), or nothing (:func:`lock_sweep_dirs`); entries that are
no run of this sweep are listed once and never touched (:func:`foreign_entries`); a damaged run is moved aside, never
deleted, and redone (:func:`move_damaged_aside`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

from scenarios.config.keys import redact_overrides
from scenarios.errors import StorageError
from scenarios.experiments.sweep_file import Sweep
from scenarios.store import (
    MANIFEST,
    SUMMARY,
    DirectoryLock,
    manifest_identity,
    quarantine,
    read_manifest,
    remove_stale_temporaries,
    run_status,
    verify_run,
)

__all__ = [
    "KNOWN_FILES", "extension", "extension_note", "finished_runs", "foreign_entries", "lock_sweep_dirs", "move_damaged_aside",
    "precheck_sweep_dir", "sweep_manifest",
]

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


def sweep_manifest(sweep: Sweep) -> dict:
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


def _another_sweep(out, stored: dict) -> ValueError:
    return ValueError(
        f"output directory {out} holds another sweep ({stored.get('name')!r} from "
        f"{stored.get('sweep_file')!r}, {len(stored.get('points', []))} grid points × "
        f"{len(stored.get('seeds') or [])} seeds{', quick' if stored.get('quick') else ''}); "
        f"choose another --out, or move that directory away")


def precheck_sweep_dir(sweep: Sweep, out, *, runs_named: bool = True) -> None:
    """Before a sweep's calibration or tuning: ValueError when ``out`` already holds a sweep that cannot be this
    one, or a part of it, whatever the calibration finds (another name, file, base or variant, or a seed or grid
    point this sweep lacks: :func:`extension`; the points found infeasible are only known after calibration, so the
    full check is :func:`lock_sweep_dirs`'s). Unlocked and read-only: a damaged manifest is left to that check.

    ``sweep`` carries the learning rates its runs will have (a ``--tuned`` record applied); ``runs_named=False``
    when they are chosen only later (``--tune``): the run names, which follow η, are then left to that check."""
    if not (Path(out) / MANIFEST).is_file():
        return
    try:
        stored = read_manifest(out)
    except StorageError:
        return
    mine = sweep_manifest(sweep)
    if not runs_named:
        stored_cmp = {**stored, "points": [{**p, "runs": []} for p in stored.get("points", [])]}
        mine = {**mine, "points": [{**p, "runs": []} for p in mine["points"]]}
    else:
        stored_cmp = stored
    if extension(stored_cmp, mine) is None:
        raise _another_sweep(out, stored)


def extension(stored: dict, mine: dict) -> tuple[list[int], int] | None:
    """How sweep manifest ``mine`` grows the stored one: (seeds added, grid points added); ([], 0) when they are
    the same sweep; None when ``mine`` is another sweep or would drop a stored run (another name, file, base or
    variant, a stored seed or grid point it lacks, or a stored run it names differently). Runs are named by their
    point's resolved configuration and seed (``Sweep.run_name``), so every stored run stays a run of the grown sweep."""
    a, b = manifest_identity(stored), manifest_identity(mine)
    if any(a[k] != b[k] for k in ("name", "sweep_file", "base", "quick")):
        return None
    old_seeds, new_seeds = list(a["seeds"] or []), list(b["seeds"] or [])
    if not set(old_seeds) <= set(new_seeds):
        return None
    runs = {slug: set(dirs) for slug, dirs in b["points"]}
    if any(slug not in runs or not set(dirs) <= runs[slug] for slug, dirs in a["points"]):
        return None
    return [s for s in new_seeds if s not in old_seeds], len(runs) - len({slug for slug, _ in a["points"]})


def extension_note(out, manifest: dict) -> str | None:
    """The line saying what ``manifest`` adds to the sweep stored in ``out``; None when nothing is stored there, the
    manifest is unreadable, or it holds the same sweep."""
    try:
        grown = extension(read_manifest(out), manifest)
    except (ValueError, StorageError):
        return None
    if not grown or grown == ([], 0):
        return None
    seeds, points = grown
    added = [f"seed(s) {', '.join(map(str, seeds))}" if seeds else "", f"{points} grid point(s)" if points else ""]
    return f"sweep directory {out}: extended with {' and '.join(a for a in added if a)}; its finished runs are kept"


def lock_sweep_dirs(jobs: Iterable[tuple[Sweep, Path]]) -> list[DirectoryLock]:
    """Lock every sweep directory and check it holds this sweep, a part of it, or nothing (before any work).

    A part is the same sweep file with fewer seeds or grid points (:func:`extension`): its finished runs are kept
    and the sweep adds the rest. Raises :class:`scenarios.errors.BusyError` if another process holds one (nothing
    is touched), or ValueError if one holds a different sweep or more than this one; every lock taken is released
    then.
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
                if stored is not None and extension(stored, sweep_manifest(sweep)) is None:
                    raise _another_sweep(out, stored)
            remove_stale_temporaries(out)
    except BaseException:
        for lock in reversed(locks):
            lock.release(remove_directory_if_empty=True)
        raise
    return locks


def move_damaged_aside(tasks: list, echo: Callable[[str], None] | None) -> None:
    """A damaged run is moved aside (never deleted) and redone."""
    for t in tasks:
        out, status = Path(t.out_dir), run_status(Path(t.out_dir), t.name)
        if status in ("corrupt", "damaged"):
            path = out / t.name if status == "corrupt" else out / f".{t.name}.partial"
            problems = verify_run(path) if status == "corrupt" else ["cannot be resumed"]
            moved = quarantine(path)
            if echo:
                echo(f"run {t.name} is damaged ({'; '.join(problems)}): moved aside to {moved.name}, redone")


def finished_runs(feasible: Sweep, planned: list, out) -> tuple[set, float]:
    """The runs of ``feasible`` (a matched sweep restricted to its feasible points; ``planned``: its
    ``scenarios.experiments.matched.PlannedPoint`` list) already finished in its output folder ``out``, as (sweep
    name, slug, seed), and their predicted seconds: a rerun, or a sweep grown in place, skips them."""
    from scenarios.experiments.matched_timing import run_seconds

    by_slug = {p.slug: p for p in planned}
    done, seconds = set(), 0.0
    for point in feasible.points:
        p = by_slug[point.slug]
        for seed in feasible.seeds:
            if run_status(Path(out), feasible.run_name(point, seed)) == "done":
                done.add((feasible.name, point.slug, seed))
                seconds += run_seconds(dataset=p.dataset, scheme=p.scheme, rounds=p.rounds, K=p.K, M=p.M,
                                       batch_size=p.batch_size)
    return done, seconds
