"""``[data.fedprox]``: the parameters of the FedProx Synthetic(α, β) population and their checks.

The population itself is :class:`fl.fedprox_synthetic.FedProxSynthetic` (model §8; reference and
equations there). ``data.name = "fedprox"`` makes each of the ``partition.clients`` = M clients a
member of the population with its own data; the run then needs ``training.local_steps`` (client
sizes differ) and a ``training.batch_size`` ≤ ``data.fedprox.min_size`` (the smallest client).
Errors name the dotted key, its range and the fix, before any data are generated.
"""

from __future__ import annotations

from scenarios.config.tables import FedProxDataConfig, build_subtable, check_int, check_num, fail

__all__ = ["FedProxDataConfig", "build_fedprox", "validate_population"]


def build_fedprox(table) -> FedProxDataConfig:
    """The sub-table as a :class:`FedProxDataConfig` (unknown keys named, with the allowed ones)."""
    return build_subtable(FedProxDataConfig, table, "data.fedprox")


def validate_population(config) -> None:
    """Check ``[data.fedprox]`` (always) and, for ``data.name = "fedprox"``, the keys it constrains."""
    f = config.data.fedprox
    if not isinstance(f, FedProxDataConfig):
        fail("data.fedprox", "a table of keys", f)
    check_num("data.fedprox.alpha", f.alpha, low=0.0, low_open=False)
    check_num("data.fedprox.beta", f.beta, low=0.0, low_open=False)
    check_int("data.fedprox.features", f.features, 1)
    check_int("data.fedprox.classes", f.classes, 2)
    check_num("data.fedprox.size_mu", f.size_mu)
    check_num("data.fedprox.size_sigma", f.size_sigma, low=0.0, low_open=False)
    check_int("data.fedprox.min_size", f.min_size, 1)
    if isinstance(f.min_size, int):
        check_int("data.fedprox.max_size", f.max_size, f.min_size)
    check_int("data.fedprox.test_clients", f.test_clients, 1)
    check_int("data.fedprox.test_per_client", f.test_per_client, 1)
    if not isinstance(f.shared_model, bool):
        fail("data.fedprox.shared_model", "true or false", f.shared_model)
    if config.data.name != "fedprox":
        return
    t, p = config.training, config.partition
    if p.kind != "iid":
        raise ValueError(f"partition.kind = {p.kind!r} does not apply to data.name = 'fedprox': its clients come with "
                         "their own (non-IID) data; remove partition.kind (partition.clients is the population M)")
    if t.local_steps is None:
        raise ValueError("training.local_steps must be set for data.name = 'fedprox' (and training.local_epochs "
                         "not): client sizes differ, so every client takes the same number of local steps")
    if isinstance(t.batch_size, int) and t.batch_size > f.min_size:
        raise ValueError(f"training.batch_size must be ≤ data.fedprox.min_size = {f.min_size} (the smallest client) "
                         f"for data.name = 'fedprox' (got {t.batch_size}); lower the batch size or raise min_size")
    v = config.data.validation_fraction
    if isinstance(v, (int, float)) and not isinstance(v, bool) and 0.0 < v < 1.0 and isinstance(f.min_size, int) \
            and isinstance(t.batch_size, int):
        from fl.sizes import client_train_rows

        kept = client_train_rows(f.min_size, v)  # the smallest client's training examples (docs/fl.md)
        if t.batch_size > kept:
            raise ValueError(f"data.validation_fraction = {v!r} leaves the smallest client (data.fedprox.min_size = "
                             f"{f.min_size}) {kept} training examples, fewer than training.batch_size = {t.batch_size}; "
                             "lower the fraction or the batch size, or raise min_size")
