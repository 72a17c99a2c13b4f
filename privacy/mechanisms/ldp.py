"""Pure ε₀-LDP rounds (model §9.3): sqSGD's PrivQuant messages, accounted as binary randomized response."""

from __future__ import annotations

from privacy.checks import finite_number
from privacy.events import Composed, RandomizedResponseRound
from privacy.mechanisms import Mechanism, MechanismRound, register_mechanism

__all__ = ["LDP", "THREAT_MODEL"]

#: the one text of the run's accountant and of ``floras privacy --mechanism ldp``
THREAT_MODEL = (
    "any observer (T1 and T2): each client's message of a round is epsilon0-LDP on its own (model §9.3); the "
    "composed epsilon uses client-sampling amplification, which assumes the observer does not learn which clients "
    "were sampled (true for T1); an observer that sees who transmits (T2) gets the unamplified composition, "
    "the same accountant with K = M over the rounds a client takes part in (a run reports it for its most-sampled "
    "client, privacy_report.without_amplification, model §7.3); the guarantee covers the centred, clipped update s_k, not its mean mu_k, "
    "which the clip normalization sends unprotected on the control channel (model §2)"
)


def round_event(p: dict, *, K: int, relation: str) -> MechanismRound:
    e0 = finite_number("epsilon0", p["epsilon0"], positive=False)
    ev = RandomizedResponseRound(epsilon0=e0)
    lines = [f"each round is pure ε₀-LDP with ε₀ = {e0:.6g}, accounted as binary randomized response (model §9.3)"]
    if p.get("epsilon_s") is not None:
        es = finite_number("epsilon_s", p["epsilon_s"], positive=False)
        ev = Composed((ev, RandomizedResponseRound(epsilon0=es)))
        lines.append(f"adaptive norm bound: a further pure ε_s = {es:.6g} per round, composed")
    return MechanismRound(ev, None, tuple(lines))


LDP = register_mechanism(Mechanism(
    name="ldp", threat_model=THREAT_MODEL, round_event=round_event, required=("epsilon0",), optional=("epsilon_s",),
    trade_off="f_{ε₀,0}, the exact trade-off function of binary randomized response, which every ε₀-DP round "
              "dominates (DRS Prop. 2.5); with ε_s: f_{ε₀,0} ⊗ f_{ε_s,0}",
))
