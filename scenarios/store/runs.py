"""Run directories and sweep manifests: names and reading (the check that a run is finished, and a
run's status, are in :mod:`scenarios.store.verify`).

A *run directory* (written by :func:`scenarios.runs.run.run_scenario`) holds ``config.json``,
``metrics.csv`` (header and one row per round), ``DONE`` (written last) and, while it runs,
``checkpoint.npz``. A *sweep directory* holds ``sweep.json`` (the manifest), one
``<name>/`` per finished run, ``.<name>.partial/`` per unfinished one and ``summary.csv``.

A run counts as finished only when :func:`verify_run` finds nothing wrong: ``DONE`` present,
``config.json`` parses as an object, ``metrics.csv`` has its header and exactly one row per round
``1..rounds`` (``rounds`` from the stored configuration), every row whole (as many cells as the
header, ending in a newline), every cell empty or a number (finite in the columns that promise
it) and, when ``DONE`` holds a content record (:func:`write_done`: sha256 of ``config.json`` and
``metrics.csv``, row count, columns), files that still match it. ``DONE`` written by older code
is empty: such a run is accepted when the content check alone passes.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import time
from pathlib import Path
from typing import Any

from scenarios.errors import StorageError

__all__ = [
    "CONFIG", "METRICS", "DONE", "CHECKPOINT", "ERROR", "RUN_RECORD", "MANIFEST", "SUMMARY",
    "read_json", "read_config", "read_metrics", "read_metric_rows", "read_metrics_text", "read_class_accuracy", "CLASSES",
    "read_manifest", "manifest_identity", "to_float", "DONE_FORMAT", "quarantine", "DAMAGED_TAG",
]

CONFIG = "config.json"
METRICS = "metrics.csv"
PERSONAL = "prifedsync.csv"  # PriFedSync runs only: personalised and global accuracy per evaluated round
CLASSES = "class_accuracy.csv"  # every run (written at its end): each label's test accuracy per evaluated round
DONE = "DONE"
CHECKPOINT = "checkpoint.npz"
ERROR = "error.json"
RUN_RECORD = "sweep_run.json"
MANIFEST = "sweep.json"
SUMMARY = "summary.csv"
DONE_FORMAT = "floras-done/1"
DAMAGED_TAG = ".damaged-"
# columns whose non-empty cells are promised finite (the others may hold inf or nan: epsilon = inf)


def quarantine(path: str | os.PathLike) -> Path:
    """Move a damaged run (directory or file) aside to ``<name>.damaged-<UTC time>``; never deletes.

    A leading dot and a ``.partial`` suffix are dropped from the name (``.x.partial`` becomes
    ``x.damaged-…``). Returns the new path.
    """
    path = Path(path)
    name = path.name
    if name.startswith(".") and name.endswith(".partial"):
        name = name[1:-len(".partial")]
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    target = path.with_name(f"{name}{DAMAGED_TAG}{stamp}")
    n = 1
    while target.exists() or target.is_symlink():
        target = path.with_name(f"{name}{DAMAGED_TAG}{stamp}-{n}")
        n += 1
    os.replace(path, target)
    return target


def to_float(value: Any) -> float:
    """A cell as float: "inf", "nan" as such, empty or unparsable as NaN."""
    if value is None or value == "":
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def read_json(path: str | os.PathLike, *, what: str = "file") -> Any:
    """Parse a JSON file; a missing, empty or invalid file is a one-line :class:`StorageError`."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise StorageError(f"{what} {path} is missing") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise StorageError(f"cannot read {what} {path}: {getattr(exc, 'strerror', None) or exc}") from None
    if not text.strip():
        raise StorageError(f"{what} {path} is empty")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise StorageError(f"{what} {path} is not valid JSON ({exc.msg} at line {exc.lineno}); it is truncated or damaged") from None


def read_config(run_dir: str | os.PathLike) -> dict:
    data = read_json(Path(run_dir) / CONFIG, what="run configuration")
    if not isinstance(data, dict):
        raise StorageError(f"run configuration {Path(run_dir) / CONFIG} is not a JSON object")
    return data


def read_metrics_text(run_dir: str | os.PathLike) -> str:
    path = Path(run_dir) / METRICS
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise StorageError(f"{path} is missing") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise StorageError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None


def read_metric_rows(run_dir: str | os.PathLike) -> list[dict]:
    """Rows of ``metrics.csv`` as dicts of strings (empty cells as ""); StorageError if absent."""
    return list(csv.DictReader(io.StringIO(read_metrics_text(run_dir), newline="")))


def read_metrics(run_dir: str | os.PathLike) -> dict[str, list[float]]:
    """metrics.csv as columns of floats ("inf", "nan" and empty cells become floats)."""
    reader = csv.DictReader(io.StringIO(read_metrics_text(run_dir), newline=""))
    cols: dict[str, list[float]] = {k: [] for k in (reader.fieldnames or [])}
    for row in reader:
        for key in cols:
            cols[key].append(to_float(row.get(key)))
    return cols


def read_personal(run_dir: str | os.PathLike) -> dict[str, list[float]]:
    """``prifedsync.csv`` of a PriFedSync run (``training.mode = "prifedsync"``) as columns of floats:
    round, personal_accuracy, global_accuracy, clients_seen; StorageError if absent or unreadable."""
    path = Path(run_dir) / PERSONAL
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise StorageError(f"{path} is missing (a run of training.mode = 'prifedsync' writes it)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise StorageError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    cols: dict[str, list[float]] = {k: [] for k in (reader.fieldnames or [])}
    for row in reader:
        for key in cols:
            cols[key].append(to_float(row.get(key)))
    return cols


def read_class_accuracy(run_dir: str | os.PathLike) -> dict | None:
    """``class_accuracy.csv`` of a finished run: {"round": [n] float, "accuracy": [n, C] float (NaN: a label absent
    from the test set, or an evaluation made before a resume that carried no per-label record)}; None for a run
    written before the file existed. StorageError if present but unreadable."""
    path = Path(run_dir) / CLASSES
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise StorageError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    rows = list(csv.reader(io.StringIO(text, newline="")))
    if not rows or not rows[0] or rows[0][0] != "round":
        raise StorageError(f"{path} has no header starting with round")
    body = [[to_float(v) for v in r] for r in rows[1:]]
    if any(len(r) != len(rows[0]) for r in body):
        raise StorageError(f"{path} has a row whose length differs from its header's ({len(rows[0])} cells)")
    import numpy as np

    arr = np.array(body, dtype=np.float64).reshape(len(body), len(rows[0]))
    return {"round": arr[:, 0], "accuracy": arr[:, 1:]}


def read_manifest(out_dir: str | os.PathLike) -> dict:
    """``sweep.json`` of a sweep directory (ValueError if absent; StorageError if empty or damaged)."""
    path = Path(out_dir) / MANIFEST
    if not path.is_file():
        raise ValueError(f"results directory must contain {MANIFEST} written by `floras sweep` (got {str(out_dir)!r})")
    data = read_json(path, what="sweep manifest")
    if not isinstance(data, dict) or not isinstance(data.get("points"), list):
        raise StorageError(f"sweep manifest {path} has no list of grid points; it was not written by `floras sweep`")
    for i, point in enumerate(data["points"]):
        bad = _bad_point(point)
        if bad:
            raise StorageError(f"sweep manifest {path} is damaged: points[{i}] {bad}; rerun the sweep to rewrite it")
    return data


def _bad_point(point: Any) -> str | None:
    """What is wrong with one manifest grid point (None: nothing)."""
    if not isinstance(point, dict):
        return f"is {json.dumps(point)[:40]}, not an object"
    if not isinstance(point.get("slug"), str) or not isinstance(point.get("runs"), list):
        return "lacks a slug or a list of runs"
    if not isinstance(point.get("grid", {}), dict):
        return "has a grid that is not an object"
    for j, run in enumerate(point["runs"]):
        name = run.get("dir") if isinstance(run, dict) else None
        if (not isinstance(name, str) or not name or name.startswith(".") or "/" in name or "\\" in name
                or not isinstance(run.get("seed"), int)):
            return f"runs[{j}] is {json.dumps(run)[:40]}, not an object with a seed and a plain directory name"
    return None


def manifest_identity(manifest: dict) -> dict:
    """What makes two manifests the same sweep: name, files, variant, seeds and grid points."""
    return {
        "name": manifest.get("name"),
        "sweep_file": manifest.get("sweep_file"),
        "base": manifest.get("base"),
        "quick": manifest.get("quick"),
        "seeds": manifest.get("seeds"),
        "points": [(p.get("slug"), [r.get("dir") for r in p.get("runs", [])]) for p in manifest.get("points", [])],
    }
