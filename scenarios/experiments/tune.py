"""Learning-rate selection on a validation split (model §10: each scheme at its best η from a small grid).

For every case (scheme) of a matched sweep, :func:`tune_sweep` builds a small sweep: the case's
grid point at one ε and SNR (``at_epsilon``, ``at_snr_db``; a scheme without privacy noise, or
one that cannot reach that ε, is tuned at ε = ∞), once per η of the grid, with
``data.evaluate_on = "validation"`` so that the runs' accuracy column is measured on a split
carved from the training data and the test set is never read (:mod:`fl.validation`).
:func:`choose_lr` picks, per case, the η with the highest mean final validation accuracy over
the tuning seeds (runs that failed or diverged count as missing; ties go to the smaller η).
The choice and the whole grid's results are stored in ``tune.json``; ``floras matched``
reuses the chosen η per case for every ε and SNR (tune once per scheme, issue 15's budget).
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any, Callable

from scenarios.config.calibration import InfeasibleTarget
from scenarios.experiments.sweep_file import Sweep, SweepPoint

__all__ = ["TUNE_RECORD", "tune_sweep", "tuning_points", "check_tuning_grid", "choose_lr", "tune_record", "read_tuned"]

TUNE_RECORD = "tune.json"


def _grid_value(point: SweepPoint, key: str):
    return point.grid.get(key, point.overrides.get(key))


def _same(a, b) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return str(a).lower() == str(b).lower()
    return a is not None and b is not None and math.isclose(float(a), float(b))


def tuning_points(sweep: Sweep, *, at_epsilon: float | str = 8, at_snr_db: float | None = 20.0) -> Sweep:
    """``sweep`` with only the points :func:`tune_sweep` loads first, one per case where the sweep has it: those at
    ``at_epsilon`` and ``at_snr_db``. Their calibrations are all the tuning needs (η cannot change ε; the fallback to
    ε = ∞ needs none), so a caller computes them on its workers
    (:func:`scenarios.experiments.calibrate_points.prefetch_calibrations`) before :func:`tune_sweep` loads them one
    after another."""
    return dataclasses.replace(sweep, points=tuple(
        p for p in sweep.points
        if (at_snr_db is None or _same(_grid_value(p, "phy.snr_db"), at_snr_db))
        and _same(_grid_value(p, "privacy.target_epsilon"), at_epsilon)))


def _pick_point(sweep: Sweep, label, at_epsilon, at_snr_db, loader) -> tuple[SweepPoint, str] | None:
    candidates = [p for p in sweep.points if p.label == label
                  and (at_snr_db is None or _same(_grid_value(p, "phy.snr_db"), at_snr_db))]
    for eps in (at_epsilon, "inf"):
        for p in candidates:
            if _same(_grid_value(p, "privacy.target_epsilon"), eps):
                try:
                    loader(sweep.base, {**p.overrides, "run.seed": sweep.seeds[0]})
                except InfeasibleTarget:
                    continue
                return p, str(eps)
    return (candidates[0], "as in the sweep") if candidates and _grid_value(candidates[0], "privacy.target_epsilon") is None else None


def check_tuning_grid(lr_grid, validation_fraction: float) -> None:
    """Refuse a learning-rate grid or validation fraction :func:`tune_sweep` cannot use, in one line."""
    if not lr_grid or any(not (isinstance(x, (int, float)) and math.isfinite(x) and x > 0) for x in lr_grid):
        raise ValueError(f"lr-grid must be a non-empty list of finite numbers > 0 (got {lr_grid!r})")
    if not 0.0 < validation_fraction < 1.0:
        raise ValueError(f"validation-fraction must be in (0, 1) (got {validation_fraction})")


def tune_sweep(sweep: Sweep, *, lr_grid: list[float], at_epsilon: float | str = 8, at_snr_db: float | None = 20.0,
               seeds: tuple[int, ...] = (0,), rounds: int | None = None, validation_fraction: float = 0.1,
               loader: Callable[[Path, dict], Any] | None = None) -> tuple[Sweep, dict]:
    """(the tuning sweep, {case label: the ε it was tuned at}) for ``sweep``'s cases."""
    from scenarios.experiments.matched import default_loader

    loader = loader or default_loader
    check_tuning_grid(lr_grid, validation_fraction)
    labels = []
    for p in sweep.points:
        if p.label not in labels:
            labels.append(p.label)
    points, tuned_at = [], {}
    for label in labels:
        found = _pick_point(sweep, label, at_epsilon, at_snr_db, loader)
        if found is None:
            continue
        base, eps = found
        tuned_at[label] = eps
        for lr in lr_grid:
            over = {**base.overrides, "training.lr": float(lr), "data.evaluate_on": "validation"}
            over.setdefault("data.validation_fraction", validation_fraction)
            if rounds is not None:
                over["run.rounds"] = int(rounds)
            slug = f"{label}_lr-{lr:g}" if label else f"lr-{lr:g}"
            points.append(SweepPoint(slug=slug, label=label, overrides=over, grid={"training.lr": float(lr)}))
    tune = dataclasses.replace(sweep, name=f"{sweep.name}_tune", seeds=tuple(seeds), points=tuple(points),
                               description=f"learning-rate grid of {sweep.name} on a validation split",
                               grid_keys=("training.lr",))
    return tune, tuned_at


def choose_lr(rows: list[dict]) -> dict:
    """Per case label: the η with the best mean final validation accuracy, and the grid's results.

    ``rows`` are summary rows (:func:`scenarios.store.summarize`) of a tuning sweep: ``label``,
    ``training.lr``, ``final_test_accuracy_mean`` (the validation accuracy there) and
    ``seeds_done``.
    """
    out: dict = {}
    for row in rows:
        label = row.get("label") or ""
        acc = row.get("final_test_accuracy_mean", math.nan)
        entry = out.setdefault(label, {"grid": []})
        entry["grid"].append({"lr": float(row["training.lr"]), "validation_accuracy": acc,
                              "seeds_done": int(row.get("seeds_done", 0))})
    for label, entry in out.items():
        entry["grid"].sort(key=lambda g: g["lr"])
        ok = [g for g in entry["grid"] if isinstance(g["validation_accuracy"], float) and math.isfinite(g["validation_accuracy"])]
        if not ok:
            entry["lr"] = None
            entry["validation_accuracy"] = math.nan
            continue
        best = max(ok, key=lambda g: (g["validation_accuracy"], -g["lr"]))
        entry["lr"] = best["lr"]
        entry["validation_accuracy"] = best["validation_accuracy"]
        lrs = [g["lr"] for g in entry["grid"]]
        # the best η is the grid's smallest or largest: the optimum may lie outside the grid
        entry["at_edge"] = len(lrs) > 1 and best["lr"] in (min(lrs), max(lrs))
    return out


def tune_record(tune: Sweep, choices: dict, tuned_at: dict, *, at_snr_db, validation_fraction) -> dict:
    return {
        "sweep": tune.name,
        "evaluation": (f"final accuracy on a validation split ({validation_fraction:g} of the training data, "
                       "stratified, stream (seed, 'validation-split')); the test set is not used"),
        "seeds": list(tune.seeds),
        "at_snr_db": at_snr_db,
        "tuned_at_epsilon": tuned_at,
        "choices": choices,
    }


def read_tuned(path: str | Path) -> dict[str, float]:
    """{case label: chosen η} from a ``tune.json``; a record of another shape is refused in one line.

    Expected: an object with ``choices`` = {case label: {``lr``: a finite number > 0, or null, …}}.
    """
    import math

    from scenarios.store import read_json

    data = read_json(Path(path), what="tuning record")
    expected = "an object with 'choices': {case label: {'lr': number or null, ...}} (a tune.json of `floras tune`)"

    def refuse(found: str) -> ValueError:
        return ValueError(f"--tuned {path} must hold {expected}; found {found}")

    if not isinstance(data, dict):
        raise refuse(f"a JSON {type(data).__name__}, not an object")
    choices = data.get("choices")
    if not isinstance(choices, dict):
        raise refuse(f"keys {sorted(data)}" if "choices" not in data else f"'choices' of type {type(choices).__name__}")
    out = {}
    for label, c in choices.items():
        if not isinstance(c, dict) or "lr" not in c:
            raise refuse(f"choices[{label!r}] = " + (f"an object with keys {sorted(c)}" if isinstance(c, dict)
                                                      else f"a {type(c).__name__}"))
        lr = c["lr"]
        if lr is None:
            continue
        if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not (math.isfinite(lr) and lr > 0):
            raise refuse(f"choices[{label!r}]['lr'] = {lr!r}, not a finite number > 0")
        out[label] = float(lr)
    return out
