"""Benchmark: ε after T = 10⁴ rounds over the default Rényi orders, FLORAS accountant vs dp_accounting.

Both accountants use the same orders (``privacy.DEFAULT_ORDERS``) and the same sampling:
K = 20 of M = 100 clients per round. Ours accounts the FLORAS Cauchy release (γ = N − K, S); the
reference is Google's dp_accounting RdpAccountant on the Gaussian equivalent (noise multiplier
σ = γ/S, the Gaussian the Cauchy bound approaches as α → 1), sampled the same way.

Two jobs, each timed by wall clock (best of ``--repeat``):

* ``once``: build the accountant, compose T rounds in one call (count = T), ask ε at δ.
* ``per-round``: ε after every round t = 1..T (what an FL run records), i.e. T compositions
  and T conversions. dp_accounting re-evaluates the sampled event at every ``compose`` call
  (about 0.35 s per round without replacement on the 100 orders of the earlier grid), so it is timed on the first
  ``--reference-per-round-rounds`` rounds only and its total for T rounds is that time scaled by
  T/n (labelled "extrapolated"); ours is timed on all T rounds.

Usage: ``python benchmarks/privacy_accountant.py [--rounds 10000] [--repeat 3] [--reference-per-round-rounds 20]``
Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import time

import dp_accounting as dpa

from privacy import DEFAULT_ORDERS, FlorasRunAccountant
from privacy.accountant import clear_cache


def _best(fn, repeat: int) -> tuple[float, float]:
    best, value = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - t0)
    return best, value


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=10_000)
    ap.add_argument("--reference-per-round-rounds", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--gamma", type=int, default=40)
    ap.add_argument("--sensitivity", type=float, default=1.0)
    args = ap.parse_args(argv)
    K, M, delta, T = 20, 100, 1e-5, args.rounds
    orders = list(DEFAULT_ORDERS)
    sigma = args.gamma / args.sensitivity
    rows = []

    for sampling in ("without-replacement", "poisson"):
        relation = "replace" if sampling == "without-replacement" else "add-remove"
        S = args.sensitivity * (1.0 if relation == "replace" else 1.0)

        def ours_once():
            clear_cache()  # time the evaluation of the event, not a cache hit
            acc = FlorasRunAccountant(K=K, N=K + args.gamma, M=M, d=1, sensitivity=S, sampling=sampling,
                                      relation=relation, delta=delta, orders=orders)
            return acc.report(rounds=T).epsilon

        if sampling == "without-replacement":
            rel = dpa.NeighboringRelation.REPLACE_ONE
            ev = dpa.SampledWithoutReplacementDpEvent(M, K, dpa.GaussianDpEvent(sigma))
        else:
            rel = dpa.NeighboringRelation.ADD_OR_REMOVE_ONE
            ev = dpa.PoissonSampledDpEvent(K / M, dpa.GaussianDpEvent(sigma))

        def theirs_once():
            acc = dpa.rdp.RdpAccountant(orders, rel)
            acc.compose(ev, T)
            return acc.get_epsilon(delta)

        t_ours, e_ours = _best(ours_once, args.repeat)
        t_theirs, e_theirs = _best(theirs_once, args.repeat)
        rows.append((sampling, f"once (count = {T})", t_ours, e_ours, t_theirs, e_theirs, ""))

        Tp = args.reference_per_round_rounds

        def ours_per_round():
            clear_cache()
            acc = FlorasRunAccountant(K=K, N=K + args.gamma, M=M, d=1, sensitivity=S, sampling=sampling,
                                      relation=relation, delta=delta, orders=orders)
            e = None
            for t in range(1, T + 1):
                e = acc.report(rounds=t).epsilon
            return e

        def theirs_per_round():
            acc = dpa.rdp.RdpAccountant(orders, rel)
            e = None
            for _ in range(Tp):
                acc.compose(ev)
                e = acc.get_epsilon(delta)
            return e

        t_ours, e_ours = _best(ours_per_round, 1)
        t_theirs, e_theirs = _best(theirs_per_round, 1)
        rows.append((sampling, f"per round (t = 1..{T})", t_ours, e_ours, t_theirs * T / Tp, e_theirs,
                     f"dp_accounting extrapolated from {Tp} rounds ({t_theirs:.3f} s), its ε is after {Tp} rounds"))

    print(f"ε at δ = {delta:g}, K = {K} of M = {M}, γ = {args.gamma}, S = {args.sensitivity:g} "
          f"(Gaussian σ = γ/S = {sigma:g}), {len(orders)} orders in [{min(orders):.4g}, {max(orders):g}]")
    print()
    print("| sampling | job | ours [s] | ε ours (Cauchy) | dp_accounting [s] | ε dp_accounting (Gaussian) | speed-up | note |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for sampling, job, to, eo, tt, et, note in rows:
        print(f"| {sampling} | {job} | {to:.4f} | {eo:.4g} | {tt:.4f} | {et:.4g} | {tt / to:.1f}× | {note} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
