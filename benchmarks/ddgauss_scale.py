"""DDGauss aggregation per round at large K against its floor (model §9.2), JSON output.

For each K (default 20, 100, 1 000) at d = 159 010 (the Fashion-MNIST MLP, d_pad = 2^18), the median wall
time of ``DDGaussAggregator.aggregate`` on K fixed client vectors, and of the floor's parts, timed on
the same data in the same repetition:

- ``rotation``: the randomized Hadamard rotation of the K padded updates (client chunks, reused buffers);
- ``rotation_butterflies``: the same rotation with the transform's butterfly form (log2 d_pad passes, the
  form used for every length before the factored one), beside it;
- ``aggregate_butterflies``: ``aggregate`` with the clients' transform switched to the butterfly form;
- ``summed_noise``: d_pad draws of the summed discrete Gaussian noise (one table look-up each);
- ``modular_sum``: the sum of K integer vectors of length d_pad, reduced mod 2^B;
- ``rounding_draws``: the K·d_pad uniforms of the randomized rounding (one per client coordinate:
  unavoidable too, reported beside the floor, ``floor_with_rounding`` includes them).

``floor`` = rotation + summed_noise + modular_sum. Repetitions are interleaved (every K and every
part once per repetition, after one warm-up round each), so a load change hits every row alike. A row
that fails (e.g. a part that does not exist in an older checkout) records its error and the others are
still written. Peak memory: one extra, untimed round per K of a fresh aggregator under ``tracemalloc``
(allocations made by its construction and the round, the K×d input excluded) and the process's ``ru_maxrss`` at the end. The load average is
recorded before and after: the numbers are comparable only at equal load.

Usage: ``python benchmarks/ddgauss_scale.py [--d 159010] [--K 20 100 1000] [--repeats 3] [--json FILE]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import time
import tracemalloc


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _parts(agg, x, *, K: int, d: int, t: int):
    """Callables for the floor's parts at round t (imports inside: an older checkout may lack some)."""
    import numpy as np

    from phy.digital.rotation import fwht, rademacher_signs
    from phy.randomness import stream

    d_pad = agg.d_pad
    chunk = max(1, (1 << 22) // d_pad)
    signs = rademacher_signs(0, "ddgauss-rotation", t, n=d_pad)

    buf, work = np.zeros((min(chunk, K), d_pad)), np.empty((min(chunk, K), d_pad))

    def rotation(**kw):  # H·D·[x_k, 0]/√d_pad of every client, in two reused buffers
        for lo in range(0, K, chunk):
            rows = x[lo:lo + chunk]
            c = rows.shape[0]
            buf[:c, :d] = rows
            buf[:c, d:] = 0.0
            np.multiply(buf[:c], signs, out=buf[:c])
            fwht(buf[:c], overwrite=True, work=work[:c], **kw) * (1.0 / np.sqrt(d_pad))

    def rotation_butterflies():
        rotation(method="butterflies")

    def aggregate_butterflies():
        import functools

        import phy.digital.ddgauss_clients as clients

        original = clients.fwht
        clients.fwht = functools.partial(fwht, method="butterflies")
        try:
            agg.aggregate(x, round_index=t)
        finally:
            clients.fwht = original

    def summed_noise():
        from phy.digital.discrete_gaussian_sum import summed_discrete_gaussian

        sampler = summed_discrete_gaussian(agg.local_std / agg.grid, K)
        sampler.sample(stream(0, "bench-noise", t), d_pad)

    ints = np.ones((min(chunk, K), d_pad), dtype=np.int64)

    def modular_sum():
        from phy.digital.ddgauss import wrap_mod

        acc = np.zeros(d_pad, dtype=np.int64)
        for lo in range(0, K, chunk):
            acc += ints[: min(chunk, K - lo)].sum(axis=0)
        wrap_mod(acc, int(agg.params.bits))

    def rounding_draws():
        for k in range(K):
            stream(0, "bench-rounding", t, k).random(d_pad)

    return {"rotation": rotation, "rotation_butterflies": rotation_butterflies,
            "aggregate_butterflies": aggregate_butterflies, "summed_noise": summed_noise, "modular_sum": modular_sum,
            "rounding_draws": rounding_draws}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--d", type=int, default=159010)
    ap.add_argument("--K", type=int, nargs="+", default=[20, 100, 1000])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--bits", type=int, default=16)
    ap.add_argument("--local-std", type=float, default=0.01)
    ap.add_argument("--no-memory", action="store_true", help="skip the tracemalloc round")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np

    from phy.config import PhyConfig
    from phy.randomness import stream
    from phy.schemes import make_aggregator

    d = args.d
    cfg = PhyConfig.make(scheme="ddgauss", normalization="clip", clip_norm=1.0, g_th=1e-9,
                         ddgauss={"bits": args.bits, "local_std": args.local_std})
    out = {"d": d, "K": args.K, "repeats": args.repeats, "bits": args.bits, "local_std": args.local_std,
           "cpus": os.cpu_count(), "loadavg_1_5_15_before": list(os.getloadavg()), "rows": {}}
    setups, times, errors = {}, {}, {}
    for K in args.K:
        try:
            agg = make_aggregator(cfg, K=K, d=d, seed=0)
            x = stream(0, "bench-x", K).standard_normal((K, d))
            setups[K] = (agg, x)
        except Exception as exc:  # noqa: BLE001 - a failing row is recorded, the others still run
            errors[f"K={K}"] = repr(exc)
    names = ["aggregate", "aggregate_butterflies", "rotation", "rotation_butterflies", "summed_noise", "modular_sum",
             "rounding_draws"]
    for rep in range(args.repeats + 1):  # repetition 0: warm-up, not recorded
        for K, (agg, x) in setups.items():
            steps = {"aggregate": lambda: agg.aggregate(x, round_index=rep)}
            steps.update(_parts(agg, x, K=K, d=d, t=rep))
            for name in names:
                key = f"K={K}/{name}"
                if key in errors:
                    continue
                try:
                    dt = _timed(steps[name])
                except Exception as exc:  # noqa: BLE001
                    errors[key] = repr(exc)
                    continue
                if rep > 0:
                    times.setdefault(key, []).append(dt)
        print(f"repetition {rep} done", flush=True)
    for K, (agg, x) in setups.items():
        row = {name: statistics.median(times[f"K={K}/{name}"]) for name in names if f"K={K}/{name}" in times}
        if all(p in row for p in ("rotation", "summed_noise", "modular_sum")):
            row["floor"] = row["rotation"] + row["summed_noise"] + row["modular_sum"]
            if "rounding_draws" in row:
                row["floor_with_rounding"] = row["floor"] + row["rounding_draws"]
            if "aggregate" in row:
                row["aggregate_over_floor"] = row["aggregate"] / row["floor"]
            if "aggregate_butterflies" in row:
                row["aggregate_butterflies_over_floor"] = row["aggregate_butterflies"] / row["floor"]
                if "floor_with_rounding" in row:
                    row["aggregate_over_floor_with_rounding"] = row["aggregate"] / row["floor_with_rounding"]
        row["input_bytes"] = int(x.nbytes)
        if not args.no_memory:
            try:
                tracemalloc.start()  # a fresh aggregator: its reused chunk buffers are counted too
                fresh = make_aggregator(cfg, K=K, d=d, seed=0)
                fresh.aggregate(x, round_index=10_000)
                row["peak_traced_bytes"] = int(tracemalloc.get_traced_memory()[1])
                del fresh
            except Exception as exc:  # noqa: BLE001
                errors[f"K={K}/memory"] = repr(exc)
            finally:
                tracemalloc.stop()
        out["rows"][f"K={K}"] = row
        print(f"K={K}: " + ", ".join(f"{k}={v:.4g}" for k, v in row.items()), flush=True)
    out["errors"] = errors
    out["loadavg_1_5_15_after"] = list(os.getloadavg())
    out["ru_maxrss_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps(out, indent=2))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
