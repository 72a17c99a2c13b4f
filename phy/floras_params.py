"""``[phy.floras]``: the FLORAS scheme's own keys (model §4, §6.1)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .checks import check_choice, check_finite_positive, check_int_at_least

__all__ = ["FlorasParams", "SEQUENCE_FAMILIES", "CSIT_MODES", "PATHS", "RECEIVERS", "NOISE_ESTIMATES", "PILOT_MODES",
           "RECEIVER_SCOPES", "PRIVACY_BOUNDS"]

SEQUENCE_FAMILIES = ("walsh-hadamard", "random-orthonormal", "pn")
CSIT_MODES = ("none", "phase")
PATHS = ("auto", "fast", "chip", "sufficient")
RECEIVERS = ("plain", "inverse-variance", "capped")
NOISE_ESTIMATES = ("pilots", "energy")
PILOT_MODES = ("per-block", "stale")
RECEIVER_SCOPES = ("round", "block")
PRIVACY_BOUNDS = ("auto", "idealised", "law")


@dataclass(frozen=True)
class FlorasParams:
    """FLORAS parameters.

    Attributes
    ----------
    N : int
        Size of the sequence set, N ≥ K; γ = N − K inactive sequences. Orthonormal families need
        N ≤ L (``phy.L``).
    sequences : {"walsh-hadamard", "random-orthonormal", "pn"}
        "pn" is non-orthogonal: the estimator is then biased (reported, not refused);
        Walsh–Hadamard needs L a power of two.
    csit : {"none", "phase"}
        Effective gain g_k = Re(h_k) (none) or |h_k| (phase pre-rotation, Remark 2).
    path : {"auto", "fast", "chip", "sufficient"}
        Implementation (model §6.1). "auto": on orthonormal A the sufficient-statistic path for
        untraced rounds (learning runs, sweeps) and the fast path for traced rounds (link
        summaries); the chip path otherwise. "sufficient" yields ŝ and V only (no traces).
    receiver : {"plain", "inverse-variance", "capped"}
        The server's rule for the round's weight w (model §6.4, :mod:`phy.receiver_rules`): the estimate
        is w·x̂. "plain" (w = 1) is the source's estimator; "inverse-variance" w = γ²/V̂; "capped"
        w = min(receiver_cap, γ²/V̂). Post-processing under T1: ε is unchanged.
    receiver_cap : float > 0
        w_max of the "capped" rule (4.0).
    receiver_scope : {"round", "block"}
        With several pilots (``pilots = "per-block"`` and coherence blocks): one weight for the round from the
        entry-weighted mean of the pilots' V̂ ("round"), or each pilot's entries weighted by the rule on that pilot's
        own V̂_m ("block", model §6.4). The same with one pilot. Post-processing under T1 either way.
    noise_estimate : {"pilots", "energy"}
        V̂ from the pilot outputs r^s (the exact conditional variance, default) or from the energy of
        the release, ‖ŝ‖²/(b²d).
    pilots : {"per-block", "stale"}
        With ``phy.coherence_symbols`` (model §5.1): a reference slot in every coherence block (its channel
        uses counted), or the one reference slot of the update for every block (channel aging).
    privacy_bound : {"auto", "idealised", "law"}
        Which bound gives the run's ε (model §5.1, "FLORAS's ε with offsets"). "idealised": the Cauchy release with
        c_k = 1 (model §7.2; with ε_link beside it in the report). "law": the PLD of the law given the pilots, the
        bound that holds for the simulated link (N > K, no cell, one block and antenna, perfect CSI; accountant
        ``pld`` or ``tightest``). "auto": the law with chip-timing offsets and N > K (the only bound derived there),
        the idealised release otherwise.
    """

    N: int = 30
    sequences: str = "walsh-hadamard"
    csit: str = "none"
    path: str = "auto"
    receiver: str = "plain"
    receiver_cap: float = 4.0
    noise_estimate: str = "pilots"
    pilots: str = "per-block"
    receiver_scope: str = "round"
    privacy_bound: str = "auto"

    moved_from: ClassVar[dict] = {}

    def check(self, phy, *, K: int, d: int | None, active: bool) -> None:
        check_choice("floras.sequences", self.sequences, SEQUENCE_FAMILIES)
        check_choice("floras.csit", self.csit, CSIT_MODES)
        check_choice("floras.path", self.path, PATHS)
        check_choice("floras.receiver", self.receiver, RECEIVERS)
        check_finite_positive("floras.receiver_cap", self.receiver_cap)
        check_choice("floras.noise_estimate", self.noise_estimate, NOISE_ESTIMATES)
        check_choice("floras.pilots", self.pilots, PILOT_MODES)
        check_choice("floras.receiver_scope", self.receiver_scope, RECEIVER_SCOPES)
        check_choice("floras.privacy_bound", self.privacy_bound, PRIVACY_BOUNDS)
        if self.receiver_scope == "block" and self.noise_estimate != "pilots":
            raise ValueError(f"floras.receiver_scope = 'block' needs floras.noise_estimate = 'pilots' (each pilot's own "
                             f"conditional variance; got {self.noise_estimate!r})")
        check_int_at_least("floras.N", self.N, K if active else 1)
        if not active:
            return
        offsets = getattr(phy, "timing_offset", 0.0) != 0.0
        if self.privacy_bound == "idealised" and offsets and self.N > K:
            raise ValueError("floras.privacy_bound = 'idealised': with chip-timing offsets and N > K the inactive "
                             "sequences no longer add the Cauchy release's noise (model §5.1); use privacy_bound = "
                             "'law' or 'auto' (the law given the pilots), or remove phy.timing_offset")
        if self.privacy_bound == "law" and self.N == K:
            raise ValueError(f"floras.privacy_bound = 'law' needs N > K inactive sequences (got N = K = {K}): with N = K "
                             "FLORAS adds no privacy noise and its ε is ∞; raise floras.N or use privacy_bound = 'auto'")
        n_c = getattr(phy, "coherence_symbols", None)
        if n_c is not None:
            if self.pilots == "per-block" and isinstance(n_c, int) and n_c < 2:
                raise ValueError(f"coherence_symbols must be ≥ 2 with floras.pilots = 'per-block' (a reference and a data "
                                 f"slot per block; got {n_c}); or set floras.pilots = 'stale'")
            if self.sequences == "pn" or self.path == "chip":
                raise ValueError("coherence_symbols with FLORAS needs an orthonormal sequence set and floras.path = 'auto', "
                                 "'fast' or 'sufficient' (the chip path keeps one fading block)")
        if getattr(phy, "timing_offset", 0.0) != 0.0:
            if self.path in ("fast", "sufficient"):
                raise ValueError(f"timing_offset needs floras.path = 'chip' or 'auto' (chip-level offsets; got {self.path!r})")
            if n_c is not None:
                raise ValueError("timing_offset and coherence_symbols cannot be combined (offsets run on the chip path, "
                                 "coherence blocks on the fast and sufficient paths)")
        n_rx = getattr(phy, "rx_antennas", 1)
        if n_rx != 1:  # model §5.2: per-antenna despreading needs AᵀA = I; Re(h) gains; §6.4's rules take V_ref(γ, N_r)
            if self.sequences == "pn" or self.path == "chip":
                raise ValueError(f"rx_antennas = {n_rx} with FLORAS needs an orthonormal sequence set and floras.path = "
                                 "'auto', 'fast' or 'sufficient' (the chip path has one antenna)")
            if self.csit != "none":
                raise ValueError(f"floras.csit must be 'none' with rx_antennas = {n_rx} (one phase pre-rotation cannot "
                                 "align every antenna; got 'phase')")
        L = phy.L
        if self.sequences == "walsh-hadamard" and (L & (L - 1)) != 0:
            raise ValueError(f"L must be a power of two for Walsh–Hadamard sequences (got {L})")
        if self.sequences in ("walsh-hadamard", "random-orthonormal") and self.N > L:
            raise ValueError(f"floras.N must be ≤ L = {L} for orthonormal sequences (got N = {self.N}); "
                             "use floras.sequences = 'pn' to study non-orthogonal sets")
        if self.path in ("fast", "sufficient") and self.sequences == "pn":
            raise ValueError(f"floras.path must be 'chip' or 'auto' for non-orthogonal (pn) sequences: the {self.path} "
                             "path is exact only when AᵀA = I")
