"""FLORAS and the central Gaussian at equal privacy: both calibrated to ε = 8, then trained on digits (model §10).

    PYTHONPATH=. python examples/equal_epsilon.py [--rounds 30] [--epsilon 8] [--out runs/equal-epsilon]

FLORAS uses clip normalization (R = 1) with N = 32 sequences and its norm bound C calibrated to
the target (printed with its transmit back-off 20·log10(C/√(d·P)) dB, model §2); the central
Gaussian (trusted server, model §9.1) gets its noise multiplier calibrated the same way. Both run
``--rounds`` rounds on scikit-learn's digits (K = 10 of M = 50 clients per round) and the script
prints one line per scheme: the calibrated value, the final test accuracy and the ε the run's
accountant reports (threat model T1 for FLORAS, model §7.1). Built on :mod:`scenarios.api`.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from scenarios import api  # noqa: E402


def scenario(scheme: str, rounds: int) -> dict:
    phy = {"scheme": scheme, "L": 32, "snr_db": 20.0, "normalization": "clip", "clip_norm": 1.0}
    if scheme == "floras":
        phy["floras"] = {"N": 32}
    return {
        "data": {"name": "digits", "test_fraction": 0.25},
        "partition": {"kind": "iid", "clients": 50},
        "model": {"name": "mlp", "hidden": [64]},
        "training": {"clients_per_round": 10, "lr": 0.3, "batch_size": 5, "local_epochs": 1},
        "phy": phy,
        "privacy": {"delta": 1e-5, "level": "client", "relation": "replace"},
        "run": {"rounds": rounds, "seed": 0},
    }


def with_value(data: dict, parameter: str, value) -> dict:
    head, _, tail = parameter.partition(".")
    phy = dict(data["phy"])
    if tail:
        phy[head] = {**phy.get(head, {}), tail: value}
    else:
        phy[head] = value
    return {**data, "phy": phy}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=30, help="federated rounds T (the calibration composes T rounds)")
    p.add_argument("--epsilon", type=float, default=8.0, help="target ε at δ = 1e-5")
    p.add_argument("--out", default=None, help="directory for the two runs (default: a temporary one)")
    args = p.parse_args(argv)
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="equal-epsilon-"))
    print(f"equal privacy: target ε = {args.epsilon:g} at δ = 1e-5 after {args.rounds} rounds, digits, K = 10 of M = 50")
    print(f"{'scheme':<18} {'parameter':<34} {'value':>10} {'back-off dB':>11} {'accuracy':>9} {'epsilon':>8}")
    for scheme in ("floras", "central-gaussian"):
        data = scenario(scheme, args.rounds)
        cal = api.calibrate(data, args.epsilon)
        rows = api.run(with_value(data, cal["parameter"], cal["value"]), out=out / scheme)
        last = rows[-1]
        back_off = cal.get("back_off_db")
        back = "-" if back_off is None else f"{back_off:.2f}"
        eps = last["epsilon"]
        eps_text = "inf" if eps is None or math.isinf(eps) else f"{eps:.4g}"
        print(f"{scheme:<18} {cal['parameter']:<34} {cal['value']:>10.4g} {back:>11} {last['test_accuracy']:>9.4f} "
              f"{eps_text:>8}")
    print(f"runs written under {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
