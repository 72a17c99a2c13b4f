"""The audit of model §7.5 as one JSON-ready experiment (used by ``floras audit``).

:func:`measure_t2` — what a curious base station (T2) learns from the raw signals: active-sequence
detection (rates at the default NP threshold with Clopper–Pearson intervals, top-K accuracy,
ROC, theory), per-client decoding NMSE, and linking across rounds.
:func:`detection_sweep` — detection against SNR, CSIT mode, K and N.
:func:`linking_sweep` — detection and multi-round linking against receive antennas N_r and SNR (model §5.2).
:func:`accountant_upper` — the T1 accountant's ε for the game's configuration, with its assumptions.
:func:`run_audit` — all of the above plus the distinguishing game (:mod:`scenarios.audit.game`).

Every measurement is a pure function of (configuration, seed, key): the rounds are keyed streams.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import replace

import numpy as np

from phy.config import PhyConfig

from .blocks import audit_detector, detection_theory
from .decoding import client_nmse, summarize_nmse
from .detection import (
    DEFAULT_FALSE_ALARM,
    evaluate_detector,
    np_threshold,
    roc_curve,
    top_k_accuracy,
)
from .game import NEIGHBOURS, THREATS, play_game
from .stats import check_confidence
from .linking import LINK_METHODS, link_rounds, linking_success, persistent_updates
from .tracking import CHAIN_LENGTHS, track_clients
from .upper import accountant_upper

__all__ = ["measure_t2", "detection_sweep", "linking_sweep", "accountant_upper", "run_audit", "SNR_DEFINITION"]

SNR_DEFINITION = "SNR = P/σ² (per-chip noise variance σ²/L; despread SNR = L·P/σ²), model §5"


def _detection_block(stats: np.ndarray, mask: np.ndarray, *, up, config: PhyConfig, K: int, d: int, false_alarm: float,
                     confidence: float, betas=None, angles=None) -> dict:
    kind, dof, P = audit_detector(config, d)
    n_rx = int(config.rx_antennas)
    tau = np_threshold(noise_var=up.noise_var, false_alarm=false_alarm, kind=kind, n_rx=dof)
    det = evaluate_detector(stats, mask, threshold=tau, nominal_false_alarm=false_alarm, kind=kind, confidence=confidence)
    theory = detection_theory(tau, config=config, n_pilots=P, b=up.b, noise_var=up.noise_var,
                              betas=betas if config.has_cell else None, angles=angles)
    statistic = (f"Σ_{{p,r}} (r_{{j,r}}^{{s,p}})² over {P} pilots and {n_rx} antenna(s)" if P > 1 else
                 ("|r_j^s|²" if kind == "energy" else "r_j^s") if n_rx == 1 else f"Σ_r (r_{{j,r}}^s)² over {n_rx} antennas")
    return {
        "detector": f"{kind} detector ({statistic} > τ), " + (
            "not the Neyman–Pearson test with a steered line of sight (model §5.2; its exact P_D is the theory)"
            if config.los_k and n_rx > 1 else "over the pilots of every coherence block (scenarios/audit/blocks.py)"
            if P > 1 else f"Neyman–Pearson optimal per sequence for csit = {config.of('floras').csit}"),
        "threshold_rule": (f"Neyman–Pearson threshold for per-sequence false-alarm probability {false_alarm:g} (noise level σ²/L known)"
                           + ("" if dof == 1 else f"; τ = (σ²/L)·χ²_{dof}⁻¹(1 − P_FA)")),
        "threshold": det.threshold,
        "detection_probability": det.detection_probability,
        "detection_probability_ci": list(det.detection_ci),
        "detection_probability_theory": theory if config.of("floras").sequences != "pn" else None,
        "false_alarm_probability": det.false_alarm_probability,
        "false_alarm_probability_ci": list(det.false_alarm_ci),
        "nominal_false_alarm": false_alarm,
        "ci_confidence": confidence,
        "active_sequence_rounds": det.n_active,
        "inactive_sequence_rounds": det.n_inactive,
        "top_k_accuracy": top_k_accuracy(stats, mask, K=K),
        "roc": roc_curve(stats, mask, noise_var=up.noise_var, kind=kind, n_rx=dof),
    }


def _uplink(config: PhyConfig, *, K: int, seed: int, key: bytes):
    from .signals import T2Uplink

    return T2Uplink(config, K=K, seed=seed, key=key)


def measure_t2(config: PhyConfig, *, K: int, d: int, rounds: int, seed: int, key: bytes,
               false_alarm: float = DEFAULT_FALSE_ALARM, persistence=(0.0, 0.5, 0.9), confidence: float = 0.95,
               chain_lengths=CHAIN_LENGTHS) -> dict:
    """Detection, decoding and linking measured over ``rounds`` rounds (rounds ≥ 2, even pairs for linking).

    Client updates: :func:`scenarios.audit.linking.persistent_updates` with norm C = config.norm_bound(d)
    (full average power); detection and decoding use the first persistence value. ``linking``: disjoint
    round pairs (2m, 2m + 1); ``tracking``: every consecutive pair, chains and the cumulative attack
    (:func:`scenarios.audit.tracking.track_clients`), per persistence value.
    """
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 2:
        raise ValueError(f"rounds must be an integer ≥ 2 (got {rounds!r})")
    if not 0.0 < false_alarm < 1.0:
        raise ValueError(f"false_alarm must be in (0, 1) (got {false_alarm!r})")
    persistence = tuple(float(p) for p in persistence)
    if not persistence:
        raise ValueError("persistence must list at least one value in [0, 1]")
    up = _uplink(config, K=K, seed=seed, key=key)
    kind = audit_detector(config, d)[0]
    C = config.norm_bound(d)
    stats = np.empty((rounds, config.of("floras").N))
    mask = np.zeros((rounds, config.of("floras").N), dtype=bool)
    nmse, betas, angles = [], [], []
    linking, tracking = {}, {}
    for p_i, rho in enumerate(persistence):
        views = []
        for t in range(rounds):
            s = persistent_updates(seed, t, K=K, d=d, C=C, persistence=rho, experiment=p_i)
            view, truth = up.round(s, round_index=t)
            views.append((view, truth))
            if p_i == 0:
                stats[t] = view.statistic(kind)
                mask[t, truth.active] = True
                nmse.append(client_nmse(view, truth))
                betas.append(truth.beta_eff)
                angles.append(truth.angles)
        pairs = [(views[2 * m], views[2 * m + 1]) for m in range(rounds // 2)]
        block = {}
        for method in LINK_METHODS:
            succ = np.array([linking_success(link_rounds(a[0], b[0], method=method, kind=kind), a[1], b[1]) for a, b in pairs])
            se = float(succ.std(ddof=1) / math.sqrt(succ.size)) if succ.size > 1 else math.nan
            block[method] = {"success_rate": float(succ.mean()), "standard_error": se, "round_pairs": int(succ.size)}
        linking[f"{rho:g}"] = block
        tracking[f"{rho:g}"] = track_clients(views, kind=kind, chain_lengths=chain_lengths, confidence=confidence)
    decoding = summarize_nmse(np.concatenate(nmse))
    return {
        "detection": _detection_block(stats, mask, up=up, config=config, K=K, d=d, false_alarm=false_alarm,
                                      confidence=confidence, betas=betas, angles=angles),
        "decoding": decoding,
        "linking": {
            "by_persistence": linking,
            "chance": {"similarity": 1.0 / K, "pilot": 1.0 / K, "index": 1.0 / config.of("floras").N, "signature": 1.0 / K,
                       "steering": 1.0 / K},
            "update_model": "s_k^t = C·unit(centre(√ρ·m_k + √(1−ρ)·z_k^t)), ρ = persistence of a client's update direction",
            "uncertainty": "standard error of the mean success over disjoint round pairs",
            "rx_antennas": int(config.rx_antennas),
        },
        "tracking": {"by_persistence": tracking, "channel": up.channel.describe()},
        "rounds": rounds,
    }


def detection_sweep(config: PhyConfig, *, snr_dbs, csits=("none", "phase"), Ks, Ns, rounds: int, seed: int, key: bytes,
                    d: int = 16, false_alarm: float = DEFAULT_FALSE_ALARM, confidence: float = 0.95) -> list[dict]:
    """Detection (default threshold, top-K, ROC) and decoding NMSE for every (snr_db, csit, K, N), K ≤ N.

    Updates: independent rounds (persistence 0), ‖s_k‖ = C = config.norm_bound(d).
    """
    out = []
    for snr in snr_dbs:
        for csit in csits:
            for K in Ks:
                for N in Ns:
                    if not K <= N:
                        continue
                    cfg = replace(config, snr_db=float(snr)).with_params("floras", csit=csit, N=int(N))
                    cfg.validate(K=int(K))
                    up = _uplink(cfg, K=int(K), seed=seed, key=key)
                    kind = audit_detector(cfg, d)[0]
                    stats = np.empty((rounds, N))
                    mask = np.zeros((rounds, N), dtype=bool)
                    nmse = []
                    C = cfg.norm_bound(d)
                    for t in range(rounds):
                        s = persistent_updates(seed, t, K=int(K), d=d, C=C, persistence=0.0)
                        view, truth = up.round(s, round_index=t)
                        stats[t] = view.statistic(kind)
                        mask[t, truth.active] = True
                        nmse.append(client_nmse(view, truth))
                    block = _detection_block(stats, mask, up=up, config=cfg, K=int(K), d=d, false_alarm=false_alarm,
                                             confidence=confidence)
                    dec = summarize_nmse(np.concatenate(nmse))
                    out.append({"snr_db": float(snr), "csit": csit, "K": int(K), "N": int(N), **block,
                                "decoding_nmse": dec["median"], "decoding": dec})
    return out


def linking_sweep(config: PhyConfig, *, rx_antennas, snr_dbs, K: int, d: int, rounds: int, seed: int, key: bytes,
                  persistence: float = 0.0, false_alarm: float = DEFAULT_FALSE_ALARM, confidence: float = 0.95,
                  chain_lengths=CHAIN_LENGTHS) -> list[dict]:
    """Detection and multi-round linking for every (N_r, snr_db) (model §5.2): one record each.

    Every record holds N_r, the SNR, P_D/P_FA at the NP threshold (χ²_{N_r}), top-K accuracy, the
    one-pair linking success of every method of :data:`scenarios.audit.linking.LINK_METHODS` over disjoint
    pairs and the :func:`scenarios.audit.tracking.track_clients` block, for updates of persistence
    ``persistence``; the cell keys of ``config`` apply to every record.
    """
    out = []
    for n_rx in rx_antennas:
        for snr in snr_dbs:
            cfg = replace(config, snr_db=float(snr), rx_antennas=int(n_rx)).validate(K=K, d=d)
            t2 = measure_t2(cfg, K=K, d=d, rounds=rounds, seed=seed, key=key, false_alarm=false_alarm,
                            persistence=(persistence,), confidence=confidence, chain_lengths=chain_lengths)
            det = t2["detection"]
            out.append({"rx_antennas": int(n_rx), "snr_db": float(snr), "persistence": float(persistence),
                        "detection_probability": det["detection_probability"],
                        "detection_probability_theory": det["detection_probability_theory"],
                        "false_alarm_probability": det["false_alarm_probability"],
                        "top_k_accuracy": det["top_k_accuracy"], "decoding_nmse": t2["decoding"]["median"],
                        "linking": t2["linking"]["by_persistence"][f"{persistence:g}"],
                        "tracking": t2["tracking"]["by_persistence"][f"{persistence:g}"]})
    return out


def run_audit(config: PhyConfig, *, threat: str, K: int, d: int, trials: int, rounds: int, seed: int, key: bytes,
              delta: float = 1e-5, confidence: float = 0.95, neighbour: str = "replace",
              false_alarm: float = DEFAULT_FALSE_ALARM, persistence=(0.0, 0.5, 0.9), sweep: dict | None = None,
              link_sweep: dict | None = None) -> dict:
    """The audit as a JSON-ready dict (keys documented in docs/audit.md).

    link_sweep : {"rx_antennas": [...], "snr_dbs": [...]} adds :func:`linking_sweep` (T2) as ``linking_sweep``.
    """
    if threat not in THREATS:
        raise ValueError(f"threat must be one of {{T1, T2}} (got {threat!r})")
    if neighbour not in NEIGHBOURS:
        raise ValueError(f"neighbour must be one of {{{', '.join(NEIGHBOURS)}}} (got {neighbour!r})")
    config.validate(K=K, d=d)
    # everything that can fail on input is checked before the long work starts
    if isinstance(trials, bool) or not isinstance(trials, int) or trials < 4:
        raise ValueError(f"trials must be an integer ≥ 4 (got {trials!r})")
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 2:
        raise ValueError(f"rounds must be an integer ≥ 2 (got {rounds!r})")
    if config.csi_error != 0.0 and threat == "T1":  # the T1 game's likelihood ratio takes the gains exact (|h_k|)
        raise ValueError("csi_error: floras audit's T1 game takes FLORAS's phase CSIT exact; use --threat T2 or "
                         "phy.csi_error = 0")
    if not 0.0 < false_alarm < 1.0:
        raise ValueError(f"false_alarm must be in (0, 1) (got {false_alarm!r})")
    if not all(0.0 <= float(p) <= 1.0 for p in persistence) or not len(persistence):
        raise ValueError(f"persistence must list values in [0, 1] (got {persistence!r})")
    if d < 3:
        raise ValueError(f"d must be ≥ 3 for the game's zero-mean canary (got {d})")
    check_confidence(confidence)
    if threat == "T1" and (config.rx_antennas != 1 or config.has_cell):
        raise ValueError("rx_antennas and phy.pathloss: the T1 game's Cauchy likelihood ratio is derived for the "
                         "one-antenna link without a cell (model §6.1); use --threat T2, or rx_antennas = 1 and no cell")
    if link_sweep and threat != "T2":
        raise ValueError("sweep-rx-antennas applies to --threat T2 only")
    upper = accountant_upper(K=K, N=config.of("floras").N, d=d, C=config.C, power=config.power, clip_norm=1.0,
                             neighbour=neighbour, delta=delta, sequences=config.of("floras").sequences, snr_db=config.snr_db,
                             L=config.L, csit=config.of("floras").csit, rician_k=config.los_k,
                             antennas=int(config.rx_antennas))
    out: dict = {
        "threat": threat,
        "config": {"K": K, "d": d, **{k: v for k, v in config.to_dict().items()
                                      if k not in ("scheme", "floras", "g_th", "rho_rule", "resource", "chunk_size",
                                                   "normalization", "clip_norm")},
                   **dataclasses.asdict(config.of("floras"))},  # the FLORAS keys beside the shared ones
        "snr_definition": SNR_DEFINITION,
        "gamma": config.of("floras").N - K,
        "seed": seed,
    }
    if threat == "T2":
        t2 = measure_t2(config, K=K, d=d, rounds=rounds, seed=seed, key=key, false_alarm=false_alarm,
                        persistence=persistence, confidence=confidence)
        det = t2["detection"]
        out["detection_probability"] = det["detection_probability"]
        out["false_alarm_probability"] = det["false_alarm_probability"]
        out["decoding_nmse"] = t2["decoding"]["median"]
        out.update(t2)
        if sweep:
            out["detection_sweep"] = detection_sweep(config, seed=seed, key=key, d=d, false_alarm=false_alarm,
                                                     confidence=confidence, **sweep)
        if link_sweep:
            out["linking_sweep"] = linking_sweep(config, K=K, d=d, rounds=rounds, seed=seed, key=key,
                                                 persistence=float(persistence[0]), false_alarm=false_alarm,
                                                 confidence=confidence, **link_sweep)
    game = play_game(config, threat=threat, K=K, d=d, trials=trials, seed=seed, key=key, delta=delta,
                     confidence=confidence, neighbour=neighbour)
    out["empirical_epsilon_lower"] = game.bound.epsilon
    out["confidence"] = game.bound.confidence
    out["delta"] = delta
    out["game"] = {
        "threat": threat,
        "neighbour": neighbour,
        "trials_per_world": trials,
        "statistic": game.statistic,
        "normalization": "clip (public clip norm R = 1)",
        **game.bound.to_dict(),
    }
    if config.has_cell:
        upper["assumptions"].append(
            "epsilon_link computed without the cell (every client at the reference SNR, model §7.2): the audited link "
            "has a cell, whose per-client gains it does not take; epsilon, of the idealised release, does not depend "
            "on the cell")
    out["epsilon_upper"] = upper["epsilon"]
    out["epsilon_link"] = upper["epsilon_link"]
    out["epsilon_upper_report"] = upper
    out["epsilon_upper_applies_to"] = (
        "T1 only: the accountant bounds what an observer of ŝ learns; "
        + ("it is shown here for comparison and does NOT bound a base station with the raw signals (T2)" if threat == "T2"
           else "it bounds the idealised release, not the simulated link (valid_for_link = False; epsilon_link is the "
                "link-level bound, see its assumptions); an empirical lower bound above epsilon_upper would show the gap")
    )
    return out
