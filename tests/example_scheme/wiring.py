"""The worked example of docs/extending.md, scenarios: the wiring row of "local-gaussian"."""

from __future__ import annotations

from privacy import RunAccountant
from scenarios.config.schemes import Calibrated, SchemeWiring, register_wiring


def accountant(config, *, d, D):
    t, pr, phy = config.training, config.privacy, config.phy
    return RunAccountant("local-gaussian", K=t.clients_per_round, M=config.partition.clients, level=pr.level,
                         relation=pr.relation, sampling="without-replacement", delta=float(pr.delta),
                         accountant=pr.accountant, threat_model=ROW.threat_model,
                         # σ_l is in units of s_k (‖s_k‖ ≤ C); the released sum in model units has std σ_l·R/C
                         clip_norm=float(phy.clip_norm),
                         local_std=float(phy.of("local-gaussian").local_std) * float(phy.clip_norm) / phy.norm_bound(d))


ROW = register_wiring(SchemeWiring(
    scheme="local-gaussian", label="local Gaussian", mechanism="local-gaussian", accountant=accountant,
    threat_model="T1 (output observer of the sum)",
    calibrated={"local_std": Calibrated("local-gaussian.local_std", increasing=False, bracket=(1e-6, 1e6),
                                        noiseless=("local-gaussian.local_std", 0.0))},
    snr_independent=True, style={"color": "tab:brown"},
), replace=True)
