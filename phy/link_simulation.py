"""Monte-Carlo link-level comparison of the aggregation schemes (model §5, §6, §9).

Each round t draws K random unit-power client vectors x_k ~ N(0, I_d) from the keyed stream
``(seed, "link-client-vectors", t)``; every scheme sees the same vectors and, through the keyed
fading draw, the same channel. Per round and scheme it calls the aggregator's
``aggregate_traced`` and hands the result to the scheme's link record (its
:class:`phy.schemes.SchemeSpec` names it): FLORAS keeps V and the inactive-sequence noise
(:mod:`phy.floras_record`), channel inversion and the private baselines the admitted count and
their diagnostics (:mod:`phy.link_records`), sqSGD its bias (:mod:`phy.digital.sqsgd_link`); for
every scheme the channel uses per round (model §5), and the error against the clipped sum
(``clipped_nmse``, the aggregators' diagnostic, model §6.4) beside the raw-sum ``nmse``, both also in dB
(``nmse_db``, ``clipped_nmse_db``: 10·log10 of the mean and of the median).
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from .config import SNR_DEFINITION, PhyConfig
from .floras_record import POOLED_ENTRIES_PER_ROUND
from .link_records import decibels, nmse_summary
from .randomness import stream
from .schemes import make_aggregator, scheme_spec

__all__ = ["simulate_link", "SNR_DEFINITION", "resource_statement", "POOLED_ENTRIES_PER_ROUND"]


def resource_statement(resource: str, L: int) -> str:
    """One line stating the resource convention of model §5."""
    if resource == "equal":
        return (f"equal resource: every scheme spends L = {L} chips per aggregated symbol "
                f"(channel inversion repeats its symbol; matched-filter noise variance sigma^2/L)")
    return "source-literal: channel inversion uses one channel use per symbol (noise variance sigma^2)"


def simulate_link(base: PhyConfig, *, schemes: list[str], K: int, d: int, rounds: int, seed: int,
                  key: bytes, progress=None, relation: str = "replace") -> dict:
    """Run ``rounds`` rounds of every scheme in ``schemes`` and summarise them.

    Parameters
    ----------
    base : PhyConfig whose ``scheme`` is replaced by each entry of ``schemes``.
    K, d, rounds : clients, model dimension, Monte-Carlo rounds (all ≥ 1).
    seed : master seed; key : clients' permutation key (schemes that need one).
    progress : optional callable(done_rounds, rounds).
    relation : "replace" or "add-remove", the sensitivity a noise multiplier scales.

    Returns
    -------
    dict: ``schemes`` → per-scheme summary (see docs/physics.md for the fields).
    """
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds must be an integer ≥ 1 (got {rounds!r})")
    if not schemes:
        raise ValueError("scheme must name at least one registered scheme (e.g. floras, channel-inversion, ideal)")
    aggs, records = {}, {}
    for name in dict.fromkeys(schemes):
        spec = scheme_spec(name)
        cfg = replace(base, scheme=name)
        cfg.validate(K=K, d=d)
        aggs[name] = make_aggregator(cfg, K=K, d=d, seed=seed, key=key if spec.needs_key else None, relation=relation)
        records[name] = spec.link_record(aggs[name], d)
    seconds = dict.fromkeys(aggs, 0.0)
    uses = {name: [] for name in aggs}
    clipped = {name: [] for name in aggs}  # rounds with contributors (K' = 0 rounds excluded, as from the NMSE)
    for t in range(rounds):
        x = stream(seed, "link-client-vectors", t).standard_normal((K, d))
        for name, agg in aggs.items():
            t0 = time.perf_counter()
            res, trace = agg.aggregate_traced(x, round_index=t)
            seconds[name] += time.perf_counter() - t0
            uses[name].append(res.diagnostics["channel_uses"])
            if res.contributors > 0 and "clipped_nmse" in res.diagnostics:
                clipped[name].append(res.diagnostics["clipped_nmse"])
            records[name].record(res, trace, x)
        if progress is not None:
            progress(t + 1, rounds)

    out = {}
    for name, rec in records.items():
        u = np.asarray(uses[name], dtype=np.float64)
        summary = {"nmse": rec.nmse(), "seconds_per_round": seconds[name] / rounds,
                   "channel_uses": {"mean": float(u.mean()), "min": float(u.min()), "max": float(u.max())}}
        summary["nmse_db"] = decibels(summary["nmse"])
        summary["clipped_nmse"] = nmse_summary(clipped[name])
        summary["clipped_nmse_db"] = decibels(summary["clipped_nmse"])
        summary.update(rec.summary())
        out[name] = summary
    return out
