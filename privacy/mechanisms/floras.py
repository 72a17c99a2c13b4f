"""FLORAS's Cauchy rounds (model §7): accounted by :class:`privacy.run.FlorasRunAccountant`, whose sampling
chain includes item-level record sampling (model §7.3)."""

from __future__ import annotations

from privacy.mechanisms import Mechanism, register_mechanism
from privacy.report import THREAT_MODEL_T1

__all__ = ["FLORAS"]


def _accountant(**kwargs):
    from privacy.run import FlorasRunAccountant

    return FlorasRunAccountant(**kwargs)


# trade_off None: the Cauchy release has no closed-form trade-off function, the fdp accountant refuses it
FLORAS = register_mechanism(Mechanism(name="floras", threat_model=THREAT_MODEL_T1, run_accountant=_accountant,
                                      trade_off=None))
