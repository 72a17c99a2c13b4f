"""Seconds per round of every scheme of the matched comparison (the sweep-time prediction's table).

    python benchmarks/matched_timing.py [--rounds 5] [--datasets digits fashion-mnist]
    python benchmarks/matched_timing.py --from-results results     # from a finished sweep's runs

Runs each scheme for a few rounds (K = 20 of M = 100, MLP, batch 10 on digits / 50 on
Fashion-MNIST, one local epoch, one thread) through :func:`scenarios.runs.run.run_scenario` and
prints the median of the per-round wall times after the first round (``wall_time_s``
differences; setup excluded). The numbers feed ``scenarios/experiments/matched_timing.py``; state the
machine's load (``uptime``) with them.

``--from-results DIR`` measures nothing: it reads every finished run under ``DIR/<sweep>/`` and
prints, per (data set, K, M, batch size, training.eval_every) and scheme, the median over runs
of the last round's ``wall_time_s`` divided by the rounds (the runs' own training and
aggregation time, setup and tracing excluded; runs copied from an identical run are skipped).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS"):
    os.environ.setdefault(var, "1")

SCHEMES = {
    "floras": {"phy.scheme": "floras", "phy.floras.N": 32, "phy.L": 32},
    "channel-inversion": {"phy.scheme": "channel-inversion"},
    "ideal": {"phy.scheme": "ideal"},
    "central-gaussian": {"phy.scheme": "central-gaussian", "phy.central-gaussian.noise_multiplier": 1.0},
    "analog-gaussian": {"phy.scheme": "analog-gaussian", "phy.analog-gaussian.noise_multiplier": 1.0},
    "ddgauss": {"phy.scheme": "ddgauss", "phy.ddgauss.bits": 16, "phy.ddgauss.local_std": 0.01},
    "sqsgd": {"phy.scheme": "sqsgd", "phy.sqsgd.ratio": 0.1, "phy.sqsgd.epsilon0": 1.0},
}
BASES = {"digits": "scenarios/base/digits_mlp.toml", "fashion-mnist": "scenarios/base/fashion_mlp.toml"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--datasets", nargs="+", default=["digits", "fashion-mnist"])
    ap.add_argument("--schemes", nargs="+", default=list(SCHEMES))
    ap.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE",
                    help="extra overrides (e.g. the cross-device population: partition.clients=1000 "
                         "training.clients_per_round=100 training.batch_size=20 phy.L=128 phy.floras.N=128)")
    ap.add_argument("--from-results", default=None, metavar="DIR", help="read finished runs instead of running")
    args = ap.parse_args()
    if args.from_results:
        return from_results(Path(args.from_results))
    from scenarios.config import load_scenario
    from scenarios.runs.run import run_scenario
    from scenarios.store import read_metrics

    print(f"load: {os.getloadavg()}")
    for ds in args.datasets:
        for scheme in args.schemes:
            over = {"partition.clients": 100, "training.clients_per_round": 20, "run.rounds": args.rounds,
                    "phy.normalization": "clip", "phy.clip_norm": 1.0, **SCHEMES[scheme]}
            for item in args.set:
                key, _, value = item.partition("=")
                over[key] = float(value) if "." in value else int(value)
            if over.get("phy.scheme") != "floras":
                over.pop("phy.floras.N", None)
            if ds == "digits":
                over["training.batch_size"] = 10
            cfg = load_scenario(BASES[ds], over)
            with tempfile.TemporaryDirectory() as tmp:
                run_scenario(cfg, Path(tmp) / "run", progress=False)
                wall = read_metrics(Path(tmp) / "run")["wall_time_s"]
            steps = [b - a for a, b in zip(wall, wall[1:])]
            print(f"{ds:14s} {scheme:18s} {statistics.median(steps):.4f} s/round (first {wall[0]:.3f} s)", flush=True)


def from_results(root: Path) -> None:
    """Per-round wall time of every finished run under ``root``/<sweep>/ (see the module docstring)."""
    import json

    from scenarios.store import is_finished, read_config, read_metrics

    groups: dict = {}
    for run in sorted(root.glob("*/*/")):
        if not is_finished(run) or "copied_from" in json.loads((run / "sweep_run.json").read_text() or "{}"):
            continue
        c = read_config(run).get("config", {})
        wall = read_metrics(run)["wall_time_s"]
        key = (c["data"]["name"], c["training"]["clients_per_round"], c["partition"]["clients"],
               c["training"]["batch_size"], c["training"].get("eval_every", 1), c["phy"]["scheme"])
        groups.setdefault(key, []).append(wall[-1] / len(wall))
    print(f"{'data set':14s} {'K':>4s} {'M':>5s} {'B':>3s} {'eval':>4s} {'scheme':18s} {'s/round':>8s} runs")
    for key, values in sorted(groups.items()):
        ds, K, M, B, ev, scheme = key
        print(f"{ds:14s} {K:4d} {M:5d} {B:3d} {ev:4d} {scheme:18s} {statistics.median(values):8.4f} {len(values)}")


if __name__ == "__main__":
    main()
