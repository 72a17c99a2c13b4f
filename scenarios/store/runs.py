"""Run directories and sweep manifests: names, reading, and the check that a run is finished.

A *run directory* (written by :func:`scenarios.run.run_scenario`) holds ``config.json``,
``metrics.csv`` (header and one row per round), ``DONE`` (written last) and, while it runs,
``checkpoint.npz``. A *sweep directory* holds ``sweep.json`` (the manifest), one
``<name>/`` per finished run, ``.<name>.partial/`` per unfinished one and ``summary.csv``.

A run counts as finished only when :func:`verify_run` finds nothing wrong: ``DONE`` present,
``config.json`` parses, ``metrics.csv`` has its header and exactly one row per round
``1..rounds`` (``rounds`` from the stored configuration).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
from pathlib import Path
from typing import Any

from scenarios.errors import StorageError

__all__ = [
    "CONFIG", "METRICS", "DONE", "CHECKPOINT", "ERROR", "RUN_RECORD", "MANIFEST", "SUMMARY",
    "read_json", "read_config", "read_metrics", "read_metric_rows", "verify_run", "is_finished",
    "run_status", "read_manifest", "manifest_identity", "to_float",
]

CONFIG = "config.json"
METRICS = "metrics.csv"
DONE = "DONE"
CHECKPOINT = "checkpoint.npz"
ERROR = "error.json"
RUN_RECORD = "sweep_run.json"
MANIFEST = "sweep.json"
SUMMARY = "summary.csv"


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


def _read_metrics_text(run_dir: str | os.PathLike) -> str:
    path = Path(run_dir) / METRICS
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise StorageError(f"{path} is missing") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise StorageError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None


def read_metric_rows(run_dir: str | os.PathLike) -> list[dict]:
    """Rows of ``metrics.csv`` as dicts of strings (empty cells as ""); StorageError if absent."""
    return list(csv.DictReader(io.StringIO(_read_metrics_text(run_dir), newline="")))


def read_metrics(run_dir: str | os.PathLike) -> dict[str, list[float]]:
    """metrics.csv as columns of floats ("inf", "nan" and empty cells become floats)."""
    reader = csv.DictReader(io.StringIO(_read_metrics_text(run_dir), newline=""))
    cols: dict[str, list[float]] = {k: [] for k in (reader.fieldnames or [])}
    for row in reader:
        for key in cols:
            cols[key].append(to_float(row.get(key)))
    return cols


def verify_run(run_dir: str | os.PathLike, *, rounds: int | None = None, require_done: bool = True) -> list[str]:
    """What is wrong with a run directory that should be finished (empty list: nothing).

    ``rounds`` defaults to ``run.rounds`` of the stored ``config.json``. Checks ``DONE``
    (unless ``require_done`` is false), that ``config.json`` parses as an object, and that
    ``metrics.csv`` holds the header and the rows ``round = 1..rounds`` in order.
    """
    run_dir = Path(run_dir)
    problems = []
    if require_done and not (run_dir / DONE).is_file():
        problems.append(f"{DONE} marker missing")
    try:
        cfg = read_config(run_dir)
    except StorageError as exc:
        problems.append(str(exc))
        cfg = {}
    if rounds is None:
        stored = (cfg.get("config") or {}).get("run", {}).get("rounds") if isinstance(cfg.get("config"), dict) else None
        rounds = stored if isinstance(stored, int) else None
    try:
        rows = read_metric_rows(run_dir)
    except StorageError as exc:
        problems.append(str(exc))
        return problems
    got = [r.get("round") for r in rows]
    if rounds is not None and len(rows) != rounds:
        problems.append(f"{METRICS} has {len(rows)} rows, expected {rounds}")
    elif got != [str(i + 1) for i in range(len(rows))]:
        problems.append(f"{METRICS} rounds are not 1..{len(rows)} in order")
    return problems


def is_finished(run_dir: str | os.PathLike) -> bool:
    return not verify_run(run_dir)


def run_status(out_dir: str | os.PathLike, name: str) -> str:
    """``done`` (verified), ``corrupt`` (DONE but incomplete), ``failed``, ``unfinished`` or ``missing``."""
    out = Path(out_dir)
    if (out / name / DONE).is_file():
        return "done" if not verify_run(out / name) else "corrupt"
    if (out / f".{name}.partial" / ERROR).is_file():
        return "failed"
    if (out / f".{name}.partial").is_dir() or (out / name).is_dir():
        return "unfinished"
    return "missing"


def read_manifest(out_dir: str | os.PathLike) -> dict:
    """``sweep.json`` of a sweep directory (ValueError if absent; StorageError if empty or damaged)."""
    path = Path(out_dir) / MANIFEST
    if not path.is_file():
        raise ValueError(f"results directory must contain {MANIFEST} written by `floras sweep` (got {str(out_dir)!r})")
    data = read_json(path, what="sweep manifest")
    if not isinstance(data, dict) or not isinstance(data.get("points"), list):
        raise StorageError(f"sweep manifest {path} has no list of grid points; it was not written by `floras sweep`")
    return data


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
