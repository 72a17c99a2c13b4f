"""Record-level (item-level) privacy of PriFedSync's clients: noisy Adam steps with per-example clipping
(model §9.4; Zheng et al. 2021 §4, its Algorithm 2 and the remark that Adam on the noisy gradients is post-processing).

One local step of client j on its D examples: a batch of B examples drawn uniformly without
replacement, each example's gradient clipped to ℓ2 norm ≤ C, and

    g̃ = (Σ_{i ∈ batch} clip_C(∇ℓ_i) + N(0, σ²C² I)) / B.

Neighbouring datasets replace one record of client j (replace-one): the clipped sum moves by at most
2C, so one step on a fixed batch is G_μ-DP with μ = 2C/(σC) = 2/σ (DRS Thm 2.7), and on the sampled
batch C_{B/D}(G_{2/σ}) (DRS Thm 4.2); the S steps of a round compose to C_{B/D}(G_{2/σ})^{⊗S}.
Adam's moments and the update are deterministic functions of g̃ (post-processing).

Rounds: **worst case, no client-sampling amplification** — client j is taken to take part in every one
of the t rounds so far (its dispatched models are seen by the server and by any coalition of clients,
the strong one-vs-all notion and more), so after t rounds the guarantee is C_{B/D}(G_{2/σ})^{⊗S·t}.
The text's weak (one-vs-one) guarantee with client sampling, C_q(f_round)^{⊗R} for the rate q that
both clients are sampled (:func:`privacy.fdp.federated.weak_federated`), is not in the ε column: its
numerical composition of the already composed round function takes minutes per value.

Accountants: ``rdp`` — the sampled Gaussian without replacement through :mod:`privacy.accountant`
(WBK 2019 and the Gaussian-specific bound), composed S·t times; ``fdp`` — the trade-off function
C_{B/D}(G_{2/σ})^{⊗S·t} composed numerically (:mod:`privacy.fdp`, ε within S·t·h of the exact value,
h = 10⁻⁴ nats). No TensorFlow and nothing of phy/ here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from privacy.events import GaussianRound, SampledWithoutReplacement, SelfComposed

__all__ = ["ACCOUNTANTS", "step_event", "round_event", "PriFedSyncAccountant", "PriFedSyncReport"]

ACCOUNTANTS = ("rdp", "fdp")


def step_event(*, noise_multiplier: float, batch_size: int, examples: int) -> SampledWithoutReplacement:
    """One noisy step in units of C: the Gaussian of std σ on a sum of replace-one sensitivity 2, on B of D."""
    if isinstance(noise_multiplier, bool) or not isinstance(noise_multiplier, (int, float)) or not noise_multiplier > 0:
        raise ValueError(f"noise_multiplier must be a number > 0 (got {noise_multiplier!r})")
    return SampledWithoutReplacement(GaussianRound(noise_std=float(noise_multiplier), sensitivity=2.0),
                                     int(batch_size), int(examples))


def round_event(*, noise_multiplier: float, batch_size: int, examples: int, steps: int) -> SelfComposed:
    """The S steps of one round of local training."""
    return SelfComposed(step_event(noise_multiplier=noise_multiplier, batch_size=batch_size, examples=examples), int(steps))


@dataclass(frozen=True)
class PriFedSyncReport:
    """ε after ``rounds`` rounds (worst case: every round) and what it assumes."""

    epsilon: float
    delta: float
    rounds: int
    accountant: str
    assumptions: list

    def to_dict(self) -> dict:
        return {"epsilon": "inf" if self.epsilon == math.inf else float(self.epsilon), "delta": float(self.delta),
                "rounds": int(self.rounds), "accountant": self.accountant, "assumptions": list(self.assumptions),
                "level": "item", "relation": "replace",
                "threat_model": "record level: any observer of the dispatched models (server or other clients)"}


class PriFedSyncAccountant:
    """ε(t) of one client's records after t rounds (see the module docstring); results cached per t.

    Parameters: σ (``noise_multiplier``), B (``batch_size``), D (``examples`` per client), S (``steps``
    per round), δ, ``accountant`` (rdp or fdp).
    """

    def __init__(self, *, noise_multiplier: float, batch_size: int, examples: int, steps: int, delta: float,
                 accountant: str = "rdp"):
        if accountant not in ACCOUNTANTS:
            raise ValueError(f"accountant must be one of {{{', '.join(ACCOUNTANTS)}}} for training.mode = 'prifedsync' "
                             f"(got {accountant!r})")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or not 1 <= batch_size <= examples:
            raise ValueError(f"batch_size must be an integer in [1, D = {examples}] (got {batch_size!r})")
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
            raise ValueError(f"steps must be an integer ≥ 1 (got {steps!r})")
        if not 0.0 < delta < 1.0:
            raise ValueError(f"delta must be in (0, 1) (got {delta!r})")
        self.noise_multiplier, self.batch_size, self.examples = float(noise_multiplier), batch_size, int(examples)
        self.steps, self.delta, self.accountant = steps, float(delta), accountant
        self.event = round_event(noise_multiplier=noise_multiplier, batch_size=batch_size, examples=examples, steps=steps)
        self._cache: dict[int, float] = {}
        self._local = None

    def _local_tradeoff(self):
        from privacy.fdp.tradeoff import Gaussian, subsample

        if self._local is None:  # B = D: every step sees the whole data set, G_{2/σ} itself (composed in closed form)
            mu = 2.0 / self.noise_multiplier
            rate = self.batch_size / self.examples
            self._local = Gaussian(mu) if rate == 1.0 else subsample(Gaussian(mu), rate)
        return self._local

    def epsilon(self, *, rounds: int) -> float:
        """ε at δ after ``rounds`` rounds, the client taking part in every one (S·t noisy steps)."""
        t = int(rounds)
        if t not in self._cache:
            if t == 0:
                self._cache[t] = 0.0
            elif self.accountant == "rdp":
                from privacy.accountant import RdpAccountant

                self._cache[t] = float(RdpAccountant().compose(self.event, t).get_epsilon(self.delta))
            else:
                from privacy.fdp.compose import tensor_power

                self._cache[t] = float(tensor_power(self._local_tradeoff(), self.steps * t).epsilon(self.delta))
        return self._cache[t]

    def assumptions(self, rounds: int) -> list:
        s, B, D, S = self.noise_multiplier, self.batch_size, self.examples, self.steps
        return [
            "item level: neighbouring data sets replace one record of one client (replace-one)",
            f"each local step clips every example's gradient to norm C and adds N(0, (σC)² I) to the sum, σ = {s:g}; "
            f"replace-one sensitivity 2C, so one step on a fixed batch is G_(2/σ) = G_{2 / s:.6g}",
            f"batches of B = {B} drawn uniformly without replacement from D = {D} examples: rate B/D = {B / D:.6g}",
            f"S = {S} steps per round; worst case: the client takes part in every round "
            f"(no client-sampling amplification), {S * rounds} steps after {rounds} rounds",
            "Adam's moments and update are post-processing of the noisy gradients",
            ("accountant rdp: sampled Gaussian without replacement (privacy.accountant), tight conversion"
             if self.accountant == "rdp" else
             "accountant fdp: C_{B/D}(G_{2/σ}) composed numerically (privacy.fdp), ε within S·t·1e-4 of the exact"),
            f"delta = {self.delta:g}",
        ]

    def report(self, *, rounds: int) -> PriFedSyncReport:
        return PriFedSyncReport(self.epsilon(rounds=rounds), self.delta, int(rounds), self.accountant,
                                self.assumptions(int(rounds)))
