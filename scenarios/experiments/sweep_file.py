"""Sweep files: a grid of scenario overrides × seeds, read, checked and expanded.

A *sweep file* (TOML, format in ``docs/experiments.md``) names a base scenario, the seeds,
fixed overrides, a cartesian ``[grid]`` of dotted-key overrides and optional explicit
``[[cases]]``; a ``[quick]`` table replaces parts of it for the fast variant. The grid
points are ``cases × product(grid)``; every point runs once per seed.

Run directories (one per grid point × seed) are named ``<slug>_seed<s>_<hash>``: ``slug`` is
readable (case label and grid values), ``hash`` the first 8 hex digits of SHA-256 over the
base scenario's file name and every override of the run (seed included; a ``run.key_hex``
enters by its key identifier only, never the key), so an edited grid never reuses a
directory that was run with other settings.

A ``[grid]`` or ``[[cases]]`` entry may not set ``run.key_hex``: grid values name run
directories and fill ``summary.csv`` and ``sweep.json``, so a varied key would be written to
disk. Such a sweep file is refused; pass the key with ``--key-file`` or ``FLORAS_KEY_HEX``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from scenarios.config.keys import redact_overrides

__all__ = ["Sweep", "SweepPoint", "load_sweep", "validate_sweep"]

_TOP_KEYS = {"name", "description", "base", "seeds", "overrides", "grid", "cases", "quick"}
_QUICK_KEYS = {"base", "seeds", "overrides", "grid", "cases"}
_SCALAR = (str, int, float, bool)


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
    blob = json.dumps({"base": base_name, "overrides": redact_overrides(overrides)}, sort_keys=True, separators=(",", ":"))
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


KEY_GRID_ERROR = ("must not set run.key_hex (the permutation key would be written into run-directory names, "
                  "summary.csv and sweep.json); pass the key with --key-file or FLORAS_KEY_HEX instead")


def _refuse_key(table: dict, where: str) -> None:
    if "run.key_hex" in table:
        _fail(where, KEY_GRID_ERROR)


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
    _refuse_key(table, where)
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
        _refuse_key(case, f"{where}[{i}]")
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
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"sweep file {path} cannot be read: {getattr(exc, 'strerror', None) or exc}") from None
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
