"""sqSGD aggregation per round at large K against its floor (model §9.3), JSON output.

For each configuration (default: ``population``, K_q = 2 levels, ratio r = 0.1, ε₀ = 4, the one of
``scenarios/matched_population.toml``; ``full``, K_q = 4, r = 1, ε₀ = 4, the scheme's defaults but K_q) and each K
(default 20, 100, 1 000) at d = 159 010 (the Fashion-MNIST MLP): the wall time of ``aggregate_stream`` over the
round's K clients in chunks of ``--chunk`` (one pregenerated float64 chunk at every position, norms ≈ 2 so that
every update is clipped at R = 1), and of its floor on the same chunk in the same repetition. The floor is what any
implementation of the scheme as specified must compute, with numpy's own kernels:

- the analog floor of ``benchmarks/aggregation_floor.py`` with two accumulators: the clients' means and centred
  norms (the clip factors) and the two sums the round reports beside its estimate (the admitted clients' clipped
  sum and raw sum, against which its errors are measured), one matrix product per chunk;
- for each admitted client K' (the round's own count, read from the aggregate just timed): its four keyed streams
  (coordinates, rotation signs, quantization, PrivQuant) and the mechanism's draws from them, as the mechanism
  makes them (d̃ coordinates without replacement when d̃ < d; n signs; n rounding uniforms; the agreement count,
  n other-level offsets and a uniform permutation of the n positions), the gather of its d̃ coordinates into the
  padded vector, the rotation and the server's un-rotation (two Hadamard transforms of n = 2^⌈log2 d̃⌉,
  :func:`phy.digital.rotation.fwht`) and the scatter-add of its d̃ decoded values into the sum.

Not in the floor: the rounding arithmetic, the clip of y and of the levels, the selection of the agreeing
positions, the bookkeeping. Repetitions are interleaved (every configuration and K, aggregate then floor, once per
repetition after one warm-up round each); medians and minima are reported with the load average before and after.
A row that fails records its error and the others are still written (atomically).

Usage: ``python benchmarks/sqsgd_floor.py [--K 20 100 1000] [--configs population,full] [--repeats 5] [--json FILE]``
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.aggregation_floor import _chunks, _floor, _timed, finish, parse  # noqa: E402

CONFIGS = {"population": {"levels": 2, "ratio": 0.1, "epsilon0": 4.0},
           "full": {"levels": 4, "ratio": 1.0, "epsilon0": 4.0}}


def _aggregator(config: str, *, K: int, d: int):
    from phy.config import PhyConfig
    from phy.schemes import make_aggregator

    cfg = PhyConfig.make(scheme="sqsgd", normalization="clip", clip_norm=1.0, sqsgd=CONFIGS[config])
    return make_aggregator(cfg, K=K, d=d, seed=0, key=None)


def _client_floor(x: np.ndarray, *, admitted: int, d_tilde: int, n: int, levels: int, t: int) -> np.ndarray:
    """The per-client part of the floor (module text) for ``admitted`` clients (client k takes row k mod c of ``x``,
    as :func:`benchmarks.aggregation_floor._chunks` hands the rows); returns n·Σ_k x_k restricted to I_k [d] (the
    two unnormalized transforms give H·H = n·I; without the quantization the decoded sum is the clients' sum on
    their coordinates)."""
    from phy.digital.rotation import fwht
    from phy.randomness import stream

    d = x.shape[1]
    total, padded = np.zeros(d), np.zeros(n)
    for k in range(admitted):
        row = x[k % x.shape[0]]
        if d_tilde < d:
            coords = stream(0, "sqsgd-coordinates", t, k).choice(d, size=d_tilde, replace=False)
        else:
            stream(0, "sqsgd-coordinates", t, k)
            coords = slice(None)
        signs = stream(0, "sqsgd-rotation", t, k).integers(0, 2, size=n) * 2.0 - 1.0
        stream(0, "sqsgd-quantize", t, k).random(n)
        g = stream(0, "sqsgd-privquant", t, k)
        g.random(1)
        g.integers(1, levels, size=n)
        g.permutation(n)
        padded[:d_tilde] = row[coords]
        y = fwht(padded * signs)  # the client's rotation (the 1/√n scalings are above the floor)
        total[coords] += (signs * fwht(y))[:d_tilde]  # the server's un-rotation and the scatter-add
    return total


def main(argv=None) -> int:
    args, configs, c, x = parse(argv, description=__doc__.split("\n\n")[0], flag="configs", choices=CONFIGS, d_min=2)
    rng = np.random.default_rng(1)
    out = {"d": args.d, "chunk": c, "repeats": args.repeats, "K": args.K, "configs": {k: CONFIGS[k] for k in configs},
           "cpus": os.cpu_count(), "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
           "loadavg_1_5_15_before": list(os.getloadavg()), "rows": {}}
    rows, aggs = out["rows"], {}

    def floor(name: str, K: int, admitted: int, t: int) -> None:
        agg = aggs[name]
        _floor(x, K=K, accumulators=2, draws=0, rng=rng)
        _client_floor(x, admitted=admitted, d_tilde=agg.d_tilde, n=agg.n, levels=agg.params.levels, t=t)

    for K in args.K:
        for cf in configs:
            name = f"{cf}@K={K}"
            rows[name] = {"config": cf, "K": K, "aggregate_s": [], "floor_s": [], "admitted": []}
            try:
                aggs[name] = _aggregator(cf, K=K, d=args.d)
                rows[name].update(d_tilde=aggs[name].d_tilde, n=aggs[name].n)
                res = aggs[name].aggregate_stream(_chunks(x, K), round_index=0)  # warm-up (imports, tables)
                floor(name, K, int(res.contributors), 0)
            except Exception as exc:  # noqa: BLE001 — a failed row is recorded, the others still run
                rows[name]["error"] = f"{type(exc).__name__}: {exc}"
                print(f"{name}: {rows[name]['error']}", flush=True)
    for rep in range(1, args.repeats + 1):
        for name, row in rows.items():
            if "error" in row:
                continue
            K, box = row["K"], {}
            try:
                row["aggregate_s"].append(_timed(lambda: box.setdefault(
                    "r", aggs[name].aggregate_stream(_chunks(x, K), round_index=rep))))
                row["admitted"].append(int(box["r"].contributors))
                row["floor_s"].append(_timed(lambda: floor(name, K, row["admitted"][-1], rep)))
            except Exception as exc:  # noqa: BLE001
                row["error"] = f"{type(exc).__name__}: {exc}"
        print(f"repetition {rep}/{args.repeats} done", flush=True)
    finish(out, args.json, width=20)
    return 0 if all("error" not in r for r in rows.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
