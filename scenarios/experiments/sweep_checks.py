"""The checks of a sweep file's tables (``overrides``, ``grid``, ``cases``, ``seeds``), each raising
:class:`ValueError` that names the file and the table (used by :func:`scenarios.experiments.sweep_file.load_sweep`)."""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["KEY_GRID_ERROR", "SCALAR", "check_cases", "check_dotted", "check_grid", "check_overrides", "check_seeds",
           "check_value", "refuse_key", "sweep_error"]

SCALAR = (str, int, float, bool)


def sweep_error(where: str, message: str) -> None:
    raise ValueError(f"{where.rstrip(':')}: {message}")


def check_dotted(key: str, where: str) -> None:
    if not isinstance(key, str) or "." not in key or key.startswith(".") or key.endswith("."):
        sweep_error(where, f"key {key!r} must be a dotted scenario key such as \"phy.snr_db\"")
    if key == "run.seed":
        sweep_error(where, "key 'run.seed' must not be overridden here: list the seeds in `seeds`")


KEY_GRID_ERROR = ("must not set run.key_hex (the permutation key would be written into run-directory names, "
                  "summary.csv and sweep.json); pass the key with --key-file or FLORAS_KEY_HEX instead")


def refuse_key(table: dict, where: str) -> None:
    if "run.key_hex" in table:
        sweep_error(where, KEY_GRID_ERROR)


def check_value(key: str, value: Any, where: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        sweep_error(where, f"value of {key!r} must be finite (got {value!r})")
    if isinstance(value, list):
        for v in value:
            check_value(key, v, where)
    elif not isinstance(value, SCALAR):
        sweep_error(where, f"value of {key!r} must be a string, number, boolean or list of them (got {type(value).__name__})")


def check_overrides(table: Any, where: str) -> dict[str, Any]:
    if not isinstance(table, dict):
        sweep_error(where, f"must be a table of dotted-key overrides (got {type(table).__name__})")
    for key, value in table.items():
        check_dotted(key, f"{where}:")
        check_value(key, value, f"{where}:")
    return dict(table)


def check_grid(table: Any, where: str) -> dict[str, list]:
    if not isinstance(table, dict):
        sweep_error(where, f"must be a table mapping dotted keys to lists of values (got {type(table).__name__})")
    refuse_key(table, where)
    for key, values in table.items():
        check_dotted(key, f"{where}:")
        if not isinstance(values, list) or not values:
            sweep_error(f"{where}:", f"{key!r} must be a non-empty list of values (got {values!r})")
        for v in values:
            if not isinstance(v, SCALAR):
                sweep_error(f"{where}:", f"{key!r} values must be strings, numbers or booleans (got {v!r})")
            check_value(key, v, f"{where}:")
        canon = [json.dumps(v) for v in values]
        if len(set(canon)) != len(canon):
            sweep_error(f"{where}:", f"{key!r} lists a value twice (got {values!r})")
    return {k: list(v) for k, v in table.items()}


def check_cases(cases: Any, where: str) -> list[tuple[str | None, dict[str, Any]]]:
    if not isinstance(cases, list) or not cases or not all(isinstance(c, dict) for c in cases):
        sweep_error(where, "must be a non-empty array of tables ([[cases]])")
    out = []
    labels = set()
    for i, case in enumerate(cases):
        case = dict(case)
        label = case.pop("label", None)
        if label is None:
            sweep_error(f"{where}[{i}]", "needs a `label` (a short name used in run directories and legends)")
        if not isinstance(label, str) or not label:
            sweep_error(f"{where}[{i}].label", f"must be a non-empty string (got {label!r})")
        if label in labels:
            sweep_error(f"{where}[{i}].label", f"{label!r} is used twice")
        labels.add(label)
        refuse_key(case, f"{where}[{i}]")
        out.append((label, check_overrides(case, f"{where}[{i}]")))
    return out


def check_seeds(seeds: Any, where: str) -> tuple[int, ...]:
    if not isinstance(seeds, list) or not seeds:
        sweep_error(where, f"must be a non-empty list of integers ≥ 0 (got {seeds!r})")
    for s in seeds:
        if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < 2**63:
            sweep_error(where, f"must be a non-empty list of integers in [0, 2**63) (got {s!r})")
    if len(set(seeds)) != len(seeds):
        sweep_error(where, f"lists a seed twice (got {seeds!r})")
    return tuple(seeds)
