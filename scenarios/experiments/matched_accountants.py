"""Accountant sensitivity of a matched sweep (model §10 (a)/(b), issue 15): the calibrated key of every
scheme and target ε under each accountant, without training.

For every case of a matched sweep and every finite target ε of its grid (at the first value of
every other grid key, e.g. the first SNR), the scenario is loaded with ``privacy.accountant``
set to each accountant in turn; loading calibrates the scheme's key (:mod:`scenarios.config.calibration`).
A target the scheme cannot reach is "infeasible"; an accountant that has no construction for
the scheme's mechanism and sampling (e.g. ``pld`` for sampling without replacement) is "n/a"
with its reason. ``floras matched SWEEP.toml --calibrate-only`` prints the table.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable

from scenarios.config.calibration import InfeasibleTarget
from scenarios.experiments.sweep_file import Sweep

__all__ = ["DEFAULT_ACCOUNTANTS", "NO_PRIVACY_NOISE", "accountant_rows", "format_accountant_table"]

DEFAULT_ACCOUNTANTS = ("rdp", "rdp-generic", "pld")
#: the references: no privacy noise, so no key to calibrate at a finite ε
NO_PRIVACY_NOISE = ("ideal", "channel-inversion")


def default_loader(base: Path, overrides: dict):
    from scenarios.config import load_scenario

    return load_scenario(base, overrides)


def _first_of_others(sweep: Sweep) -> dict:
    """The first value of every grid key other than the target ε (e.g. the first SNR)."""
    from scenarios.experiments.matched import sweep_grid

    return {k: v[0] for k, v in sweep_grid(sweep).items() if k != "privacy.target_epsilon"}


def accountant_rows(sweep: Sweep, accountants=DEFAULT_ACCOUNTANTS, *,
                    loader: Callable[[Path, dict], Any] | None = None) -> list[dict]:
    """One row per (case, finite target ε): ``{"label", "target", "parameter", accountant: cell}``.

    A cell is ``{"value", "achieved_epsilon"}``, ``{"infeasible": reason}`` or ``{"n/a": reason}``.
    """
    from scenarios.config.calibration import parse_target

    loader = loader or default_loader
    fixed = _first_of_others(sweep)
    rows = []
    for point in sweep.points:
        if any(point.grid.get(k) != v for k, v in fixed.items()):
            continue
        target = parse_target(point.overrides.get("privacy.target_epsilon"))
        if target is None or math.isinf(target) or point.overrides.get("phy.scheme") in NO_PRIVACY_NOISE:
            continue
        row: dict = {"label": point.label, "target": target, "parameter": ""}
        for acc in accountants:
            over = {**point.overrides, "privacy.accountant": acc, "run.seed": sweep.seeds[0]}
            try:
                cal = loader(sweep.base, over).privacy.calibrated or {}
            except InfeasibleTarget as exc:
                row[acc] = {"infeasible": str(exc)}
                continue
            except ValueError as exc:
                row[acc] = {"n/a": str(exc).splitlines()[0]}
                continue
            row["parameter"] = row["parameter"] or cal.get("parameter", "")
            row[acc] = {"value": cal.get("value"), "achieved_epsilon": cal.get("achieved_epsilon")}
        rows.append(row)
    return rows


def _cell(cell: dict) -> str:
    if "value" in cell:
        v = cell["value"]
        return f"{v:.4g}" if isinstance(v, float) else str(v)
    return "infeasible" if "infeasible" in cell else "n/a"



def format_accountant_table(sweep: Sweep, rows: list[dict], accountants=DEFAULT_ACCOUNTANTS) -> str:
    """Markdown: one row per case and ε, one column per accountant, then the reasons of n/a cells."""
    fixed = _first_of_others(sweep)
    where = ", ".join(f"{k} = {v}" for k, v in fixed.items())
    lines = [f"{sweep.name}: calibrated key per accountant" + (f" (at {where})" if where else ""), "",
             "| case | ε | key | " + " | ".join(f"`{a}`" for a in accountants) + " |",
             "| --- | --- | --- |" + " --- |" * len(accountants)]
    reasons: dict[str, str] = {}
    for r in rows:
        lines.append(f"| {r['label']} | {r['target']:g} | {r['parameter'] or '—'} | "
                     + " | ".join(_cell(r[a]) for a in accountants) + " |")
        for a in accountants:
            if "n/a" in r[a]:
                reasons.setdefault(a, r[a]["n/a"])
    for a, why in reasons.items():
        lines.append(f"\n`{a}` n/a: {why}")
    return "\n".join(lines)
