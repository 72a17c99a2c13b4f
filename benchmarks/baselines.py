"""Aggregation time per round of every scheme at the Fashion-MNIST MLP's size d = 159 010 (model §9).

For each scheme — FLORAS, channel inversion, ideal, central Gaussian, analog Gaussian and DDGauss
(with its stages: rotation of the K padded vectors, conditional rounding, per-client discrete-Gaussian
noise (the link trace's path), the summed noise (``aggregate``'s path), modular sum and un-rotation) — one warm-up round (imports, Sionna model) and then the
median wall time of ``--repeats`` rounds of ``make_aggregator(...).aggregate`` on K = 20 fixed
client vectors (normalization, uplink, de-normalization, error). The machine's load average
(``os.getloadavg``) is printed with the results: the numbers are only comparable at equal load.

Usage: ``python benchmarks/baselines.py [--d 159010] [--K 20] [--repeats 5] [--json FILE]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time


def _median_time(step, repeats: int) -> float:
    step(0)
    times = []
    for t in range(1, repeats + 1):
        t0 = time.perf_counter()
        step(t)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _ddgauss_stages(cfg, *, K: int, d: int, repeats: int) -> dict:
    """Median time of each DDGauss stage for K clients (d_pad = 2^⌈log2 d⌉)."""
    import numpy as np

    from phy.digital.ddgauss import DDGaussAggregator, conditional_rounding, modular_sum, wrap_mod
    from phy.digital.discrete_gaussian import sample_discrete_gaussian
    from phy.digital.rotation import inverse_randomized_hadamard, rademacher_signs, randomized_hadamard
    from phy.normalization import normalize
    from phy.randomness import stream

    agg = DDGaussAggregator(cfg, K=K, d=d, seed=0)
    x = stream(0, "bench-x").standard_normal((K, d))
    s = normalize(x, rule="clip", C=agg.clip, clip_norm=agg.clip).s
    padded = np.zeros((K, agg.d_pad))
    padded[:, :d] = s
    signs = rademacher_signs(0, "ddgauss-rotation", 0, n=agg.d_pad)
    u = randomized_hadamard(padded, signs) / agg.grid
    ints = np.stack([conditional_rounding(u[k], bound=agg.delta2, seed=0, round_index=0, client=k)[0] for k in range(K)])
    scale = agg.local_std / agg.grid
    bits = int(cfg.of("ddgauss").bits)
    return {
        "rotation": _median_time(lambda t: randomized_hadamard(padded, signs), repeats),
        "rounding": _median_time(lambda t: [conditional_rounding(u[k], bound=agg.delta2, seed=0, round_index=t, client=k)
                                             for k in range(K)], repeats),
        "discrete_gaussian": _median_time(lambda t: [sample_discrete_gaussian(stream(0, "ddgauss-noise", t, k), scale,
                                                                              (agg.d_pad,)) for k in range(K)], repeats),
        "summed_noise": _median_time(lambda t: agg.summed_noise(n=K, scale=scale, round_index=t), repeats),
        "modular_sum": _median_time(lambda t: modular_sum(wrap_mod(ints, bits), bits), repeats),
        "unrotation": _median_time(lambda t: inverse_randomized_hadamard(ints[0] * agg.grid, signs), repeats),
        "noise_scale_grid_units": scale,
        "grid": agg.grid,
        "d_pad": agg.d_pad,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--d", type=int, default=159010)
    ap.add_argument("--K", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from phy.schemes import make_aggregator
    from phy.config import PhyConfig
    from phy.randomness import stream

    K, d = args.K, args.d
    x = stream(0, "bench-x").standard_normal((K, d))
    clip = dict(normalization="clip", clip_norm=1.0)
    configs = {
        "floras": PhyConfig.make(scheme="floras", L=32, floras={"N": 30}),
        "channel-inversion": PhyConfig(scheme="channel-inversion"),
        "ideal": PhyConfig(scheme="ideal"),
        "central-gaussian": PhyConfig.make(scheme="central-gaussian", **clip, **{"central-gaussian": {"noise_multiplier": 1.0}}),
        "analog-gaussian": PhyConfig.make(scheme="analog-gaussian", **clip, **{"analog-gaussian": {"noise_multiplier": 1.0}}),
        "ddgauss": PhyConfig.make(scheme="ddgauss", **clip, ddgauss={"bits": 16, "local_std": 0.01}),
    }
    load_before = os.getloadavg()
    out = {"d": d, "K": K, "repeats": args.repeats, "seconds_per_round": {}}
    for name, cfg in configs.items():
        agg = make_aggregator(cfg, K=K, d=d, seed=0, key=bytes(range(32)) if name == "floras" else None)
        out["seconds_per_round"][name] = _median_time(lambda t: agg.aggregate(x, round_index=t), args.repeats)
        print(f"{name:<18} {out['seconds_per_round'][name]:.3f} s/round", flush=True)
    out["ddgauss_stages_seconds"] = _ddgauss_stages(configs["ddgauss"], K=K, d=d, repeats=args.repeats)
    out["loadavg_1_5_15_before"] = list(load_before)
    out["loadavg_1_5_15_after"] = list(os.getloadavg())
    out["cpus"] = os.cpu_count()
    print(json.dumps(out, indent=2))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
