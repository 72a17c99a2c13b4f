"""Time and peak memory per round of the FLORAS sufficient, fast and chip-level paths (model §6.1).

For d ∈ {10⁴, 10⁵, 10⁶}, K = 20, N = 30, L = 32 it measures, each configuration in its own
subprocess:

- ``floor``: only drawing the N×(d+1) standard Gaussians the fast path needs (one Philox
  generator, one call) — the random-number floor;
- ``sufficient-floor``: the sufficient path's physical limit — drawing N + d standard Gaussians
  (one generator, one call each) and one K×d weighted sum Σ_k c_k s_k;
- ``sufficient`` / ``fast`` / ``chip``: one FLORAS link round (``FlorasLink.run_round`` on normalized vectors:
  keyed assignment, Sionna fading draw, reference and data slots, despreading, ratio estimator);
- ``sufficient+agg`` / ``fast+agg`` / ``chip+agg``: the whole aggregation-interface round (normalization,
  link round, de-normalization, error);
- ``fading``: the per-round Sionna fading draw alone (part of every link round; measured once,
  it does not depend on d).

Time: median over ``--repeats`` rounds after one warm-up round (which imports TensorFlow and
builds the Sionna model). Memory: peak traced allocation (``tracemalloc``, numpy buffers
included) during one round, the K×d input included, and the process's peak resident set
(``resource.getrusage``), which also counts the TensorFlow runtime.

The table's "× floor" column divides by the fast path's floor (``floor``) and, for the sufficient
path, by its own floor (``sufficient-floor``); the last lines print sufficient / own floor and
fast / sufficient at every d.

Usage: ``python benchmarks/link_throughput.py [--dims 10000 100000 1000000] [--repeats 5] [--json FILE]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import tracemalloc

K, N, L = 20, 30, 32
KEY = bytes(range(32))


def _one(kind: str, d: int, repeats: int) -> dict:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np

    from phy.schemes import make_aggregator
    from phy.config import PhyConfig
    from phy.floras import FlorasLink
    from phy.normalization import normalize
    from phy.randomness import stream

    x = stream(0, "bench-x").standard_normal((K, d))
    if kind == "fading":
        from phy.fading import draw_rayleigh

        def step(t):
            return draw_rayleigh(0, t, K=K)
    elif kind == "floor":
        def step(t):
            return stream(0, "bench-floor", t).standard_normal((N, d + 1))
    elif kind == "sufficient-floor":
        s = normalize(x, rule="paper", C=np.sqrt(d), clip_norm=None).s
        del x
        c = np.ones(K)

        def step(t):
            rng = stream(0, "bench-floor", t)
            rng.standard_normal(N)
            return c @ s + rng.standard_normal(d)
    elif kind in ("fast", "chip", "sufficient"):
        link = FlorasLink(PhyConfig.make(L=L, floras={"N": N, "path": kind}), K=K, seed=0, key=KEY)
        s = normalize(x, rule="paper", C=np.sqrt(d), clip_norm=None).s
        del x

        def step(t):
            return link.run_round(s, round_index=t)
    else:
        path = kind.split("+")[0]
        agg = make_aggregator(PhyConfig.make(L=L, floras={"N": N, "path": path}), K=K, d=d, seed=0, key=KEY)

        def step(t):
            return agg.aggregate(x, round_index=t)

    step(0)  # warm-up: imports, Sionna model
    times = []
    for t in range(1, repeats + 1):
        t0 = time.perf_counter()
        step(t)
        times.append(time.perf_counter() - t0)
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    step(repeats + 1)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    held = 0 if kind in ("floor", "fading") else K * d * 8
    # the K×d input held before tracing started (s for a link round, x for an aggregation round) is
    # added, so the figure is the round's full footprint
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"kind": kind, "d": d, "seconds": float(np.median(times)), "traced_peak_bytes": peak + held, "max_rss_bytes": rss}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dims", type=int, nargs="+", default=[10**4, 10**5, 10**6])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--kinds", nargs="+", default=["fading", "floor", "sufficient-floor", "sufficient", "fast", "chip",
                                                   "sufficient+agg", "fast+agg", "chip+agg"])
    ap.add_argument("--json", dest="json_path", metavar="FILE", help="also write the rows and ratios as JSON")
    ap.add_argument("--one", nargs=2, metavar=("KIND", "D"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(_one(args.one[0], int(args.one[1]), args.repeats)))
        return 0
    rows = []
    for i, d in enumerate(args.dims):
        for kind in args.kinds:
            if kind == "fading" and i > 0:
                continue
            out = subprocess.run([sys.executable, __file__, "--one", kind, str(d), "--repeats", str(args.repeats)],
                                 capture_output=True, text=True, check=True)
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    secs = {(r["kind"], r["d"]): r["seconds"] for r in rows}
    print(f"K={K} N={N} L={L}; median of {args.repeats} rounds; memory: traced peak (numpy, inputs included) / process max RSS")
    print(f"load: {os.getloadavg()} on {os.cpu_count()} cpus")
    print(f"{'d':>9} {'path':>16} {'s/round':>9} {'x floor':>8} {'traced MiB':>11} {'RSS MiB':>8}")
    for r in rows:
        own = "sufficient-floor" if r["kind"].startswith("sufficient") else "floor"
        ratio = r["seconds"] / secs[(own, r["d"])] if (own, r["d"]) in secs else float("nan")
        r["x_floor"] = ratio
        print(f"{r['d']:>9} {r['kind']:>16} {r['seconds']:>9.4f} {ratio:>8.2f} "
              f"{r['traced_peak_bytes'] / 2**20:>11.1f} {r['max_rss_bytes'] / 2**20:>8.1f}")
    ratios = {}
    for d in args.dims:
        if ("sufficient", d) in secs and ("sufficient-floor", d) in secs:
            ratios[f"sufficient_over_its_floor_d{d}"] = secs[("sufficient", d)] / secs[("sufficient-floor", d)]
        if ("sufficient", d) in secs and ("fast", d) in secs:
            ratios[f"fast_over_sufficient_d{d}"] = secs[("fast", d)] / secs[("sufficient", d)]
    for name, value in ratios.items():
        print(f"{name}: {value:.2f}")
    if args.json_path:
        with open(args.json_path, "w", encoding="utf-8") as fh:
            json.dump({"K": K, "N": N, "L": L, "repeats": args.repeats, "load": list(os.getloadavg()),
                       "cpus": os.cpu_count(), "rows": rows, "ratios": ratios}, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
