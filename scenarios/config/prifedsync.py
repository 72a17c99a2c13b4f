"""``training.mode`` and ``[training.prifedsync]``: building the sub-table and every check of the mode.

``training.mode = "fedavg"`` (default) is the FedAvg loop of :mod:`fl.federated`; ``"prifedsync"`` is
PriFedSync (:mod:`fl.prifedsync`, model §9.4): personalised models and clients running noisy Adam with
per-example clipping, with the record-level ε of :mod:`privacy.prifedsync`. What the mode needs of the
other tables is checked here, before any data are loaded, each error naming the key and the fix.
"""

from __future__ import annotations

from scenarios.config.tables import TRAINING_MODES, PriFedSyncConfig, build_subtable, check_choice, check_int, check_num, fail

__all__ = ["build_prifedsync", "validate_training_mode", "prifedsync_accountant"]


def build_prifedsync(table) -> PriFedSyncConfig:
    """The sub-table as a :class:`PriFedSyncConfig` (unknown keys named, with the allowed ones)."""
    return build_subtable(PriFedSyncConfig, table, "training.prifedsync")


def validate_training_mode(config) -> None:
    """Check ``training.mode``, ``[training.prifedsync]`` and, for PriFedSync, the keys it constrains."""
    t = config.training
    check_choice("training.mode", t.mode, TRAINING_MODES)
    f = t.prifedsync
    if not isinstance(f, PriFedSyncConfig):
        fail("training.prifedsync", "a table of keys", f)
    check_num("training.prifedsync.clip_norm", f.clip_norm, low=0.0)
    check_num("training.prifedsync.noise_multiplier", f.noise_multiplier, low=0.0)
    check_num("training.prifedsync.beta1", f.beta1, low=0.0, high=1.0, low_open=False)
    check_num("training.prifedsync.beta2", f.beta2, low=0.0, high=1.0, low_open=False)
    check_num("training.prifedsync.adam_eps", f.adam_eps, low=0.0)
    check_num("training.prifedsync.weight_decay", f.weight_decay, low=0.0, low_open=False)
    check_num("training.prifedsync.mix", f.mix, low=0.0, high=1.0, low_open=False, high_open=False)
    check_int("training.prifedsync.client_test", f.client_test, 1)
    if t.mode != "prifedsync":
        return
    why = "training.mode = 'prifedsync'"
    if config.model.name != "mlp":
        raise ValueError(f"model.name = {config.model.name!r} is not supported with {why}: its per-example gradients "
                         "are built for the MLP only (set model.name = 'mlp')")
    if config.data.name == "fedprox":
        raise ValueError(f"data.name = 'fedprox' is not supported with {why}: clients of unequal sizes have no common "
                         "batch rate B/D for the accountant (use digits, mnist, fashion-mnist or synthetic)")
    if config.phy.scheme != "ideal":
        raise ValueError(f"phy.scheme = {config.phy.scheme!r} is not supported with {why}: the privacy is the clients' "
                         "own noisy Adam, a private uplink on top is not accounted (set phy.scheme = 'ideal')")
    pr = config.privacy
    if pr.level != "item":
        raise ValueError(f"privacy.level = {pr.level!r} does not apply with {why}: its guarantee is record-level "
                         "(set privacy.level = 'item')")
    if pr.relation != "replace":
        raise ValueError(f"privacy.relation = {pr.relation!r} is not supported with {why}: its batches have a fixed "
                         "size B, accounted for replace-one neighbours (set privacy.relation = 'replace')")
    if pr.accountant not in ("rdp", "fdp"):
        raise ValueError(f"privacy.accountant = {pr.accountant!r} is not supported with {why} (allowed: rdp, fdp)")
    if pr.target_epsilon is not None:
        raise ValueError(f"privacy.target_epsilon is not supported with {why}: set "
                         "training.prifedsync.noise_multiplier directly")


def prifedsync_accountant(config, *, D: int):
    """The run's record-level accountant (:class:`privacy.prifedsync.PriFedSyncAccountant`)."""
    from fl.training import local_schedule
    from privacy.prifedsync import PriFedSyncAccountant

    t = config.training
    steps, _ = local_schedule(D=D, batch_size=t.batch_size, local_epochs=t.local_epochs, local_steps=t.local_steps)
    return PriFedSyncAccountant(noise_multiplier=float(t.prifedsync.noise_multiplier), batch_size=t.batch_size,
                                examples=int(D), steps=steps, delta=config.privacy.delta,
                                accountant=config.privacy.accountant)
