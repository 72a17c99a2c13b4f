"""Whether a run is finished and whole (:func:`verify_run`), its ``DONE`` record, and a run's status.

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
import hashlib
import io
import json
import math
import os
from pathlib import Path

from scenarios.errors import StorageError
from scenarios.store.runs import CONFIG, DONE, DONE_FORMAT, ERROR, METRICS, read_config, read_metrics_text

__all__ = ["FINITE_COLUMNS", "done_record", "write_done", "verify_run", "is_finished", "run_status"]

FINITE_COLUMNS = ("round", "test_accuracy", "wall_time_s", "admitted", "channel_uses")


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def done_record(run_dir: str | os.PathLike) -> dict:
    """What ``DONE`` records of a finished run: digests of its files, row count and columns."""
    run_dir = Path(run_dir)
    text = read_metrics_text(run_dir)
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, [])
    rows = sum(1 for _ in reader)
    return {"format": DONE_FORMAT, "rows": rows, "columns": header,
            "sha256": {CONFIG: _sha256(run_dir / CONFIG), METRICS: _sha256(run_dir / METRICS)}}


def write_done(run_dir: str | os.PathLike) -> Path:
    """Write ``DONE`` (atomically) holding :func:`done_record` of the run's current files."""
    from scenarios.store.files import atomic_write_json

    return atomic_write_json(Path(run_dir) / DONE, done_record(run_dir))


def _done_content(run_dir: Path) -> tuple[dict | None, list[str]]:
    """The content record in ``DONE`` (None: empty legacy marker), and what is wrong with it."""
    try:
        text = (run_dir / DONE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, [f"cannot read {DONE}: {getattr(exc, 'strerror', None) or exc}"]
    if not text.strip():
        return None, []
    try:
        record = json.loads(text)
    except json.JSONDecodeError:
        return None, [f"{DONE} is damaged (not the JSON content record)"]
    if (not isinstance(record, dict) or not isinstance(record.get("sha256"), dict)
            or not isinstance(record.get("rows"), int) or not isinstance(record.get("columns"), list)):
        return None, [f"{DONE} is damaged (its content record lacks sha256, rows or columns)"]
    return record, []


def _check_cells(header: list[str], rows: list[list[str]]) -> list[str]:
    problems = []
    if not header or "round" not in header:
        return [f"{METRICS} has no header with a round column"]
    if len(set(header)) != len(header) or any(not h.strip() for h in header):
        problems.append(f"{METRICS} header has empty or repeated column names")
    for i, row in enumerate(rows, start=1):
        if len(row) != len(header):
            problems.append(f"{METRICS} row {i} has {len(row)} cells, the header {len(header)} (cut or damaged)")
            break
        bad = None
        for col, cell in zip(header, row):
            if cell == "":
                continue
            try:
                value = float(cell)
            except ValueError:
                bad = f"{METRICS} row {i} column {col} holds {cell[:20]!r}, not a number"
                break
            if col in FINITE_COLUMNS and not math.isfinite(value):
                bad = f"{METRICS} row {i} column {col} is {cell!r}, promised finite"
                break
        if bad:
            problems.append(bad)
            break
    return problems


def verify_run(run_dir: str | os.PathLike, *, rounds: int | None = None, require_done: bool = True) -> list[str]:
    """What is wrong with a run directory that should be finished (empty list: nothing).

    ``rounds`` defaults to ``run.rounds`` of the stored ``config.json``. Checks ``DONE``
    (unless ``require_done`` is false), that ``config.json`` parses as an object, that
    ``metrics.csv`` holds the header and the rows ``round = 1..rounds`` in order, whole and
    numeric (module docstring), and the content record of ``DONE`` when it holds one.
    """
    run_dir = Path(run_dir)
    problems = []
    if not run_dir.is_dir():
        return [f"{run_dir} is not a directory"]
    record = None
    if require_done:
        if not (run_dir / DONE).is_file():
            problems.append(f"{DONE} marker missing")
        else:
            record, found = _done_content(run_dir)
            problems += found
    try:
        cfg = read_config(run_dir)
    except StorageError as exc:
        problems.append(str(exc))
        cfg = {}
    if rounds is None:
        inner = cfg.get("config")
        run = inner.get("run") if isinstance(inner, dict) else None
        stored = run.get("rounds") if isinstance(run, dict) else None
        rounds = stored if isinstance(stored, int) and not isinstance(stored, bool) else None
    try:
        text = read_metrics_text(run_dir)
    except StorageError as exc:
        problems.append(str(exc))
        return problems
    if text and not text.endswith("\n"):
        problems.append(f"{METRICS} does not end with a newline (cut mid-row)")
    table = list(csv.reader(io.StringIO(text, newline="")))
    header, rows = (table[0], table[1:]) if table else ([], [])
    problems += _check_cells(header, rows)
    got = [r[header.index("round")] if "round" in header and len(r) > header.index("round") else None for r in rows]
    if rounds is not None and len(rows) != rounds:
        problems.append(f"{METRICS} has {len(rows)} rows, expected {rounds}")
    elif got != [str(i + 1) for i in range(len(rows))]:
        problems.append(f"{METRICS} rounds are not 1..{len(rows)} in order")
    defined = cfg.get("metrics")
    if isinstance(defined, dict) and header and set(defined) != set(header):
        problems.append(f"{METRICS} columns {sorted(set(header) ^ set(defined))} differ from those config.json defines")
    if record is not None:
        if record["rows"] != len(rows):
            problems.append(f"{METRICS} has {len(rows)} rows, {DONE} recorded {record['rows']}")
        if record["columns"] != header:
            problems.append(f"{METRICS} columns differ from those {DONE} recorded")
        for name in (CONFIG, METRICS):
            want = record["sha256"].get(name)
            try:
                have = _sha256(run_dir / name)
            except OSError:
                continue  # reported above
            if want != have:
                problems.append(f"{name} does not match the sha256 {DONE} recorded (changed or damaged since)")
    return problems


def is_finished(run_dir: str | os.PathLike) -> bool:
    return not verify_run(run_dir)


def run_status(out_dir: str | os.PathLike, name: str) -> str:
    """``done`` (verified), ``corrupt`` (marked finished but damaged, or ``<name>`` not a directory),
    ``damaged`` (an unfinished run that cannot be resumed: ``.<name>.partial`` not a directory, or its
    ``config.json`` unreadable or not an object), ``failed``, ``unfinished`` or ``missing``."""
    out = Path(out_dir)
    final, partial = out / name, out / f".{name}.partial"
    if (final.exists() or final.is_symlink()) and (final.is_symlink() or not final.is_dir()):
        return "corrupt"
    if (final / DONE).is_file():
        return "done" if not verify_run(final) else "corrupt"
    if (partial.exists() or partial.is_symlink()) and (partial.is_symlink() or not partial.is_dir()):
        return "damaged"
    if (partial / CONFIG).exists():
        try:
            read_config(partial)
        except StorageError:
            return "damaged"
    if (partial / ERROR).is_file():
        return "failed"
    if partial.is_dir() or final.is_dir():
        return "unfinished"
    return "missing"
