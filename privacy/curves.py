"""Privacy curves for the figures: ε against γ/S for several T and ε against T (model §7).

Computed here through :class:`privacy.FlorasRunAccountant` and stored as a small JSON file;
``figures/privacy_curves.py`` only reads that file. Every quantity depends on γ and S only
through γ/S (the Cauchy bound and both sampling bounds are functions of the base curve, which is
a function of S/γ), so the x axis is γ/S: for the paper normalization at full power S = 2√d,
e.g. γ = 10 with d = 10⁵ sits at γ/S ≈ 0.016.

JSON layout (ε = ∞ stored as the string "inf")::

    {"settings": {...}, "assumptions": {"client": [...], "item": [...]},
     "eps_vs_gamma": {"client": {"T": [...], "gamma_over_S": [...], "epsilon": [[...] per T]}, "item": {...}},
     "eps_vs_rounds": {"client": {"gamma_over_S": [...], "T": [...], "epsilon": [[...] per γ/S]}, "item": {...}},
     "per_round": {"gamma_over_S": [...], "order": 2.0, "bound": [...], "scalar_exact": [...]}}
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from privacy.rdp import cauchy_rdp_bound, cauchy_scalar_rdp
from privacy.run import FlorasRunAccountant

__all__ = ["DEFAULT_SETTINGS", "compute_curves", "write_curves", "read_curves"]

DEFAULT_SETTINGS = {
    "K": 20,
    "M": 100,
    "delta": 1e-5,
    "S": 10.0,  # sensitivity used for the γ grid; results depend on γ/S only
    "rounds_for_gamma": [1, 10, 100, 1000],
    "gamma_over_S_for_rounds": [1.0, 3.0, 10.0, 30.0],
    "gamma_min": 1,
    "gamma_max": 10_000,
    "n_gamma": 41,
    "T_max": 10_000,
    "item": {"local_steps": 5, "batch_size": 20, "local_dataset_size": 600, "relation": "add-remove"},
    "client": {"relation": "replace"},
}


def _enc(x: float):
    return "inf" if x == math.inf else float(x)


def _accountant(level: str, gamma: int, s: dict) -> FlorasRunAccountant:
    kw = dict(K=s["K"], N=s["K"] + int(gamma), M=s["M"], d=1, delta=s["delta"], sensitivity=s["S"], level=level,
              sampling="without-replacement", relation=s[level]["relation"])
    if level == "item":
        kw.update(local_steps=s["item"]["local_steps"], batch_size=s["item"]["batch_size"],
                  local_dataset_size=s["item"]["local_dataset_size"])
    return FlorasRunAccountant(**kw)


def compute_curves(settings: dict | None = None) -> dict:
    """All curve data (a JSON-ready dict) through the accountant; a few seconds on one core."""
    s = dict(DEFAULT_SETTINGS if settings is None else settings)
    gammas = np.unique(np.round(np.geomspace(s["gamma_min"], s["gamma_max"], s["n_gamma"])).astype(int))
    Ts = np.unique(np.round(np.geomspace(1, s["T_max"], 33)).astype(int))
    out = {"settings": s, "assumptions": {}, "eps_vs_gamma": {}, "eps_vs_rounds": {}}
    for level in ("client", "item"):
        rows = {T: [] for T in s["rounds_for_gamma"]}
        for g in gammas:
            acc = _accountant(level, int(g), s)
            for T in s["rounds_for_gamma"]:
                rows[T].append(_enc(acc.report(rounds=T).epsilon))
        out["eps_vs_gamma"][level] = {
            "T": list(s["rounds_for_gamma"]),
            "gamma_over_S": [float(g / s["S"]) for g in gammas],
            "epsilon": [rows[T] for T in s["rounds_for_gamma"]],
        }
        curves = []
        for ratio in s["gamma_over_S_for_rounds"]:
            acc = _accountant(level, int(round(ratio * s["S"])), s)
            curves.append([_enc(acc.report(rounds=int(T)).epsilon) for T in Ts])
        out["eps_vs_rounds"][level] = {
            "gamma_over_S": list(s["gamma_over_S_for_rounds"]),
            "T": [int(T) for T in Ts],
            "epsilon": curves,
        }
        rep = _accountant(level, int(s["S"]), s).report(rounds=1)
        out["assumptions"][level] = [a for a in rep.assumptions if not a.startswith("order grid")]
    ratios = np.geomspace(0.3, 1000, 60)
    out["per_round"] = {
        "gamma_over_S": ratios.tolist(),
        "order": 2.0,
        "bound": [_enc(cauchy_rdp_bound([2.0], sensitivity=1.0, gamma=r)[0]) for r in ratios],
        "scalar_exact": [_enc(cauchy_scalar_rdp([2.0], sensitivity=1.0, gamma=r)[0]) for r in ratios],
    }
    return out


def write_curves(data: dict, path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def read_curves(path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))
