"""Per-round wall times that the matched sweeps' time prediction uses (measured, see below).

* Fashion-MNIST, the matched setting (K = 20 of M = 100, MLP 784-200-10, batch 50, one local epoch,
  L = 32, test accuracy every 10 rounds and at the last): the median over the finished runs of the
  full matched sweeps and their tuning runs (matched, matched_budget, matched_snr; 3 seeds, 200
  rounds) of the last round's ``wall_time_s`` / rounds, from
  ``python benchmarks/matched_timing.py --from-results results``; 2 local workers with one
  thread each on 2 cores, load average 2.5–3 (and 12 % of the CPU stolen by the hypervisor at
  times). Runs that evaluate every round cost ~30 % more per round (measured: 0.116 against
  0.079 s/round at 2 threads, central Gaussian, 30 rounds).
* digits (MLP 64-64-10, batch 10) and the cross-device setting, K = 100 of M = 1 000 on
  Fashion-MNIST (batch 20, L = N = 128), with ``python benchmarks/matched_timing.py --rounds 6``
  (``--rounds 4 --set partition.clients=1000 training.clients_per_round=100
  training.batch_size=20 phy.L=128 phy.floras.N=128`` for the latter): median per-round wall time after
  the first round, one thread per run, 2 cores shared with other jobs, load average 5.9–7.4.

Round time is not linear in K: training a round costs about the same in both settings (5 400
examples in 300 local steps against 10 800 examples in 220 steps; ideal 0.40 against 0.23–0.32
s), FLORAS and the Gaussian schemes' channel costs do not grow measurably with K or L
(FLORAS at K = 100, L = 128: 0.29 s; at K = 20, L = 128: 0.21 s), and only the per-client
encoders of the digital schemes grow with K (DDGauss 0.92 → 6.42 s). Each setting therefore
has its own measured table; a setting without one falls back to the matched table scaled
linearly with K (an overestimate, used only for the digits variants, which take seconds).

Per-run overhead (setup, data loading, the first round's tracing), measured over 3-round runs in
one process: digits 0.1–0.5 s, Fashion-MNIST 3.1–4.1 s; a fresh worker process adds about 12 s
once (importing TensorFlow).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

__all__ = ["MEASURED_LOAD", "SECONDS_PER_ROUND", "SECONDS_PER_ROUND_BY_SETTING", "RUN_OVERHEAD_S",
           "WORKER_START_S", "REFERENCE_K", "run_seconds", "Prediction", "predict"]

REFERENCE_K = 20
MEASURED_LOAD = "2.5–3 (Fashion-MNIST, K = 20) and 5.9–7.4 (digits, K = 100) on 2 cores"
#: dataset → scheme → seconds per round at K = 20 of M = 100 (one thread per run)
SECONDS_PER_ROUND = {
    "digits": {
        "floras": 0.0053, "channel-inversion": 0.0060, "ideal": 0.0043, "central-gaussian": 0.0042,
        "analog-gaussian": 0.0087, "ddgauss": 0.0305, "sqsgd": 0.0263,
    },
    "fashion-mnist": {  # measured from the full sweeps' runs (see above)
        "floras": 0.1683, "channel-inversion": 0.2519, "ideal": 0.1663, "central-gaussian": 0.1877,
        "analog-gaussian": 0.2207, "ddgauss": 1.6852, "sqsgd": 0.2896,
    },
}
SECONDS_PER_ROUND["mnist"] = SECONDS_PER_ROUND["fashion-mnist"]  # same sizes (28×28, 60 000 examples)
#: (dataset, K, M, batch size) → scheme → seconds per round, for the settings measured on their own
SECONDS_PER_ROUND_BY_SETTING = {
    ("fashion-mnist", 100, 1000, 20): {
        "floras": 0.2912, "channel-inversion": 0.4300, "ideal": 0.3980, "central-gaussian": 0.3220,
        "analog-gaussian": 0.4738, "ddgauss": 6.4243, "sqsgd": 0.6823,
    },
}
RUN_OVERHEAD_S = {"digits": 0.5, "fashion-mnist": 4.1, "mnist": 4.1}
WORKER_START_S = 12.0


def run_seconds(*, dataset: str, scheme: str, rounds: int, K: int, M: int = 0, batch_size: int = 0) -> float:
    """Predicted wall time [s] of one run (one thread): overhead + rounds × seconds per round.

    The setting's own table if (dataset, K, M, batch size) was measured, else the K = 20 table
    scaled by K / 20.
    """
    own = SECONDS_PER_ROUND_BY_SETTING.get((dataset, K, M, batch_size))
    if own is not None:
        per_round = own.get(scheme, max(own.values()))
    else:
        table = SECONDS_PER_ROUND.get(dataset, SECONDS_PER_ROUND["fashion-mnist"])
        per_round = table.get(scheme, max(table.values())) * max(K, 1) / REFERENCE_K
    return RUN_OVERHEAD_S.get(dataset, 4.1) + rounds * per_round


@dataclass(frozen=True)
class Prediction:
    runs: int
    infeasible_points: int
    run_seconds: float  # Σ over runs, one worker
    workers: int
    reused_points: int = 0
    copied: int = 0  # runs identical to a run planned before them: copied, not run (in ``runs``, not in the time)
    finished: int = 0  # runs already finished in the output folder: skipped (in ``runs``, not in the time)

    def without_copies(self, copies: int, seconds: float) -> "Prediction":
        return dataclasses.replace(self, copied=copies, run_seconds=self.run_seconds - seconds)

    def without_finished(self, finished: int, seconds: float) -> "Prediction":
        return dataclasses.replace(self, finished=finished, run_seconds=self.run_seconds - seconds)

    @property
    def wall_seconds(self) -> float:
        """Runs spread evenly over the workers, plus one TensorFlow start per worker."""
        to_run = self.runs - self.copied - self.finished
        return self.run_seconds / max(1, self.workers) + (WORKER_START_S if to_run > 0 else 0.0)

    def line(self, name: str) -> str:
        reused = f", {self.reused_points} reused from another SNR" if self.reused_points else ""
        reused += f", {self.copied} copied from identical runs" if self.copied else ""
        reused += f", {self.finished} already finished in the output folder" if self.finished else ""
        return (f"{name}: {self.runs} run(s) ({self.infeasible_points} grid point(s) infeasible, not run{reused}); predicted "
                f"{_hms(self.run_seconds)} of run time, {_hms(self.wall_seconds)} wall on {self.workers} worker(s) "
                f"(at the timing table's load average {MEASURED_LOAD}; now {_load()})")


def _load() -> str:
    try:
        import os

        return f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    except OSError:
        return "unknown"


def _hms(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def predict(planned: list, *, seeds: int, workers: int) -> Prediction:
    """Run count and predicted time (per-round table of :mod:`scenarios.experiments.matched_timing`)."""
    runs = 0
    total = 0.0
    for p in planned:
        if p.status != "feasible":
            continue
        runs += seeds
        total += seeds * run_seconds(dataset=p.dataset, scheme=p.scheme, rounds=p.rounds, K=p.K, M=p.M,
                                     batch_size=p.batch_size)
    return Prediction(runs=runs, infeasible_points=sum(p.status == "infeasible" for p in planned),
                      run_seconds=total, workers=max(1, workers), reused_points=sum(p.status == "reused" for p in planned))
