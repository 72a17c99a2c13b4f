"""3GPP TR 38.901 path loss, LoS probability and shadowing through Sionna's scenario models (model §5.1).

The scenarios ``umi`` (street canyon), ``uma`` and ``rma`` are Sionna's own
``sionna.phy.channel.tr38901.UMiScenario`` / ``UMaScenario`` / ``RMaScenario`` (double precision, one
single-element omnidirectional panel at each end, uplink, every client outdoor). For the clients'
distances the simulator places them on a ray from the base station at height ``phy.ut_height`` (the path
loss depends on the 2-D distance and the heights only) and sets the topology twice, with every client
forced LoS and forced NLoS; Sionna then gives

- ``basic_pathloss``: PL [dB] of TR 38.901 Table 7.4.1-1 in each state (NLoS: max(PL_LoS, PL'_NLoS));
- ``los_probability``: Table 7.4.2-1;
- ``lsp_log_std[..., 3]``: σ_SF/10 of the scenario's parameter table (Table 7.5-6), so σ_SF [dB].

Sionna 1.2's scenario returns the 2-D distance as ``distance_3d`` (so its PL formulas, written in d_3D,
would be evaluated at d_2D: 0.76 dB too low for UMi at 20 m); the scenario classes are used through a
subclass whose ``distance_3d`` is the 3-D distance Sionna computes, which reproduces Table 7.4.1-1
(tests/test_cell.py).

The client's state is drawn by the cell (:mod:`phy.cell`) from a keyed stream with that probability (not
from Sionna's generator), and the shadowing X ~ N(0, σ_SF²) [dB] likewise, independently per client (no
spatial correlation of the shadowing: choice). Carrier ``phy.carrier_ghz``; base-station height
``phy.bs_height`` (default 10 m UMi, 25 m UMa, 35 m RMa). UMa's effective environment height h_E is 1 m in
Sionna (exact for h_UT ≤ 13 m, where TR 38.901's C(d_2D, h_UT) = 0). Validity (Table 7.4.1-1): 10 m ≤ d_2D ≤
5 km. TensorFlow and Sionna are imported on the first evaluation.
"""

from __future__ import annotations

import os
import threading

import numpy as np

from . import register_pathloss

__all__ = ["TR38901", "DEFAULT_BS_HEIGHT", "DISTANCE_RANGE"]

DEFAULT_BS_HEIGHT = {"umi": 10.0, "uma": 25.0, "rma": 35.0}  # m, TR 38.901 Table 7.4.1-1
DISTANCE_RANGE = (10.0, 5000.0)  # m, 2-D distance
_CLASSES = {"umi": "UMiScenario", "uma": "UMaScenario", "rma": "RMaScenario"}
_LOCK = threading.Lock()


def _with_3d_distance(cls):
    """``cls`` whose ``distance_3d`` is the 3-D distance: Sionna 1.2's ``SystemLevelScenario.distance_3d`` returns
    the 2-D one (its ``_distance_2d``), which TR 38.901's PL formulas would then read as d_3D."""
    return type(cls.__name__, (cls,), {"distance_3d": property(lambda self: self._distance_3d)})


class TR38901:
    reference_state = False  # the SNR reference distance is evaluated in NLoS (model §5.1)
    uses_heights = True
    elementwise = False  # Sionna's topology holds every pair of users: thousands of distances per call at most

    def __init__(self, name: str):
        self.name = name
        self._scenarios: dict[float, object] = {}
        self._cache: dict[tuple, dict] = {}

    def bs_height(self, config) -> float:
        return DEFAULT_BS_HEIGHT[self.name] if config.bs_height is None else float(config.bs_height)

    def _scenario(self, carrier_hz: float):
        sc = self._scenarios.get(carrier_hz)
        if sc is None:
            os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
            from sionna.phy.channel import tr38901

            array = tr38901.PanelArray(num_rows_per_panel=1, num_cols_per_panel=1, polarization="single",
                                       polarization_type="V", antenna_pattern="omni", carrier_frequency=carrier_hz,
                                       precision="double")
            cls = _with_3d_distance(getattr(tr38901, _CLASSES[self.name]))
            kw = {} if self.name == "rma" else {"o2i_model": "low"}
            sc = cls(carrier_frequency=carrier_hz, ut_array=array, bs_array=array, direction="uplink",
                     precision="double", **kw)
            self._scenarios[carrier_hz] = sc
        return sc

    def evaluate(self, distance, *, config) -> dict:
        """{"pl_los", "pl_nlos", "p_los", "sf_los", "sf_nlos"} [K] float64 for the 2-D distances [m]."""
        d = np.atleast_1d(np.asarray(distance, dtype=np.float64))
        fc, h_bs, h_ut = float(config.carrier_ghz) * 1e9, self.bs_height(config), float(config.ut_height)
        key = (fc, h_bs, h_ut, d.tobytes())
        with _LOCK:
            out = self._cache.get(key)
            if out is None:
                out = self._evaluate(d, fc, h_bs, h_ut)
                if len(self._cache) >= 256:
                    self._cache.pop(next(iter(self._cache)))
                self._cache[key] = out
        return out

    def _evaluate(self, d, fc, h_bs, h_ut) -> dict:
        import tensorflow as tf

        K = d.shape[0]
        ut = np.zeros((1, K, 3))
        ut[0, :, 0], ut[0, :, 2] = d, h_ut
        bs = np.array([[[0.0, 0.0, h_bs]]])
        out = {}
        with tf.device("/CPU:0"):
            sc = self._scenario(fc)
            zeros = tf.zeros((1, K, 3), tf.float64)
            for los, tag in ((True, "los"), (False, "nlos")):
                sc.set_topology(ut_loc=tf.constant(ut), bs_loc=tf.constant(bs), ut_orientations=zeros,
                                bs_orientations=tf.zeros((1, 1, 3), tf.float64), ut_velocities=zeros,
                                in_state=tf.zeros((1, K), tf.bool), los=los)
                out[f"pl_{tag}"] = np.asarray(sc.basic_pathloss.numpy(), dtype=np.float64).reshape(K)
                out[f"sf_{tag}"] = 10.0 * np.asarray(sc.lsp_log_std.numpy()[..., 3], dtype=np.float64).reshape(K)
            out["p_los"] = np.asarray(sc.los_probability.numpy(), dtype=np.float64).reshape(K)
        return out

    def pathloss_db(self, distance, *, los, config) -> np.ndarray:
        e = self.evaluate(distance, config=config)
        return np.where(np.asarray(los, dtype=bool), e["pl_los"], e["pl_nlos"])

    def los_probability(self, distance, *, config) -> np.ndarray:
        return self.evaluate(distance, config=config)["p_los"].copy()

    def shadowing_std_db(self, distance, *, los, config) -> np.ndarray:
        e = self.evaluate(distance, config=config)
        return np.where(np.asarray(los, dtype=bool), e["sf_los"], e["sf_nlos"])


for _name in _CLASSES:
    register_pathloss(TR38901(_name))
