"""Sweeps: a grid of scenario overrides × seeds, run resumably on dask.distributed.

A *sweep file* (TOML, format in ``docs/experiments.md``) names a base scenario, the seeds,
fixed overrides, a cartesian ``[grid]`` of dotted-key overrides and optional explicit
``[[cases]]``; a ``[quick]`` table replaces parts of it for the fast variant. The grid
points are ``cases × product(grid)``; every point runs once per seed.

Run directories (one per grid point × seed) live under the sweep's output directory and
are named ``<slug>_seed<s>_<hash>``: ``slug`` is readable (case label and grid values),
``hash`` the first 8 hex digits of SHA-256 over the base scenario's file name and every
override of the run (seed included), so an edited grid never reuses a directory that was
run with other settings.

Atomicity and resumption (the rule a rerun follows):

* a run works in ``.<name>.partial/`` with ``resume=True`` (the run's own checkpoint lets an
  interrupted run continue where it stopped) and is renamed to ``<name>/`` with
  :func:`os.replace` only after it has written its ``DONE`` marker;
* rerunning the same sweep skips every ``<name>/DONE`` and resumes every ``.partial``;
* a run that raises writes ``error.json`` (type, message, traceback) into its ``.partial``
  directory and the others go on; the next rerun retries it.

The engine takes an injectable *runner* (``runner(config, out_dir, *, resume, progress) ->
dict``; default :func:`scenarios.run.run_scenario`) and an *executor*
(:class:`InProcessExecutor`, or :class:`DaskExecutor` around a ``distributed.Client``), so it
is testable without training or a cluster. Nothing heavy (TensorFlow, dask) is imported at
module level.
"""

from __future__ import annotations

import csv
import hashlib
import itertools
import json
import math
import os
import shutil
import sys
import time
import tomllib
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

__all__ = [
    "Sweep",
    "SweepPoint",
    "RunTask",
    "RunOutcome",
    "InProcessExecutor",
    "DaskExecutor",
    "load_sweep",
    "validate_sweep",
    "run_sweep",
    "execute_run",
    "summarize",
    "write_summary",
    "format_summary",
    "read_metrics",
    "MANIFEST",
    "SUMMARY",
]

MANIFEST = "sweep.json"
SUMMARY = "summary.csv"
DONE = "DONE"
ERROR = "error.json"
RUN_RECORD = "sweep_run.json"

_TOP_KEYS = {"name", "description", "base", "seeds", "overrides", "grid", "cases", "quick"}
_QUICK_KEYS = {"base", "seeds", "overrides", "grid", "cases"}
_SCALAR = (str, int, float, bool)

Runner = Callable[..., dict]


# --------------------------------------------------------------------------------------
# Sweep file
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SweepPoint:
    """One grid point: a case label (or None) and the overrides that define it (seed excluded)."""

    slug: str
    label: str | None
    overrides: dict[str, Any]
    grid: dict[str, Any]


@dataclass(frozen=True)
class Sweep:
    """An expanded sweep file.

    Attributes
    ----------
    name : str
        Sweep name (``name`` key, default the file stem); the default output directory is
        ``results/<name>`` (``results/quick/<name>`` with ``--quick``).
    path : Path
        The sweep file.
    base : Path
        Base scenario file (resolved relative to the sweep file).
    seeds : tuple of int
    points : tuple of SweepPoint
    quick : bool
        Whether the ``[quick]`` variant was applied.
    description : str
    grid_keys : tuple of str
        Dotted keys varied by ``[grid]``, in file order.
    """

    name: str
    path: Path
    base: Path
    seeds: tuple[int, ...]
    points: tuple[SweepPoint, ...]
    quick: bool
    description: str
    grid_keys: tuple[str, ...]

    def run_name(self, point: SweepPoint, seed: int) -> str:
        return f"{point.slug}_seed{seed}_{_short_hash(self.base.name, {**point.overrides, 'run.seed': seed})}"

    def run_overrides(self, point: SweepPoint, seed: int) -> dict[str, Any]:
        return {**point.overrides, "run.seed": seed}

    @property
    def n_runs(self) -> int:
        return len(self.points) * len(self.seeds)


def _short_hash(base_name: str, overrides: dict[str, Any]) -> str:
    blob = json.dumps({"base": base_name, "overrides": overrides}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:8]


def _slug_part(text: str) -> str:
    out = "".join(c if (c.isalnum() or c in ".-") else "-" for c in str(text))
    return out.strip("-") or "x"


def _point_slug(label: str | None, grid: dict[str, Any]) -> str:
    parts = [] if label is None else [_slug_part(label)]
    for key, value in grid.items():
        leaf = key.rsplit(".", 1)[-1]
        if isinstance(value, bool):
            value = str(value).lower()
        elif isinstance(value, (int, float)):
            value = f"{value:g}" if isinstance(value, float) else str(value)
            value = "m" + value[1:] if value.startswith("-") else value  # −10 dB → "m10"
        parts.append(f"{_slug_part(leaf)}-{_slug_part(value)}")
    return "_".join(parts) or "base"


def _fail(where: str, message: str) -> None:
    raise ValueError(f"{where.rstrip(':')}: {message}")


def _check_dotted(key: str, where: str) -> None:
    if not isinstance(key, str) or "." not in key or key.startswith(".") or key.endswith("."):
        _fail(where, f"key {key!r} must be a dotted scenario key such as \"phy.snr_db\"")
    if key == "run.seed":
        _fail(where, "key 'run.seed' must not be overridden here: list the seeds in `seeds`")


def _check_value(key: str, value: Any, where: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        _fail(where, f"value of {key!r} must be finite (got {value!r})")
    if isinstance(value, list):
        for v in value:
            _check_value(key, v, where)
    elif not isinstance(value, _SCALAR):
        _fail(where, f"value of {key!r} must be a string, number, boolean or list of them (got {type(value).__name__})")


def _check_overrides(table: Any, where: str) -> dict[str, Any]:
    if not isinstance(table, dict):
        _fail(where, f"must be a table of dotted-key overrides (got {type(table).__name__})")
    for key, value in table.items():
        _check_dotted(key, f"{where}:")
        _check_value(key, value, f"{where}:")
    return dict(table)


def _check_grid(table: Any, where: str) -> dict[str, list]:
    if not isinstance(table, dict):
        _fail(where, f"must be a table mapping dotted keys to lists of values (got {type(table).__name__})")
    for key, values in table.items():
        _check_dotted(key, f"{where}:")
        if not isinstance(values, list) or not values:
            _fail(f"{where}:", f"{key!r} must be a non-empty list of values (got {values!r})")
        for v in values:
            if not isinstance(v, _SCALAR):
                _fail(f"{where}:", f"{key!r} values must be strings, numbers or booleans (got {v!r})")
            _check_value(key, v, f"{where}:")
        canon = [json.dumps(v) for v in values]
        if len(set(canon)) != len(canon):
            _fail(f"{where}:", f"{key!r} lists a value twice (got {values!r})")
    return {k: list(v) for k, v in table.items()}


def _check_cases(cases: Any, where: str) -> list[tuple[str | None, dict[str, Any]]]:
    if not isinstance(cases, list) or not cases or not all(isinstance(c, dict) for c in cases):
        _fail(where, "must be a non-empty array of tables ([[cases]])")
    out = []
    labels = set()
    for i, case in enumerate(cases):
        case = dict(case)
        label = case.pop("label", None)
        if label is None:
            _fail(f"{where}[{i}]", "needs a `label` (a short name used in run directories and legends)")
        if not isinstance(label, str) or not label:
            _fail(f"{where}[{i}].label", f"must be a non-empty string (got {label!r})")
        if label in labels:
            _fail(f"{where}[{i}].label", f"{label!r} is used twice")
        labels.add(label)
        out.append((label, _check_overrides(case, f"{where}[{i}]")))
    return out


def _check_seeds(seeds: Any, where: str) -> tuple[int, ...]:
    if not isinstance(seeds, list) or not seeds:
        _fail(where, f"must be a non-empty list of integers ≥ 0 (got {seeds!r})")
    for s in seeds:
        if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < 2**63:
            _fail(where, f"must be a non-empty list of integers in [0, 2**63) (got {s!r})")
    if len(set(seeds)) != len(seeds):
        _fail(where, f"lists a seed twice (got {seeds!r})")
    return tuple(seeds)


def load_sweep(path: str | os.PathLike, *, quick: bool = False) -> Sweep:
    """Read and expand a sweep file; raise ValueError naming the offending key.

    This checks the sweep file's own structure only; :func:`validate_sweep` then loads every
    expanded scenario (unknown dotted override keys, out-of-range values).
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"sweep file must be an existing TOML file (got {str(path)!r})")
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not valid TOML: {exc}") from None
    where = str(path)
    for key in data:
        if key not in _TOP_KEYS:
            _fail(f"{where}:", f"unknown key {key!r} (allowed: {', '.join(sorted(_TOP_KEYS))})")
    if "base" not in data:
        _fail(f"{where}:", "missing key 'base' (the base scenario file, relative to the sweep file)")
    if "seeds" not in data:
        _fail(f"{where}:", "missing key 'seeds' (a non-empty list of integers)")
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not name or not all(c.isalnum() or c in "._-" for c in name) or name[0] == ".":
        _fail(f"{where}: name", f"must be a non-empty string of letters, digits, '.', '_', '-' not starting with '.' (got {name!r})")
    description = data.get("description", "")
    if not isinstance(description, str):
        _fail(f"{where}: description", "must be a string")
    base = data["base"]
    seeds = _check_seeds(data["seeds"], f"{where}: seeds")
    overrides = _check_overrides(data.get("overrides", {}), f"{where}: [overrides]")
    grid = _check_grid(data.get("grid", {}), f"{where}: [grid]")
    cases = _check_cases(data["cases"], f"{where}: cases") if "cases" in data else [(None, {})]

    if quick:
        q = data.get("quick")
        if q is None:
            _fail(f"{where}:", "has no [quick] table, so --quick cannot be used with it")
    else:
        q = data.get("quick", {})
    if not isinstance(q, dict):
        _fail(f"{where}: quick", "must be a table")
    for key in q:
        if key not in _QUICK_KEYS:
            _fail(f"{where}: [quick]", f"unknown key {key!r} (allowed: {', '.join(sorted(_QUICK_KEYS))})")
    # the quick variant is always checked, so a broken [quick] is found without --quick too
    q_base = q.get("base", base)
    q_seeds = _check_seeds(q["seeds"], f"{where}: quick.seeds") if "seeds" in q else seeds
    q_over = _check_overrides(q.get("overrides", {}), f"{where}: [quick.overrides]")
    q_grid = _check_grid(q.get("grid", {}), f"{where}: [quick.grid]")
    q_cases = _check_cases(q["cases"], f"{where}: quick.cases") if "cases" in q else cases
    if quick:
        base, seeds, cases = q_base, q_seeds, q_cases
        overrides = {**overrides, **q_over}
        grid = {**grid, **q_grid}  # per-key replacement; new keys are added
    if not isinstance(base, str) or not base:
        _fail(f"{where}: base", f"must be a path relative to the sweep file (got {base!r})")
    base_path = (path.parent / base).resolve()
    if not base_path.is_file():
        _fail(f"{where}: base", f"must name an existing scenario file (got {base!r}, looked for {base_path})")

    for label, case in cases:
        for key in case:
            if key in grid:
                _fail(f"{where}:", f"key {key!r} is set both by case {label!r} and by [grid]; set it in one place")
    points = []
    keys = list(grid)
    for label, case in cases:
        for combo in itertools.product(*(grid[k] for k in keys)):
            g = dict(zip(keys, combo))
            points.append(SweepPoint(slug=_point_slug(label, g), label=label, overrides={**overrides, **case, **g}, grid=g))
    slugs = [p.slug for p in points]
    if len(set(slugs)) != len(slugs):
        dup = next(s for s in slugs if slugs.count(s) > 1)
        _fail(f"{where}:", f"two grid points share the name {dup!r}; give grid keys distinct last components")
    return Sweep(
        name=name,
        path=path,
        base=base_path,
        seeds=seeds,
        points=tuple(points),
        quick=quick,
        description=description,
        grid_keys=tuple(keys),
    )


def _default_loader(base: Path, overrides: dict):
    from scenarios.config import load_scenario

    return load_scenario(base, overrides)


def validate_sweep(sweep: Sweep, *, loader: Callable[[Path, dict], Any] | None = None) -> list[Any]:
    """Load the scenario of every grid point × seed before anything runs.

    Returns the loaded configurations in the order of :func:`iter_runs`. A ValueError names
    the sweep file, the grid point and (through the scenario loader) the offending key.
    """
    loader = loader or _default_loader
    configs = []
    for point in sweep.points:
        for seed in sweep.seeds:
            try:
                configs.append(loader(sweep.base, sweep.run_overrides(point, seed)))
            except ValueError as exc:
                raise ValueError(f"{sweep.path}: grid point {point.slug}: {exc}") from None
    return configs


# --------------------------------------------------------------------------------------
# One run
# --------------------------------------------------------------------------------------


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
    status: str  # "done", "skipped" or "failed"
    summary: dict = field(default_factory=dict)
    error: dict | None = None
    seconds: float = 0.0


def _write_json(path: Path, obj: Any) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _limit_threads(threads: int) -> None:
    """Keep one worker's numerical libraries to ``threads`` threads (set before TF starts)."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "TF_NUM_INTRAOP_THREADS"):
        os.environ.setdefault(var, str(threads))
    os.environ.setdefault("TF_NUM_INTEROP_THREADS", "1")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    os.environ.setdefault("MPLBACKEND", "Agg")


def _default_runner():
    from scenarios.run import run_scenario

    return run_scenario


def execute_run(task: RunTask) -> RunOutcome:
    """Run (or skip, or resume) one grid point × seed; never raises for a failing run.

    The run works in ``.<name>.partial`` and is renamed to ``<name>`` once it has written
    ``DONE``. An exception becomes ``error.json`` (type, message, traceback) in the partial
    directory and a ``"failed"`` outcome; KeyboardInterrupt and SystemExit are recorded the
    same way and then re-raised, so an interrupted sweep stops and a rerun resumes.
    """
    out = Path(task.out_dir)
    final = out / task.name
    if (final / DONE).is_file():
        return RunOutcome(task.name, "skipped")
    partial = out / f".{task.name}.partial"
    partial.mkdir(parents=True, exist_ok=True)
    (partial / ERROR).unlink(missing_ok=True)
    _write_json(partial / RUN_RECORD, task.record)
    _limit_threads(task.threads)
    start = time.perf_counter()
    try:
        runner = task.runner or _default_runner()
        summary = runner(task.config, partial, resume=True, progress=False)
        if not (partial / DONE).is_file():
            raise RuntimeError(f"the runner returned without writing {DONE} in {partial.name}")
    except BaseException as exc:  # noqa: BLE001 - recorded, and re-raised when it is an interrupt
        _write_json(
            partial / ERROR,
            {
                "type": type(exc).__name__,
                "message": str(exc),
                "traceback": traceback.format_exc(),
                "overrides": task.record.get("overrides"),
            },
        )
        if not isinstance(exc, Exception):
            raise
        return RunOutcome(task.name, "failed", error={"type": type(exc).__name__, "message": str(exc)},
                          seconds=time.perf_counter() - start)
    if final.exists():  # a stale, unfinished directory under the final name (not made by this engine)
        shutil.rmtree(final)
    os.replace(partial, final)
    return RunOutcome(task.name, "done", summary=dict(summary or {}), seconds=time.perf_counter() - start)


# --------------------------------------------------------------------------------------
# Executors
# --------------------------------------------------------------------------------------


class InProcessExecutor:
    """Runs tasks one after another in this process (tests, debugging, ``--workers 0``)."""

    def map_unordered(self, fn: Callable, items: list) -> Iterator:
        for item in items:
            yield fn(item)

    def close(self) -> None:
        pass


class DaskExecutor:
    """Runs tasks on a ``distributed.Client`` and yields outcomes as they complete.

    A task whose worker died (the future errs, not the run) is turned into a failed outcome
    and recorded in its partial directory, so the others go on.
    """

    def __init__(self, client, *, cluster=None):
        self.client = client
        self.cluster = cluster

    @classmethod
    def local(cls, workers: int) -> "DaskExecutor":
        """A LocalCluster of ``workers`` processes with one thread each."""
        from distributed import Client, LocalCluster

        cluster = LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=40
        )
        return cls(Client(cluster), cluster=cluster)

    @classmethod
    def connect(cls, address: str) -> "DaskExecutor":
        from distributed import Client

        return cls(Client(address))

    def map_unordered(self, fn: Callable, items: list) -> Iterator:
        from distributed import as_completed

        futures = {self.client.submit(fn, item, pure=False, key=f"floras-run-{item.name}"): item for item in items}
        for fut in as_completed(futures):
            item = futures[fut]
            try:
                yield fut.result()
            except Exception as exc:  # the worker itself failed (killed, out of memory, unpicklable)
                partial = Path(item.out_dir) / f".{item.name}.partial"
                partial.mkdir(parents=True, exist_ok=True)
                err = {"type": type(exc).__name__, "message": str(exc), "traceback": traceback.format_exc()}
                _write_json(partial / ERROR, {**err, "overrides": item.record.get("overrides")})
                yield RunOutcome(item.name, "failed", error={"type": err["type"], "message": err["message"]})

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


# --------------------------------------------------------------------------------------
# The sweep
# --------------------------------------------------------------------------------------


def _manifest(sweep: Sweep, out_dir: Path) -> dict:
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
                "overrides": p.overrides,
                "runs": [{"seed": s, "dir": sweep.run_name(p, s)} for s in sweep.seeds],
            }
            for p in sweep.points
        ],
    }


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
) -> list[RunOutcome]:
    """Validate, then run every grid point × seed of one or several sweeps.

    Parameters
    ----------
    sweeps : Sweep, or iterable of (Sweep, output directory)
        With a single Sweep, ``out_dir`` is its output directory.
    executor : InProcessExecutor or DaskExecutor; default in-process.
    runner : ``runner(config, run_dir, *, resume, progress) -> dict``; default
        :func:`scenarios.run.run_scenario`.
    loader : ``loader(base_path, overrides) -> config``; default
        :func:`scenarios.config.load_scenario`.
    threads : numerical-library threads per run.

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
    for sweep, out in jobs:
        configs = iter(validate_sweep(sweep, loader=loader))
        for point in sweep.points:
            for seed in sweep.seeds:
                name = sweep.run_name(point, seed)
                record = {"sweep": sweep.name, "point": point.slug, "label": point.label, "seed": seed,
                          "base": sweep.base.name, "overrides": sweep.run_overrides(point, seed)}
                tasks.append(RunTask(out_dir=str(out.resolve()), name=name, config=next(configs), record=record,
                                     runner=runner, threads=threads))
    # 2. manifests, then skip what is finished
    for sweep, out in jobs:
        out.mkdir(parents=True, exist_ok=True)
        _write_json(out / MANIFEST, _manifest(sweep, out))
    todo = [t for t in tasks if not (Path(t.out_dir) / t.name / DONE).is_file()]
    outcomes = [RunOutcome(t.name, "skipped") for t in tasks if t not in todo]
    executor = executor or InProcessExecutor()
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(tasks), initial=len(outcomes), unit="run", desc="sweep", file=sys.stderr, dynamic_ncols=True)
    failed = 0
    try:
        for outcome in executor.map_unordered(execute_run, todo):
            outcomes.append(outcome)
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


# --------------------------------------------------------------------------------------
# Reading stored results (shared with figures)
# --------------------------------------------------------------------------------------


def read_metrics(run_dir: str | os.PathLike) -> dict[str, list[float]]:
    """metrics.csv as columns of floats ("inf", "nan" and empty cells become floats)."""
    path = Path(run_dir) / "metrics.csv"
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        cols: dict[str, list[float]] = {k: [] for k in (reader.fieldnames or [])}
        for row in reader:
            for key, value in row.items():
                cols[key].append(_to_float(value))
    return cols


def _to_float(value: Any) -> float:
    if value is None or value == "":
        return math.nan
    try:
        return float(value)
    except ValueError:
        return math.nan


def read_manifest(out_dir: str | os.PathLike) -> dict:
    path = Path(out_dir) / MANIFEST
    if not path.is_file():
        raise ValueError(f"results directory must contain {MANIFEST} written by `floras sweep` (got {str(out_dir)!r})")
    return json.loads(path.read_text(encoding="utf-8"))


def run_status(out_dir: Path, name: str) -> str:
    if (out_dir / name / DONE).is_file():
        return "done"
    if (out_dir / f".{name}.partial" / ERROR).is_file():
        return "failed"
    if (out_dir / f".{name}.partial").is_dir():
        return "unfinished"
    return "missing"


def _mean_std(values: list[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (ddof = 1; NaN for fewer than two values)."""
    vals = [v for v in values if not math.isnan(v)]
    if not vals:
        return math.nan, math.nan
    if any(math.isinf(v) for v in vals):
        same = all(v == vals[0] for v in vals)
        return (vals[0] if same else math.nan), (0.0 if same and len(vals) > 1 else math.nan)
    mean = sum(vals) / len(vals)
    if len(vals) < 2:
        return mean, math.nan
    return mean, math.sqrt(sum((v - mean) ** 2 for v in vals) / (len(vals) - 1))


SUMMARY_METRICS = (
    ("final_test_accuracy", "test_accuracy"),
    ("final_test_loss", "test_loss"),
    ("final_train_loss", "train_loss"),
    ("epsilon", "epsilon"),
)


def summarize(out_dir: str | os.PathLike) -> list[dict]:
    """One row per grid point: seeds done/failed, mean and std over seeds of the final values.

    Final values are the last row of each finished run's ``metrics.csv``; std is the sample
    standard deviation over seeds (ddof = 1), NaN with one seed.
    """
    out = Path(out_dir)
    manifest = read_manifest(out)
    rows = []
    for point in manifest["points"]:
        finals: dict[str, list[float]] = {k: [] for k, _ in SUMMARY_METRICS}
        walls = []
        counts = {"done": 0, "failed": 0, "unfinished": 0, "missing": 0}
        for run in point["runs"]:
            status = run_status(out, run["dir"])
            counts[status] += 1
            if status != "done":
                continue
            m = read_metrics(out / run["dir"])
            for key, col in SUMMARY_METRICS:
                finals[key].append(m[col][-1] if m.get(col) else math.nan)
            if m.get("wall_time_s"):
                walls.append(m["wall_time_s"][-1])
        row: dict[str, Any] = {"point": point["slug"], "label": point["label"] or ""}
        for key, value in point["grid"].items():
            row[key] = value
        row.update({"seeds_done": counts["done"], "seeds_failed": counts["failed"],
                    "seeds_unfinished": counts["unfinished"] + counts["missing"]})
        for key, _ in SUMMARY_METRICS:
            mean, std = _mean_std(finals[key])
            row[f"{key}_mean"] = mean
            row[f"{key}_std"] = std
        row["wall_time_s_mean"] = _mean_std(walls)[0]
        st = _run_statement(out, point)
        row["epsilon_alpha"] = st["alpha"] if st else math.nan
        row["epsilon_assumptions"] = "; ".join(st["clauses"]) if st else ""
        row["epsilon_warnings"] = "; ".join(st["warnings"]) if st else ""
        row["_statement"] = st
        rows.append(row)
    return rows


def write_summary(out_dir: str | os.PathLike, rows: list[dict]) -> Path:
    path = Path(out_dir) / SUMMARY
    fields_: list[str] = []
    for row in rows:
        for key in row:
            if key not in fields_ and not key.startswith("_"):
                fields_.append(key)
    tmp = path.with_name(f".{SUMMARY}.tmp")
    with tmp.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields_)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _fmt_cell(row.get(k, "")) for k in fields_})
    os.replace(tmp, path)
    return path


def _fmt_cell(value: Any) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return repr(value)
    return str(value)


def privacy_statement(config: dict) -> dict:
    """The final privacy report a run stored in ``config.json``, as clauses.

    Returns ``{"clauses": [str, ...], "warnings": [str, ...], "alpha": float or NaN}``:
    ``clauses`` are the assumptions of the ε after the last round (``privacy_report``;
    SPEC §7.4: threat model, relation, sensitivity, sampling, normalization caveats, δ, α,
    accountant), ``alpha`` the Rényi order at which ε was attained.
    """
    report = config.get("privacy_report")
    clauses: list[str] = []
    warnings: list[str] = []
    alpha = math.nan
    if isinstance(report, dict):
        raw = report.get("assumptions")
        if isinstance(raw, str):
            clauses = [raw]
        elif isinstance(raw, list):
            clauses = [str(c) for c in raw]
        warnings = [str(w) for w in report.get("warnings", []) or []]
        alpha = _to_float(report.get("best_order"))
    if not clauses and isinstance(config.get("epsilon_assumptions"), str):
        clauses = [config["epsilon_assumptions"]]
    return {"clauses": clauses, "warnings": warnings, "alpha": alpha}


def split_statements(statements: list[dict]) -> tuple[list[str], list[list[str]]]:
    """Clauses common to every statement (in first-seen order) and each statement's own rest."""
    if not statements:
        return [], []
    common = [c for c in statements[0]["clauses"] if all(c in st["clauses"] for st in statements[1:])]
    rest = [[c for c in st["clauses"] if c not in common] for st in statements]
    return common, rest


def _run_statement(out: Path, point: dict) -> dict | None:
    for run in point["runs"]:
        cfg = out / run["dir"] / "config.json"
        if (out / run["dir"] / DONE).is_file() and cfg.is_file():
            return privacy_statement(json.loads(cfg.read_text(encoding="utf-8")))
    return None


def format_summary(rows: list[dict], *, title: str = "") -> str:
    """A plain-text table: point, seeds, accuracy, losses and ε as mean ± std over seeds.

    Below it, the ε assumptions: the clauses every grid point shares, once, then each
    point's own clauses (e.g. its noise scale γ and the order α at which ε was attained) and
    the accountant's warnings.
    """

    def pm(row, key, scale=1.0, digits=4):
        mean, std = row[f"{key}_mean"], row[f"{key}_std"]
        if isinstance(mean, float) and math.isnan(mean):
            return "—"
        if math.isinf(mean):
            return "∞"
        s = f"{mean * scale:.{digits}g}"
        if not math.isnan(std):
            s += f" ± {std * scale:.2g}"
        return s

    header = ["grid point", "seeds ok/fail", "test acc [%]", "test loss", "train loss", "ε"]
    body = [
        [
            r["point"],
            f"{r['seeds_done']}/{r['seeds_failed']}",
            pm(r, "final_test_accuracy", 100.0),
            pm(r, "final_test_loss"),
            pm(r, "final_train_loss"),
            pm(r, "epsilon"),
        ]
        for r in rows
    ]
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(header)]
    lines = [title] if title else []
    lines.append("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(b, widths)) for b in body]
    lines.append("mean ± sample std (ddof = 1) over seeds of the final round's values.")
    if any(r["epsilon_mean"] == r["epsilon_mean"] for r in rows):
        with_st = [r for r in rows if r.get("_statement")]
        common, rest = split_statements([r["_statement"] for r in with_st])
        if not with_st:
            lines.append("ε assumptions: none stored in the finished runs (see each run's config.json)")
        else:
            lines.append("ε assumptions (all grid points): " + ("; ".join(common) or "—"))
            for r, own in zip(with_st, rest):
                extra = own + [f"warning: {w}" for w in r["_statement"]["warnings"]]
                if extra:
                    lines.append(f"  {r['point']}: " + "; ".join(extra))
    return "\n".join(lines)
