"""Per-scheme records of a link-level study (model §5, §6, §9): what :func:`phy.link_simulation.simulate_link` keeps.

A scheme's :class:`phy.schemes.SchemeSpec` names its record class; the simulation builds one per
scheme, calls ``record(result, trace, x)`` after every round (``trace`` is what the aggregator's
``aggregate_traced`` returned beside the result, or None) and merges ``summary()`` into the
scheme's entry after the shared fields (``nmse`` over the rounds the record counted,
``seconds_per_round``, ``channel_uses``).

- :class:`LinkRecord`: the NMSE of every round (ideal aggregation, and the default).
- :class:`AdmissionRecord`: schemes that admit K′ ≤ K clients (channel inversion): the admitted
  count, the rounds skipped (K′ = 0, excluded from the NMSE), ρ and the peak power ratio.
- :class:`BaselineRecord`: the private baselines (model §9.1, §9.2): admission as above and their
  per-round diagnostics averaged over non-skipped rounds (a subclass names them in ``diagnostics``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["LinkRecord", "AdmissionRecord", "BaselineRecord", "client_count", "nmse_summary", "decibels", "fmt"]


def fmt(v) -> str:
    """A table cell: "-" for None, 4 significant digits for floats."""
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def nmse_summary(errors: list[float]) -> dict:
    """{mean, median, rounds} of the per-round normalized squared errors (None when no round counted)."""
    e = np.asarray(errors, dtype=np.float64)
    if e.size == 0:
        return {"mean": None, "median": None, "rounds": 0}
    return {"mean": float(np.mean(e)), "median": float(np.median(e)), "rounds": int(e.size)}


def decibels(summary: dict) -> dict:
    """{mean, median} of an :func:`nmse_summary` as 10·log10 [dB] (None when absent; −inf for 0)."""
    def db(v):
        if v is None:
            return None
        return float(10.0 * np.log10(v)) if v > 0 else float("-inf")
    return {"mean": db(summary["mean"]), "median": db(summary["median"])}


class LinkRecord:
    """Every round's NMSE; no scheme-specific fields."""

    def __init__(self, aggregator, d: int):
        self.aggregator, self.d = aggregator, int(d)
        self.errors: list[float] = []

    def record(self, result, trace, x: np.ndarray) -> None:
        self.errors.append(result.error)

    def nmse(self) -> dict:
        return nmse_summary(self.errors)

    def summary(self) -> dict:
        return {}

    @staticmethod
    def detail(summary: dict) -> str:
        """One cell of ``floras link``'s table from the scheme's summary (the JSON entry)."""
        return ""


class AdmissionRecord(LinkRecord):
    """Channel inversion (model §6.2): admitted clients, skipped rounds, ρ and the peak transmit-power ratio."""

    def __init__(self, aggregator, d: int):
        super().__init__(aggregator, d)
        self.admitted: list[int] = []
        self.power: list[float] = []
        self.rho: list[float] = []
        self.skipped = 0

    def record(self, result, trace, x: np.ndarray) -> None:
        self.admitted.append(result.diagnostics.get("admitted", result.contributors))  # per-block: mean K′_m
        self.power.append(result.diagnostics["max_power_ratio"])
        if result.contributors == 0:
            self.skipped += 1
        else:
            self.errors.append(result.error)
            self.rho.append(trace.rho)

    def summary(self) -> dict:
        adm = np.asarray(self.admitted)
        return {
            "admitted": {"mean": float(adm.mean()), "min": client_count(adm.min()), "max": client_count(adm.max())},
            "skipped_rounds": self.skipped,
            "rho_mean": float(np.mean(self.rho)) if self.rho else None,
            "max_power_ratio": float(np.max(self.power)),
            "nmse_note": "relative to the admitted clients' sum; skipped rounds (K' = 0) excluded",
        }

    @staticmethod
    def detail(s: dict) -> str:
        return (f"admitted mean={fmt(s['admitted']['mean'])} min={s['admitted']['min']} "
                f"skipped rounds={s['skipped_rounds']} rho mean={fmt(s['rho_mean'])}")


class BaselineRecord(LinkRecord):
    """A private baseline (model §9.1, §9.2): admission and the means of its ``diagnostics`` keys."""

    diagnostics: tuple[str, ...] = ()
    described = ("threat_model", "relation", "sensitivity", "grid_source", "d_pad")

    def __init__(self, aggregator, d: int):
        super().__init__(aggregator, d)
        self.admitted: list[int] = []
        self.rows: list[dict] = []
        self.skipped = 0

    def record(self, result, trace, x: np.ndarray) -> None:
        self.admitted.append(result.diagnostics.get("admitted", result.contributors))  # per-block: mean K′_m
        if result.diagnostics.get("skipped", 0.0):
            self.skipped += 1
        else:
            self.errors.append(result.error)
            self.rows.append({k: result.diagnostics[k] for k in self.diagnostics if k in result.diagnostics})

    def summary(self) -> dict:
        adm = np.asarray(self.admitted)
        desc = self.aggregator.describe()
        means = {}
        for key in self.diagnostics:
            vals = [row[key] for row in self.rows if key in row]
            means[key] = float(np.mean(vals)) if vals else None
        out = {"admitted": {"mean": float(adm.mean()), "min": client_count(adm.min()), "max": client_count(adm.max())},
               "skipped_rounds": self.skipped, "diagnostics_mean": means}
        for key in self.described:
            if key in desc:
                out[key] = desc[key]
        if "max_power_ratio" in means:
            out["max_power_ratio"] = float(np.max([row["max_power_ratio"] for row in self.rows])) if self.rows else None
        return out


def client_count(value) -> int | float:
    """A client count: an integer, or (per-block admission, model §5.1) an entry-weighted mean, 4 decimals."""
    value = float(value)
    return int(value) if value.is_integer() else round(value, 4)
