"""Cell geometry, large-scale fading and power control (model §5.1).

Drop: client c (its identity in the population, not its position in the round) sits at 2-D distance

    d_c = √(r₀² + u_c·(R² − r₀²)),   u_c ~ U(0, 1),   angle θ_c = 2π·v_c,  v_c ~ U(0, 1),

i.e. uniform in the annulus r₀ ≤ d ≤ R around the base station (CDF (d² − r₀²)/(R² − r₀²)), R =
``phy.cell_radius``, r₀ = ``phy.cell_min_distance`` [m]. Its propagation state (LoS with the model's
probability p_LoS(d_c)) and its shadowing X_c = σ_SF·z_c [dB], z_c ~ N(0, 1), come from the same keyed
stream ``(seed, "cell-drop", c)``, in the order u, v, w (LoS iff w < p_LoS), z. The drop is therefore a pure
function of (seed, c): fixed across rounds, the same for any population size M, and never materialised for
the whole population. With ``phy.redrop = true`` the stream is ``(seed, "cell-redrop", t, c)`` instead (a new
drop every round t).

Large-scale gain relative to the SNR reference (model §5.1): β_c/β_ref = 10^{(PL_ref − PL(d_c) − X_c)/10},
PL_ref the model's path loss without shadowing at the reference distance d_ref (``phy.snr_reference``:
"cell-edge" d_ref = R, or "median-distance" d_ref = √((R² + r₀²)/2), the median of d_c) in the model's
reference state (log-distance: its one state; TR 38.901: NLoS). So ``phy.snr_db`` = P·β_ref/σ² is the SNR
of a full-power client at the reference distance without shadowing.

Power control (``phy.power_control``): "full-power" β_eff = β_c/β_ref; "pathloss-inversion" (statistical,
capped at P): p_c = min(P, P·β_target/(β_c/β_ref)), so β_eff = min(β_c/β_ref, β_target), β_target =
10^{pc_target_db/10}. The composite channel a scheme sees is √β_eff·h̃ (h̃ the small-scale fading); the
per-round truncated channel inversion (model §6.2) acts on it.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import numpy as np

from .randomness import stream

__all__ = ["LargeScale", "CellChannel", "drop", "reference_distance", "client_ids", "SNR_REFERENCES",
           "POWER_CONTROLS"]

SNR_REFERENCES = ("cell-edge", "median-distance")
CACHE_CLIENTS = 1 << 16  # clients whose large-scale state is kept (recomputed identically when evicted)
POWER_CONTROLS = ("full-power", "pathloss-inversion")


def client_ids(clients, K: int) -> np.ndarray:
    """The round's client identities [K] int64: ``clients`` checked (K non-negative integers), or 0..K−1 when None."""
    if clients is None:
        return np.arange(int(K), dtype=np.int64)
    c = np.asarray(clients)
    if c.ndim != 1 or c.shape[0] != K or (c.size and (c.dtype.kind not in "iu" or c.min() < 0)):
        raise ValueError(f"clients must be {K} non-negative integer client identities (got {clients!r:.80})")
    return c.astype(np.int64)


def reference_distance(config) -> float:
    """d_ref [m]: R (cell-edge) or √((R² + r₀²)/2) (median-distance, the median of the uniform-annulus drop)."""
    R, r0 = float(config.cell_radius), float(config.cell_min_distance)
    if config.snr_reference == "cell-edge":
        return R
    if config.snr_reference == "median-distance":
        return math.sqrt((R * R + r0 * r0) / 2.0)
    raise ValueError(f"snr_reference must be one of {{{', '.join(SNR_REFERENCES)}}} (got {config.snr_reference!r})")


def drop(seed: int, clients: np.ndarray, *, radius: float, min_distance: float, round_index: int | None = None):
    """(d [K] m, θ [K] rad, w [K], z [K]) of the clients: uniform in the annulus, and the state/shadowing draws."""
    out = np.empty((4, len(clients)))
    for i, c in enumerate(clients):
        g = stream(seed, "cell-drop", int(c)) if round_index is None else stream(seed, "cell-redrop", int(round_index), int(c))
        out[:3, i] = g.random(3)
        out[3, i] = g.standard_normal()
    u, v, w, z = out
    return annulus_distance(u, radius=radius, min_distance=min_distance), 2.0 * np.pi * v, w, z


def annulus_distance(u: np.ndarray, *, radius: float, min_distance: float) -> np.ndarray:
    """d = √(r₀² + u·(R² − r₀²)) [m] of u ~ U(0, 1): uniform in the annulus r₀ ≤ d ≤ R (module docstring)."""
    return np.sqrt(min_distance**2 + u * (radius**2 - min_distance**2))


@dataclass(frozen=True)
class LargeScale:
    """The large-scale state of the round's K clients (model §5.1).

    distance [K] m; angle [K] rad; los [K] bool; shadowing_db [K] X_c; pathloss_db [K] PL(d_c) + X_c;
    gain [K] β_c/β_ref; gain_eff [K] β_eff (after power control); power_fraction [K] p_c/P.
    """

    distance: np.ndarray
    angle: np.ndarray
    los: np.ndarray
    shadowing_db: np.ndarray
    pathloss_db: np.ndarray
    gain: np.ndarray
    gain_eff: np.ndarray
    power_fraction: np.ndarray

    @property
    def amplitude(self) -> np.ndarray:
        """√β_eff [K]: the factor of the small-scale fading in the composite channel."""
        return np.sqrt(self.gain_eff)


class CellChannel:
    """The cell of ``config`` (``phy.pathloss`` ≠ "none") for master seed ``seed``; per-client results cached."""

    def __init__(self, config, *, seed: int):
        from .channels import pathloss_model

        self.config = config
        self.seed = int(seed)
        self.model = pathloss_model(config.pathloss)
        d_ref = reference_distance(config)
        self.reference_distance = d_ref
        self.reference_pathloss_db = float(self.model.pathloss_db(np.array([d_ref]), los=np.array([self.model.reference_state]),
                                                                  config=config)[0])
        self.target_gain = 10.0 ** (float(config.pc_target_db) / 10.0)
        self._cache: dict[int, tuple] = {}
        self._lock = threading.Lock()

    def _draw(self, ids: np.ndarray, round_index: int | None):
        cfg = self.config
        d, theta, w, z = drop(self.seed, ids, radius=float(cfg.cell_radius), min_distance=float(cfg.cell_min_distance),
                              round_index=round_index)
        return (d, theta, *self._state(d, w, z))

    def _state(self, d: np.ndarray, w: np.ndarray, z: np.ndarray):
        """(los, X [dB], PL(d) + X [dB]) of distances d with the state and shadowing draws w ~ U(0, 1), z ~ N(0, 1)."""
        cfg = self.config
        los = w < self.model.los_probability(d, config=cfg)
        sigma = (self.model.shadowing_std_db(d, los=los, config=cfg) if cfg.shadowing_db is None
                 else np.full(d.shape, float(cfg.shadowing_db)))
        x = sigma * z
        return los, x, self.model.pathloss_db(d, los=los, config=cfg) + x

    def _effective(self, pl_db: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(β/β_ref, β_eff) of path losses PL + X [dB] under the configured power control."""
        gain = 10.0 ** ((self.reference_pathloss_db - pl_db) / 10.0)
        if self.config.power_control == "full-power":
            return gain, gain
        if self.config.power_control == "pathloss-inversion":
            return gain, np.minimum(gain, self.target_gain)
        raise ValueError(f"power_control must be one of {{{', '.join(POWER_CONTROLS)}}} (got {self.config.power_control!r})")

    def drop_law_gains(self, rng: np.random.Generator, shape) -> np.ndarray:
        """β_eff of independent clients, each dropped afresh: i.i.d. draws of the drop's law (the law of one client's
        β_eff under ``redrop``, the same for every client): u, w ~ U(0, 1) and z ~ N(0, 1) from ``rng``, in that
        order, each an array of ``shape``."""
        cfg = self.config
        if not getattr(self.model, "elementwise", False):
            raise ValueError(f"pathloss: the drop's law of β_eff is drawn for elementwise path-loss models only "
                             f"(log-distance); {cfg.pathloss!r} evaluates its users in one topology (Sionna)")
        u, w = rng.random(shape), rng.random(shape)
        z = rng.standard_normal(shape)
        d = annulus_distance(u, radius=float(cfg.cell_radius), min_distance=float(cfg.cell_min_distance))
        return self._effective(self._state(d.ravel(), w.ravel(), z.ravel())[2])[1].reshape(np.shape(d))

    def large_scale(self, clients, *, K: int, round_index: int) -> LargeScale:
        """The :class:`LargeScale` of the round's clients (``clients`` None: identities 0..K−1)."""
        ids = client_ids(clients, K)
        if self.config.redrop:
            parts = self._draw(ids, int(round_index))
        else:
            with self._lock:
                missing = np.array([c for c in dict.fromkeys(ids.tolist()) if c not in self._cache], dtype=np.int64)
                fresh = {}
                if missing.size:
                    fresh = dict(zip(missing.tolist(), zip(*self._draw(missing, None))))
                rows = [self._cache[c] if c in self._cache else fresh[c] for c in ids.tolist()]
                for c, row in fresh.items():  # bounded: a cross-device population is never held whole
                    if len(self._cache) >= CACHE_CLIENTS:
                        self._cache.pop(next(iter(self._cache)))
                    self._cache[c] = row
            parts = tuple(np.array(col) for col in zip(*rows)) if rows else tuple(np.empty(0) for _ in range(5))
        d, theta, los, x, pl = parts
        gain, eff = self._effective(pl)
        return LargeScale(d, theta, los.astype(bool), x, pl, gain, eff, eff / gain)

    def describe(self) -> dict:
        cfg = self.config
        return {"pathloss": cfg.pathloss, "cell_radius_m": float(cfg.cell_radius),
                "cell_min_distance_m": float(cfg.cell_min_distance), "redrop": bool(cfg.redrop),
                "snr_reference": cfg.snr_reference, "reference_distance_m": self.reference_distance,
                "reference_pathloss_db": self.reference_pathloss_db, "power_control": cfg.power_control,
                "pc_target_db": float(cfg.pc_target_db)}
