"""Measured channel uses per round of every scheme against K, next to the analytic cost of model §5.

For K ∈ {10, 20, 50, 100} at d = 1 000 (``--dims``), 20 dB, it runs a link study (:func:`scenarios.api.link_study`,
the ``floras link`` path) of every scheme and records the mean ``channel_uses`` diagnostic over ``--rounds`` rounds
beside the analytic value of :mod:`phy.channel_uses` (what ``figures/channel_uses_vs_k.py`` draws): FLORAS
(d + 1)·L on L = 2^⌈log2(K + γ)⌉ chips with N = K + γ, γ = 28; analog schemes at the same L (equal resource,
d·L); DDGauss (B = 16) and sqSGD (ratio 0.1, 2 levels) K·bits·J over Rayleigh fading truncated at g_th = 0.01.
The noise parameters do not change the channel uses (fixed, not calibrated).

Usage: ``python benchmarks/channel_uses_vs_k.py [--Ks 10 20 50 100] [--dims 1000] [--rounds 20] [--json FILE]``
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from phy.channel_uses import analog_channel_uses, floras_min_chips  # noqa: E402

GAMMA, SNR_DB = 28, 20.0
SCHEMES = ("floras", "central-gaussian", "analog-gaussian", "channel-inversion", "ideal", "ddgauss", "sqsgd")
FAMILY = {"floras": "floras", "ddgauss": "ddgauss", "sqsgd": "sqsgd"}


def measure(K: int, d: int, rounds: int) -> dict:
    from figures.channel_uses_vs_k import analytic_uses
    from scenarios.api import link_study

    L = floras_min_chips(K=K, gamma=GAMMA)
    out = link_study(list(SCHEMES), K=K, d=d, rounds=rounds, snr_db=SNR_DB, seed=0, L=L, normalization="clip",
                     clip_norm=1.0, floras={"N": K + GAMMA}, central_gaussian={"noise_multiplier": 1.0},
                     analog_gaussian={"noise_multiplier": 1.0}, ddgauss={"bits": 16, "local_std": 0.1},
                     sqsgd={"levels": 2, "ratio": 0.1, "epsilon0": 4.0})
    rows = {}
    for s in SCHEMES:
        measured = out[s]["channel_uses"]["mean"]
        if s in FAMILY:
            analytic = analytic_uses(FAMILY[s], K=K, d=d)
        else:
            analytic = float(analog_channel_uses(d=d, L=L, resource="equal"))
        rows[s] = {"measured_mean": measured, "min": out[s]["channel_uses"]["min"], "max": out[s]["channel_uses"]["max"],
                   "analytic": analytic, "measured_over_analytic": measured / analytic}
    return {"K": K, "d": d, "L": L, "N": K + GAMMA, "rounds": rounds, "snr_db": SNR_DB, "schemes": rows}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--Ks", type=int, nargs="+", default=[10, 20, 50, 100])
    ap.add_argument("--dims", type=int, nargs="+", default=[1000])
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    results = []
    for d in args.dims:
        for K in args.Ks:
            r = measure(K, d, args.rounds)
            results.append(r)
            for s, row in r["schemes"].items():
                print(f"K={K:5d} d={d} L={r['L']:5d} {s:18s} measured {row['measured_mean']:.4g}  analytic "
                      f"{row['analytic']:.4g}  ratio {row['measured_over_analytic']:.3f}", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"benchmark": "channel_uses_vs_k", "results": results}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
