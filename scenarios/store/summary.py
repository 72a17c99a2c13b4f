"""Summaries of a sweep directory: per grid point, mean ± std over seeds of the final values.

Reads only through :mod:`scenarios.store.runs` (verified finished runs); writes
``summary.csv`` through the atomic writer. Also the privacy statement a run stored
(model §7.4), shared with the figures.
"""

from __future__ import annotations

import csv
import io
import math
import os
from pathlib import Path
from typing import Any

from scenarios.store.files import atomic_write_text
from scenarios.store.runs import SUMMARY, read_config, read_manifest, read_metrics, to_float
from scenarios.store.verify import run_status

__all__ = ["SUMMARY_METRICS", "summarize", "write_summary", "format_summary", "privacy_statement", "split_statements"]


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
        walls, bare, most = [], [], []
        counts = {"done": 0, "failed": 0, "unfinished": 0, "missing": 0, "corrupt": 0, "damaged": 0}
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
            unamplified = _unamplified(read_config(out / run["dir"]))
            bare.append(unamplified.get("epsilon_ex_ante", math.nan))
            most.append(unamplified.get("epsilon_most_sampled", math.nan))
        row: dict[str, Any] = {"point": point["slug"], "label": point["label"] or ""}
        for key, value in point["grid"].items():
            row[key] = value
        row.update({"seeds_done": counts["done"], "seeds_failed": counts["failed"],
                    "seeds_unfinished": counts["unfinished"] + counts["missing"] + counts["corrupt"]
                                        + counts["damaged"]})
        for key, _ in SUMMARY_METRICS:
            mean, std = _mean_std(finals[key])
            row[f"{key}_mean"] = mean
            row[f"{key}_std"] = std
        row["wall_time_s_mean"] = _mean_std(walls)[0]
        if any(not math.isnan(v) for v in bare + most):  # ε without sampling amplification (model §7.3)
            row["epsilon_unamplified_mean"] = _mean_std(bare)[0]  # over the sampling (the same for every seed)
            row["epsilon_most_sampled_mean"] = _mean_std(most)[0]  # each run's most-sampled client
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
    buf = io.StringIO(newline="")
    writer = csv.DictWriter(buf, fieldnames=fields_)
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _fmt_cell(row.get(k, "")) for k in fields_})
    return atomic_write_text(path, buf.getvalue())


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
    model §7.4: threat model, relation, sensitivity, sampling, normalization caveats, δ, α,
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
        alpha = to_float(report.get("best_order"))
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


def _unamplified(config: dict) -> dict[str, float]:
    """ε without sampling amplification of a run (``privacy_report.without_amplification``): ``epsilon_ex_ante`` and
    ``epsilon_most_sampled`` as floats (NaN where the run has none)."""
    report = config.get("privacy_report")
    bare = report.get("without_amplification") if isinstance(report, dict) else None
    bare = bare if isinstance(bare, dict) else {}
    return {key: to_float(bare.get(key)) for key in ("epsilon_ex_ante", "epsilon_most_sampled")}


def _run_statement(out: Path, point: dict) -> dict | None:
    for run in point["runs"]:
        if run_status(out, run["dir"]) == "done":
            return privacy_statement(read_config(out / run["dir"]))
    return None


def format_summary(rows: list[dict], *, title: str = "") -> str:
    """A plain-text table: point, seeds, accuracy, losses and ε as mean ± std over seeds.

    Below it, the ε assumptions: the clauses every grid point shares, once, then each
    point's own clauses (e.g. its noise scale γ and the order α at which ε was attained) and
    the accountant's warnings.
    """

    def pm(row, key, scale=1.0, digits=4, fixed=None):
        mean, std = row[f"{key}_mean"], row[f"{key}_std"]
        if isinstance(mean, float) and math.isnan(mean):
            return "—"
        if math.isinf(mean):
            return "∞"
        s = f"{mean * scale:.{fixed}f}" if fixed is not None else f"{mean * scale:.{digits}g}"
        if not math.isnan(std):
            s += f" ± {std * scale:.{fixed}f}" if fixed is not None else f" ± {std * scale:.2g}"
        return s

    header = ["grid point", "seeds ok/fail", "test acc [%]", "test loss", "train loss", "ε"]
    body = [
        [
            r["point"],
            f"{r['seeds_done']}/{r['seeds_failed']}",
            pm(r, "final_test_accuracy", 100.0, fixed=1),  # percent, one decimal (docs/fl.md: units)
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
