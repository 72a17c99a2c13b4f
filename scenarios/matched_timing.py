"""Per-round wall times that the matched sweeps' time prediction uses (measured, see below).

Measured with ``python benchmarks/matched_timing.py --rounds 6`` (median per-round wall time
after the first round; K = 20 of M = 100, MLP 64-10 on digits with batch 10 / 784-200-10 on
Fashion-MNIST with batch 50, one local epoch, one thread per run) on the development machine:
2 cores shared with other jobs, load average 2.7–5.9 during the measurement. Per-run overhead
(setup, data loading, the first round's tracing) measured with the same settings over 3-round
runs in one process: digits 0.1–0.5 s, Fashion-MNIST 3.1–4.1 s; a fresh worker process adds
about 12 s once (importing TensorFlow).

Scaling (a choice, documented in ``docs/comparison.md``): the time of a round is taken as
proportional to K (both the K local trainings, at fixed examples per client, and the
aggregation of K updates grow with K), which overestimates populations with fewer examples
per client.
"""

from __future__ import annotations

__all__ = ["MEASURED_LOAD", "SECONDS_PER_ROUND", "RUN_OVERHEAD_S", "WORKER_START_S", "REFERENCE_K", "run_seconds"]

REFERENCE_K = 20
MEASURED_LOAD = "2.7–5.9 on 2 cores"
#: dataset → scheme → seconds per round at K = 20 of M = 100 (one thread, loaded machine)
SECONDS_PER_ROUND = {
    "digits": {
        "floras": 0.0251, "channel-inversion": 0.0120, "ideal": 0.0108, "central-gaussian": 0.0081,
        "analog-gaussian": 0.0094, "ddgauss": 0.0368, "sqsgd": 0.0320,
    },
    "fashion-mnist": {
        "floras": 0.7337, "channel-inversion": 0.4364, "ideal": 0.8013, "central-gaussian": 0.6336,
        "analog-gaussian": 0.4601, "ddgauss": 2.4202, "sqsgd": 0.8291,
    },
}
SECONDS_PER_ROUND["mnist"] = SECONDS_PER_ROUND["fashion-mnist"]  # same sizes (28×28, 60 000 examples)
RUN_OVERHEAD_S = {"digits": 0.5, "fashion-mnist": 4.1, "mnist": 4.1}
WORKER_START_S = 12.0


def run_seconds(*, dataset: str, scheme: str, rounds: int, K: int) -> float:
    """Predicted wall time [s] of one run (one thread)."""
    table = SECONDS_PER_ROUND.get(dataset, SECONDS_PER_ROUND["fashion-mnist"])
    per_round = table.get(scheme, max(table.values()))
    return RUN_OVERHEAD_S.get(dataset, 4.1) + rounds * per_round * max(K, 1) / REFERENCE_K
