"""Streaming aggregation per round of the analog schemes at large K against its floor (model §6, §9), JSON output.

For each scheme (ideal, FLORAS on its sufficient path, channel inversion, central Gaussian, analog Gaussian; clip
normalization, R = 1, the configurations of ``benchmarks/population_round.py``) and each K (default 20, 100,
1 000) at d = 159 010 (the Fashion-MNIST MLP): the wall time of ``aggregate_stream`` over the round's K clients
in chunks of ``--chunk`` (one pregenerated float64 chunk handed at every position, norms ≈ 2 so that every update
is clipped), and of its floor on the same chunks in the same repetition. The floor is what any implementation of
the scheme's receiver does with numpy's own kernels:

- the clients' means μ_k (model §2) and norms ‖x_k − μ_k·1‖ from ``sum(axis=1)`` and ``einsum("kd,kd->k")``
  per chunk (the clip factors need them);
- the weighted sums the scheme reports, as one matrix product per chunk, ``W @ x`` with W the a × c weights
  (a = 2 for ideal, channel inversion, central and analog Gaussian: the clipped sum and the raw sum the error is
  measured against; a = 3 for FLORAS: Σ u_k x_k, Σ f_k x_k, Σ x_k);
- the scheme's Gaussian d-vectors (0 for ideal; 1 for FLORAS's receiver noise, channel inversion's receiver
  noise and central Gaussian's noise; 2 for analog Gaussian's receiver and artificial noise), ``standard_normal``.

The matrix product sums in BLAS's order, not the simulator's: the simulator adds client after client
(``phy.aggregation.add_rows``) so that a round's result does not depend on the chunk size, bit for bit; the
floor does not keep that property, so it is a lower bound, not an alternative. The check for finite values and
the per-client bookkeeping are above the floor. Repetitions are interleaved (every K and scheme, aggregate then
floor, once per repetition after one warm-up round each); medians and minima are reported, with the load
average before and after. A row that fails records its error and the others are still written (atomically).

Threads: the receiver's row pass (:mod:`phy.row_pass`) and the floor's BLAS both follow ``OMP_NUM_THREADS``
(unset: every CPU); ``OMP_NUM_THREADS=1`` compares one core against one core. The JSON records both.

Usage: ``python benchmarks/aggregation_floor.py [--K 20 100 1000] [--chunk 100] [--repeats 5] [--json FILE]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# accumulators (weighted sums over the clients) and Gaussian d-vectors of each scheme's receiver (module doc)
FLOOR_WORK = {"ideal": (2, 0), "floras": (3, 1), "channel-inversion": (2, 1), "central-gaussian": (2, 1),
              "analog-gaussian": (2, 2)}


def _aggregator(scheme: str, *, K: int, d: int):
    from benchmarks.population_round import SCHEMES
    from phy.config import PhyConfig
    from phy.schemes import make_aggregator, scheme_spec

    cfg = PhyConfig.make(scheme=scheme, normalization="clip", clip_norm=1.0, **SCHEMES[scheme])
    key = bytes(range(32)) if scheme_spec(scheme).needs_key else None
    agg = make_aggregator(cfg, K=K, d=d, seed=0, key=key)
    if scheme == "floras" and agg.link.path != "sufficient":
        raise RuntimeError(f"FLORAS runs its {agg.link.path!r} path here, not the sufficient one")
    return agg


def _chunks(x: np.ndarray, K: int):
    """The round's chunks: the same c×d array at every position (rows 0..K−1 in order)."""
    c = x.shape[0]
    for start in range(0, K, c):
        n = min(c, K - start)
        yield np.arange(start, start + n), x[:n]


def _floor(x: np.ndarray, *, K: int, accumulators: int, draws: int, rng: np.random.Generator) -> np.ndarray:
    """The floor's work; returns its sums ``[a, d]``: row 0 the clipped estimate Σ_k f_k(x_k − μ_k·1) + Σ_k μ_k
    at R = 1 (what ideal aggregation returns; plus the noise draws), the last row the raw sum Σ_k x_k."""
    d = x.shape[1]
    acc = np.zeros((accumulators, d))
    fmu, mu_sum = 0.0, 0.0
    for _, rows in _chunks(x, K):
        mu = rows.sum(axis=1) / d  # the model's per-client mean (§2)
        norms = np.sqrt(np.maximum(np.einsum("kd,kd->k", rows, rows) - d * mu * mu, 0.0))  # ‖x_k − μ_k·1‖
        f = np.minimum(1.0, 1.0 / np.maximum(norms, np.finfo(float).tiny))
        w = np.vstack([f] * (accumulators - 1) + [np.ones(rows.shape[0])])
        acc += w @ rows
        fmu, mu_sum = fmu + float(f @ mu), mu_sum + float(mu.sum())
    acc[0] += mu_sum - fmu
    for _ in range(draws):
        acc[0] += rng.standard_normal(d)
    return acc


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _write(path: Path, out: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=path.name, suffix=".tmp", delete=False,
                                     encoding="utf-8") as fh:
        json.dump(out, fh, indent=2)
        tmp = fh.name
    os.replace(tmp, path)


def parse(argv, *, description: str, flag: str, choices, d_min: int = 1):
    """The floor benchmarks' common command line: --d, --K, --chunk, --repeats, ``--{flag}`` (comma-separated, of
    ``choices``) and --json, checked (one-line errors); returns (args, the chosen names, the chunk's c, the chunk
    [c, d] with ‖x_k‖ ≈ 2, so that every update is clipped at R = 1)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--d", type=int, default=159_010)
    ap.add_argument("--K", type=int, nargs="+", default=[20, 100, 1000])
    ap.add_argument("--chunk", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument(f"--{flag}", default=",".join(choices), help=f"comma-separated, of {', '.join(choices)}")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    chosen = [s for s in getattr(args, flag).split(",") if s]
    for s in chosen:
        if s not in choices:
            ap.error(f"--{flag}: {s!r} is not one of {', '.join(choices)}")
    for name, value, low in (("--d", args.d, d_min), ("--chunk", args.chunk, 1), ("--repeats", args.repeats, 1)):
        if value < low:
            ap.error(f"{name} must be ≥ {low} (got {value})")
    if any(k < 1 for k in args.K):
        ap.error(f"--K must be ≥ 1 (got {args.K})")
    c = min(args.chunk, max(args.K))
    x = np.random.default_rng(0).standard_normal((c, args.d)) * (2.0 / np.sqrt(args.d))
    return args, chosen, c, x


def main(argv=None) -> int:
    args, schemes, c, x = parse(argv, description=__doc__.split("\n\n")[0], flag="schemes", choices=FLOOR_WORK)
    rng = np.random.default_rng(1)
    from phy.row_pass import row_threads

    out = {"d": args.d, "chunk": c, "repeats": args.repeats, "K": args.K, "cpus": os.cpu_count(),
           "omp_num_threads": os.environ.get("OMP_NUM_THREADS"), "receiver_threads": row_threads(),
           "loadavg_1_5_15_before": list(os.getloadavg()), "rows": {}}
    rows, aggs = out["rows"], {}
    for K in args.K:
        for s in schemes:
            name = f"{s}@K={K}"
            rows[name] = {"scheme": s, "K": K, "aggregate_s": [], "floor_s": []}
            try:
                aggs[name] = _aggregator(s, K=K, d=args.d)
                aggs[name].aggregate_stream(_chunks(x, K), round_index=0)  # warm-up (imports, tables)
                _floor(x, K=K, accumulators=FLOOR_WORK[s][0], draws=FLOOR_WORK[s][1], rng=rng)
            except Exception as exc:  # noqa: BLE001 — a failed row is recorded, the others still run
                rows[name]["error"] = f"{type(exc).__name__}: {exc}"
                print(f"{name}: {rows[name]['error']}", flush=True)
    for rep in range(1, args.repeats + 1):
        for name, row in rows.items():
            if "error" in row:
                continue
            K, (a, draws) = row["K"], FLOOR_WORK[row["scheme"]]
            try:
                row["aggregate_s"].append(_timed(lambda: aggs[name].aggregate_stream(_chunks(x, K), round_index=rep)))
                row["floor_s"].append(_timed(lambda: _floor(x, K=K, accumulators=a, draws=draws, rng=rng)))
            except Exception as exc:  # noqa: BLE001
                row["error"] = f"{type(exc).__name__}: {exc}"
        print(f"repetition {rep}/{args.repeats} done", flush=True)
    finish(out, args.json, width=26)
    return 0


def finish(out: dict, json_path: Path | None, *, width: int) -> None:
    """Medians, minima and ratios of every row of ``out["rows"]`` with timings (``aggregate_s``, ``floor_s``), a line
    each, the load average after and the peak RSS; the JSON written atomically when ``json_path`` is given."""
    for name, row in out["rows"].items():
        if row["aggregate_s"] and row["floor_s"]:
            for key in ("aggregate_s", "floor_s"):
                row[key.replace("_s", "_median_s")] = statistics.median(row[key])
                row[key.replace("_s", "_min_s")] = min(row[key])
            row["over_floor_median"] = row["aggregate_median_s"] / row["floor_median_s"]
            row["over_floor_min"] = row["aggregate_min_s"] / row["floor_min_s"]
            print(f"{name:<{width}} aggregate {row['aggregate_median_s']:.3f} s (min {row['aggregate_min_s']:.3f}), "
                  f"floor {row['floor_median_s']:.3f} s (min {row['floor_min_s']:.3f}): {row['over_floor_median']:.2f}× "
                  f"(minima {row['over_floor_min']:.2f}×)", flush=True)
    out["loadavg_1_5_15_after"] = list(os.getloadavg())
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(f"load average before {out['loadavg_1_5_15_before']}, after {out['loadavg_1_5_15_after']}; "
          f"peak RSS {out['peak_rss_mb']:.0f} MB", flush=True)
    if json_path:
        _write(json_path, out)


if __name__ == "__main__":
    raise SystemExit(main())
