"""Where FLORAS wins, ties and loses in a matched sweep (model §10), read from stored results only.

For every SNR and target ε of a matched sweep, each FLORAS case (labels ``floras-…``) is set
against every other scheme at the same point, on final test accuracy over seeds:

* **win** — FLORAS's lowest seed is above the other scheme's highest seed (the min–max ranges
  over seeds do not overlap, FLORAS above);
* **loss** — the ranges do not overlap, FLORAS below;
* **tie** — the ranges overlap;
* **other infeasible** / **FLORAS infeasible** — that scheme cannot reach the target ε
  (``matched.json``), so there is nothing to compare.

The difference of means is given with its standard error √(s₁²/n₁ + s₂²/n₂) (sample variances,
ddof = 1), so a reader can judge a tie too. The range rule is deliberately conservative: with 3
seeds, non-overlap of the ranges is rarer than a two-sided Welch test at 5 %. Points drawn from
another SNR (``reused`` in ``matched.json``) use the runs at that SNR.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from .matched import REFERENCES, SCHEME_TEXT, eps_value, point_snr

STEM_SUFFIX = ".verdict.md"
VERDICTS = ("win", "tie", "loss", "other infeasible", "FLORAS infeasible")


def accuracies(res, record: dict) -> dict:
    """{(label, SNR, ε): final test accuracies [%] over seeds (ndarray), or the string "infeasible"}."""
    out: dict = {}
    for rs in res.runsets:
        key = (rs.label, float(rs.value("phy.snr_db", math.nan)), eps_value(rs.value("privacy.target_epsilon")))
        out[key] = 100.0 * np.asarray(rs.final("test_accuracy"), dtype=float)
    runs = {rs.point.get("slug"): rs for rs in res.runsets}

    def target(p) -> float:  # a grid value, else the sweep-wide override (e.g. ε = 8 in the SNR sweep)
        if "privacy.target_epsilon" in p["grid"]:
            return eps_value(p["grid"]["privacy.target_epsilon"])
        src = runs.get(p.get("reuses") or p["slug"])
        return eps_value(src.value("privacy.target_epsilon")) if src is not None else math.nan

    for p in record.get("points", []):
        key = (p["label"], point_snr(p, res), target(p))
        if p["status"] == "infeasible":
            out[key] = "infeasible"
        elif p["status"] == "reused" and p.get("reuses") in runs:
            out[key] = 100.0 * np.asarray(runs[p["reuses"]].final("test_accuracy"), dtype=float)
    return out


def compare(a, b) -> tuple[str, float, float]:
    """(verdict, mean difference a − b, its standard error) for accuracies ``a`` (FLORAS) and ``b``."""
    if isinstance(a, str):
        return "FLORAS infeasible", math.nan, math.nan
    if isinstance(b, str):
        return "other infeasible", math.nan, math.nan
    diff = float(a.mean() - b.mean())
    var = (a.var(ddof=1) / a.size if a.size > 1 else math.nan) + (b.var(ddof=1) / b.size if b.size > 1 else math.nan)
    se = math.sqrt(var) if var == var else math.nan
    if a.min() > b.max():
        return "win", diff, se
    if a.max() < b.min():
        return "loss", diff, se
    return "tie", diff, se


def verdict_rows(res, record: dict) -> list[dict]:
    """One row per (SNR, ε, FLORAS case, other scheme) present in the sweep."""
    acc = accuracies(res, record)
    labels = list(dict.fromkeys(k[0] for k in acc))
    floras = [lab for lab in labels if lab and lab.startswith("floras")]
    others = [lab for lab in labels if lab not in floras]
    rows = []
    for snr in sorted({k[1] for k in acc}, reverse=True):
        for eps in sorted({k[2] for k in acc if k[1] == snr}):
            for f in floras:
                a = acc.get((f, snr, eps))
                if a is None:
                    continue
                for o in others:
                    b = acc.get((o, snr, eps))
                    if b is None or (isinstance(a, str) and isinstance(b, str)) or (isinstance(b, str) and o in REFERENCES):
                        continue  # a reference without privacy noise exists at ε = ∞ only: nothing to compare
                    verdict, diff, se = compare(a, b)
                    rows.append({"snr_db": snr, "epsilon": eps, "floras": f, "other": o, "verdict": verdict,
                                 "floras_acc": a, "other_acc": b, "diff": diff, "se": se})
    return rows


def _acc_text(a) -> str:
    if isinstance(a, str):
        return a
    return f"{a.mean():.1f} [{a.min():.1f}, {a.max():.1f}]"


def _eps_text(eps: float) -> str:
    return "∞" if math.isinf(eps) else f"{eps:g}"


def format_verdict(res, record: dict) -> str:
    """Markdown: a count of wins, ties and losses per FLORAS case, then every comparison."""
    rows = verdict_rows(res, record)
    seeds = sorted({s for rs in res.runsets for s in rs.seeds})
    lines = [f"# {res.name}: where FLORAS wins, ties and loses (final test accuracy [%], mean [min, max] over seeds {seeds})",
             "", "Win / loss: the min–max ranges over seeds do not overlap; tie: they overlap. Δ = FLORAS − other, "
             "mean ± standard error.", "", "| FLORAS case | " + " | ".join(VERDICTS) + " |", "| --- |" + " --- |" * len(VERDICTS)]
    for f in dict.fromkeys(r["floras"] for r in rows):
        counts = [sum(r["floras"] == f and r["verdict"] == v for r in rows) for v in VERDICTS]
        lines.append(f"| {SCHEME_TEXT.get(f, f)} | " + " | ".join(map(str, counts)) + " |")
    lines += ["", "| SNR [dB] | ε | FLORAS case | FLORAS | other scheme | other | Δ [points] | verdict |",
              "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        d = "—" if math.isnan(r["diff"]) else (f"{r['diff']:+.1f}" + ("" if math.isnan(r["se"]) else f" ± {r['se']:.1f}"))
        lines.append(f"| {r['snr_db']:g} | {_eps_text(r['epsilon'])} | {SCHEME_TEXT.get(r['floras'], r['floras'])} | "
                     f"{_acc_text(r['floras_acc'])} | {SCHEME_TEXT.get(r['other'], r['other'])} | {_acc_text(r['other_acc'])} | "
                     f"{d} | {r['verdict']} |")
    return "\n".join(lines) + "\n"


def write_verdict(res, record: dict, out_dir: Path, stem: str) -> Path:
    from scenarios.store import atomic_write_text

    path = Path(out_dir) / f"{stem}{STEM_SUFFIX}"
    atomic_write_text(path, format_verdict(res, record))
    return path
