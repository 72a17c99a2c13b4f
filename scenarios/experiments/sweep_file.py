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
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from scenarios.config.keys import redact_overrides
from scenarios.experiments.sweep_checks import (
    check_cases,
    check_grid,
    check_overrides,
    check_seeds,
    sweep_error,
)

__all__ = ["Sweep", "SweepPoint", "load_sweep", "validate_sweep"]

_TOP_KEYS = {"name", "description", "base", "seeds", "overrides", "grid", "cases", "quick"}
_QUICK_KEYS = {"base", "seeds", "overrides", "grid", "cases"}


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
            sweep_error(f"{where}:", f"unknown key {key!r} (allowed: {', '.join(sorted(_TOP_KEYS))})")
    if "base" not in data:
        sweep_error(f"{where}:", "missing key 'base' (the base scenario file, relative to the sweep file)")
    if "seeds" not in data:
        sweep_error(f"{where}:", "missing key 'seeds' (a non-empty list of integers)")
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not name or not all(c.isalnum() or c in "._-" for c in name) or name[0] == ".":
        sweep_error(f"{where}: name", f"must be a non-empty string of letters, digits, '.', '_', '-' not starting with '.' (got {name!r})")
    description = data.get("description", "")
    if not isinstance(description, str):
        sweep_error(f"{where}: description", "must be a string")
    base = data["base"]
    seeds = check_seeds(data["seeds"], f"{where}: seeds")
    overrides = check_overrides(data.get("overrides", {}), f"{where}: [overrides]")
    grid = check_grid(data.get("grid", {}), f"{where}: [grid]")
    cases = check_cases(data["cases"], f"{where}: cases") if "cases" in data else [(None, {})]

    if quick:
        q = data.get("quick")
        if q is None:
            sweep_error(f"{where}:", "has no [quick] table, so --quick cannot be used with it")
    else:
        q = data.get("quick", {})
    if not isinstance(q, dict):
        sweep_error(f"{where}: quick", "must be a table")
    for key in q:
        if key not in _QUICK_KEYS:
            sweep_error(f"{where}: [quick]", f"unknown key {key!r} (allowed: {', '.join(sorted(_QUICK_KEYS))})")
    # the quick variant is always checked, so a broken [quick] is found without --quick too
    q_base = q.get("base", base)
    q_seeds = check_seeds(q["seeds"], f"{where}: quick.seeds") if "seeds" in q else seeds
    q_over = check_overrides(q.get("overrides", {}), f"{where}: [quick.overrides]")
    q_grid = check_grid(q.get("grid", {}), f"{where}: [quick.grid]")
    q_cases = check_cases(q["cases"], f"{where}: quick.cases") if "cases" in q else cases
    if quick:
        base, seeds, cases = q_base, q_seeds, q_cases
        overrides = {**overrides, **q_over}
        grid = {**grid, **q_grid}  # per-key replacement; new keys are added
    if not isinstance(base, str) or not base:
        sweep_error(f"{where}: base", f"must be a path relative to the sweep file (got {base!r})")
    base_path = (path.parent / base).resolve()
    if not base_path.is_file():
        sweep_error(f"{where}: base", f"must name an existing scenario file (got {base!r}, looked for {base_path})")

    for label, case in cases:
        for key in case:
            if key in grid:
                sweep_error(f"{where}:", f"key {key!r} is set both by case {label!r} and by [grid]; set it in one place")
    points = []
    keys = list(grid)
    for label, case in cases:
        for combo in itertools.product(*(grid[k] for k in keys)):
            g = dict(zip(keys, combo))
            points.append(SweepPoint(slug=_point_slug(label, g), label=label, overrides={**overrides, **case, **g}, grid=g))
    slugs = [p.slug for p in points]
    if len(set(slugs)) != len(slugs):
        dup = next(s for s in slugs if slugs.count(s) > 1)
        sweep_error(f"{where}:", f"two grid points share the name {dup!r}; give grid keys distinct last components")
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
