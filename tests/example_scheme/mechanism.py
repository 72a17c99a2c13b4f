"""The worked example of docs/extending.md, privacy: the "local-gaussian" mechanism.

One round releases Σ_k (s_k + n_k) with n_k ~ N(0, σ_l²·I): a Gaussian release of noise std
σ = √K·σ_l, whose RDP is α·S²/(2σ²) = α·S²/(2K·σ_l²) (Mironov 2017, Prop. 7), S the ℓ2
sensitivity of the released sum (2·clip_norm replace-one, clip_norm add/remove).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from privacy.events import PrivacyEvent
from privacy.mechanisms import Mechanism, MechanismRound, register_mechanism


@dataclass(frozen=True)
class LocalGaussianRound(PrivacyEvent):
    clients: int
    local_std: float
    sensitivity: float

    def rdp(self, orders):
        a = np.asarray(orders, dtype=np.float64)
        if self.sensitivity == 0:
            return np.zeros_like(a)
        var = self.clients * self.local_std**2
        return np.full_like(a, math.inf) if var == 0 else a * self.sensitivity**2 / (2.0 * var)

    def eps_inf(self):
        return 0.0 if self.sensitivity == 0 else math.inf


def round_event(p, *, K, relation):
    S = (2.0 if relation == "replace" else 1.0) * float(p["clip_norm"])
    sd = float(p["local_std"])
    return MechanismRound(LocalGaussianRound(clients=K, local_std=sd, sensitivity=S), S, (
        f"sensitivity S = {S:.6g} (clip norm, {relation})",
        f"noise: each of the K = {K} clients adds N(0, σ_l²), σ_l = {sd:.6g}: the sum carries std √K·σ_l",
    ))


MECHANISM = register_mechanism(Mechanism(
    name="local-gaussian", threat_model="T1 (output observer of the sum); each message alone carries σ_l",
    round_event=round_event, required=("clip_norm", "local_std"),
), replace=True)
