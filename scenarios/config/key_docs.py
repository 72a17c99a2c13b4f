"""The documentation of every scenario key: allowed values and meaning (with units and model §).

Read by :mod:`scenarios.config.reference`, which generates ``docs/fl.md``'s key tables from the
configuration dataclasses and refuses a field without an entry here, or an entry without a field.
"""

from __future__ import annotations

#: "table.key" → (allowed values, meaning with units; model § where it applies)
KEY_DOCS: dict[str, tuple[str, str]] = {
    # [data]
    "data.name": ("`fashion-mnist`, `mnist`, `digits`, `synthetic`, `fedprox`", "data set"),
    "data.dir": ("directory", "where the IDX files are (searched first; relative to the working directory)"),
    "data.test_fraction": ("(0, 1)", "test share of `digits` (stratified, seeded) and `synthetic`"),
    "data.synthetic_samples": ("≥ 2", "training examples of `synthetic`"),
    "data.synthetic_features": ("≥ 1", "feature dimension of `synthetic`"),
    "data.synthetic_classes": ("≥ 2", "classes of `synthetic`"),
    "data.validation_fraction": ("[0, 1)", "share of the training set held out as a stratified validation split "
                                           "(`fedprox`: of every client's examples) (used by `floras tune`; 0: none)"),
    "data.evaluate_on": ("`test`, `validation`", "set behind `test_loss` / `test_accuracy` (`validation` needs "
                                                "`validation_fraction` > 0)"),
    # [data.fedprox]
    "data.fedprox.alpha": ("≥ 0", "α: standard deviation of u_k (does not change labels, [model §11](model.md#sec-11))"),
    "data.fedprox.beta": ("≥ 0", "β: standard deviation of B_k, the spread of the clients' feature means"),
    "data.fedprox.features": ("≥ 1", "F (the reference: 60; 784 gives the 784-200-10 MLP d = 159 010)"),
    "data.fedprox.classes": ("≥ 2", "C, classes"),
    "data.fedprox.size_mu": ("finite", "μ of the client sizes D_k = min(n_min + ⌊e^{μ+σZ}⌋, n_max)"),
    "data.fedprox.size_sigma": ("≥ 0", "σ of the client sizes"),
    "data.fedprox.min_size": ("≥ 1", "n_min (the reference's 50); `training.batch_size` ≤ n_min"),
    "data.fedprox.max_size": ("≥ `min_size`", "n_max, the cap on D_k"),
    "data.fedprox.test_clients": ("≥ 1", "clients drawn from the population for the held-out test set"),
    "data.fedprox.test_per_client": ("≥ 1", "fresh test examples of each of those clients"),
    "data.fedprox.shared_model": ("true, false", "one labeller (W, b) for every client (features still client-specific)"),
    # [partition]
    "partition.kind": ("`iid`, `shards`, `dirichlet`", "how the training set is split"),
    "partition.clients": ("≥ 1", "M, number of clients"),
    "partition.placement": ("`random`, `by-distance`", "`by-distance`: the k-th nearest client of the cell's drop gets the "
                            "partition row with the k-th smallest mean label (labels tied to position; needs a cell, "
                            "`phy.redrop = false`; [model §8](model.md#sec-8))"),
    "partition.shards_per_client": ("≥ 1", "`shards`: label shards per client ([model §8](model.md#sec-8): 2)"),
    "partition.alpha": ("> 0", "`dirichlet`: concentration α"),
    # [model]
    "model.name": ("`mlp`, `cnn`", "architecture"),
    "model.hidden": ("list of ≥ 1", "MLP hidden widths (784-200-10: d = 159 010)"),
    "model.channels": ("non-empty list of ≥ 1", "CNN: Conv2D(c, k×k, same, ReLU) + MaxPool 2×2 per entry, then Dense"),
    "model.kernel_size": ("≥ 1", "CNN kernel size k (default CNN on 28×28: d = 9 098)"),
    # [training]
    "training.clients_per_round": ("1 … M", "K, sampled uniformly without replacement each round (with "
                                            "`sampling = \"poisson\"`: the expected cohort qM)"),
    "training.sampling": ("`without-replacement`, `poisson`", "client sampling ([model §1](model.md#sec-1)): exactly K of M "
                          "uniformly without replacement, or each client independently with probability q = K/M "
                          "(cohort K_t ~ Binomial(M, q), step x̂/(qM), add/remove ε; not FLORAS, PriFedSync)"),
    "training.lr": ("> 0", "η, plain SGD"),
    "training.batch_size": ("1 … D", "B, examples per local step"),
    "training.local_epochs": ("≥ 1", "E local epochs (the source's experiments)"),
    "training.local_steps": ("≥ 1", "E local steps instead (set `local_steps` and leave `local_epochs` out)"),
    "training.eval_every": ("≥ 1", "evaluate the global model every this many rounds (and always in the last)"),
    "training.train_eval_size": ("≥ 1", "examples of the fixed training subset behind `train_loss`"),
    "training.client_chunk": ("≥ 1 or none (all K)", "clients trained per batched call (memory only; results the same up to float32 kernel rounding, docs/fl.md)"),
    "training.server_momentum": ("[0, 1)", "β of the server's momentum: v ← β·v + x̂/K', w ← w + v (0: plain FedAvg; post-processing, ε unchanged)"),
    "training.mode": ("`fedavg`, `prifedsync`", "`fedavg`: the FedAvg loop; `prifedsync`: personalised models and "
                                              "clients running noisy Adam with per-example clipping, record-level ε "
                                              "([model §9.4](model.md#sec-9-4); `training.lr` is Adam's base rate)"),
    # [training.prifedsync]
    "training.prifedsync.clip_norm": ("> 0", "C, each example's gradient clipped to ℓ2 norm ≤ C"),
    "training.prifedsync.noise_multiplier": ("> 0", "σ: noise N(0, (σC)² I) on each step's clipped sum (std σC/B on the mean)"),
    "training.prifedsync.beta1": ("[0, 1)", "Adam β₁"),
    "training.prifedsync.beta2": ("[0, 1)", "Adam β₂"),
    "training.prifedsync.adam_eps": ("> 0", "Adam ε̂ in the denominator"),
    "training.prifedsync.weight_decay": ("≥ 0", "L2 weight decay added to the noisy gradient (the source: 0.0005)"),
    "training.prifedsync.mix": ("[0, 1]", "λ: after a round a sampled client keeps (1 − λ)·its model + λ·the global model"),
    "training.prifedsync.client_test": ("≥ 1", "test examples per client (of the labels it holds) behind `prifedsync.csv`"),
    # [phy], shared by every scheme
    "phy.scheme": ("`floras`, `channel-inversion`, `ideal`, `central-gaussian`, `analog-gaussian`, `ddgauss`, `sqsgd`",
                   "the aggregation scheme (a registered scheme, `phy/schemes.py`)"),
    "phy.L": ("≥ 1", "chips per aggregated symbol (FLORAS: sequence length; Walsh–Hadamard needs a power of two)"),
    "phy.snr_db": ("finite", "SNR = P/σ² [dB] ([model §5](model.md#sec-5))"),
    "phy.normalization": ("`paper`, `clip`", "update normalization ([model §2](model.md#sec-2)); the private "
                                             "baselines and sqSGD need `clip`"),
    "phy.C": ("> 0", "norm bound of s_k [√W]; none = √(d·P)"),
    "phy.clip_norm": ("> 0", "R of the clip rule [model units]; required for `clip`"),
    "phy.power": ("> 0", "P, per-symbol average transmit power [W]; reference amplitude b = √P"),
    "phy.g_th": ("> 0", "truncation threshold on \\|h_k\\|² of channel inversion and the schemes on its uplink"),
    "phy.rho_rule": ("`threshold`, `min-admitted`", "ρ = g_th, or the smallest admitted \\|h_k\\|² "
                                                    "([model §6.2](model.md#sec-6-2))"),
    "phy.resource": ("`equal`, `source-literal`", "equal-resource convention ([model §5](model.md#sec-5))"),
    "phy.chunk_size": ("≥ 1", "entries of the d data slots processed at once (memory only; results unchanged)"),
    "phy.pathloss": ("`none`, `log-distance`, `umi`, `uma`, `rma`", "large-scale model of the cell ([model §5.1](model.md#sec-5-1)); `none`: no cell, every client at average gain 1"),
    "phy.cell_radius": ("> `cell_min_distance` (TR 38.901: ≤ 5 km)", "R [m], clients uniform in the annulus r₀ ≤ d ≤ R"),
    "phy.cell_min_distance": ("> 0 (TR 38.901: ≥ 10 m)", "r₀ [m], the annulus's inner radius"),
    "phy.redrop": ("true, false", "drop the clients anew every round (default: one drop per client id)"),
    "phy.carrier_ghz": ("> 0 (TR 38.901: 0.5–100, RMa ≤ 30)", "f_c [GHz] (log-distance: PL(d₀) only)"),
    "phy.bs_height": ("> 0 or none", "base-station height [m] (TR 38.901; none: 10 UMi, 25 UMa, 35 RMa)"),
    "phy.ut_height": ("> 0", "user height [m] (TR 38.901)"),
    "phy.pathloss_exponent": ("> 0", "n of the log-distance model"),
    "phy.shadowing_db": ("≥ 0 or none", "σ of the log-normal shadowing [dB]; none: the model's own (log-distance 0, TR 38.901 σ_SF)"),
    "phy.snr_reference": ("`cell-edge`, `median-distance`", "where `snr_db` holds for a full-power client without shadowing"),
    "phy.power_control": ("`full-power`, `pathloss-inversion`", "statistical power control; truncated channel inversion acts on top"),
    "phy.pc_target_db": ("finite", "β_target [dB relative to the reference gain] of path-loss inversion"),
    "phy.coherence_symbols": ("≥ 1 or none", "n_c, slots per coherence block of the small-scale fading; none: one block per update"),
    "phy.fading_correlation": ("`iid`, `jakes`, `jakes-exact`, `tdl`", "blocks i.i.d., Gauss–Markov with ρ = J₀(2π·doppler·n_c) "
                               "between consecutive blocks, the Clarke process with J₀(2π·doppler·n_c·Δ) at every lag Δ, "
                               "or OFDM subcarriers of a TR 38.901 TDL profile (frequency-selective)"),
    "phy.doppler": ("[0, 0.5]", "f_D·T_s, Doppler frequency times slot duration (`jakes`, `jakes-exact`; `tdl` with `tdl_time_blocks` > 1, T_s the OFDM symbol)"),
    "phy.tdl_model": ("`A`, `B`, `C`, `D`, `E`", "TR 38.901 TDL profile of the subcarriers (`fading_correlation = \"tdl\"`; A–C NLoS, D, E LoS with the profile's K-factor)"),
    "phy.delay_spread": ("(0, 10⁻⁵]", "DS [s] scaling the TDL profile's delays (`tdl`; TR 38.901 Table 7.7.3-1: 10–1 000 ns)"),
    "phy.subcarrier_spacing": ("(0, 10⁷]", "Δf [Hz] between the subcarriers that carry consecutive blocks (`tdl`)"),
    "phy.tdl_time_blocks": ("integer ≥ 1 (≤ 4 096)", "B_t consecutive blocks of n_c OFDM symbols on each subcarrier (`tdl`): the taps a Clarke "
                            "process in time with J₀(2π·doppler·n_c·Δ) between blocks Δ apart (Doppler within the update, "
                            "the LoS profiles' specular part rotating at `los_doppler`; [model §5.1](model.md#sec-5-1)); 1: constant over the subcarrier's symbols"),
    "phy.rician_k": ("≥ 0", "Rician K-factor κ (linear; 0: Rayleigh)"),
    "phy.los_doppler": ("[−1, 1] or none", "f_S/f_D, the line of sight's Doppler shift over the maximum Doppler (cos of its angle to the motion) "
                                           "with Rician gains (`rician_k` or TDL-D, -E) and blocks in time (`jakes`, `jakes-exact`, `tdl` with "
                                           "`tdl_time_blocks` > 1); none: TR 38.901 §7.7.2's 0.7 ([model §5.1](model.md#sec-5-1))"),
    "phy.timing_offset": ("[0, 1)", "τ_max: per-client fractional-chip offsets τ_k ~ U(0, τ_max) (FLORAS chip path, channel inversion, analog Gaussian with τ_max/L_eff < 1/2)"),
    "phy.rx_antennas": ("≥ 1", "N_r receive antennas at the base station ([model §5.2](model.md#sec-5-2)); N_r > 1: "
                                "FLORAS, channel inversion, analog Gaussian only; FLORAS's ε covers the maximum-ratio aggregate"),
    "phy.csi_error": ("≥ 0", "σ_e², relative channel-estimation error E|ĥ−h|²/E|h|² of the clients "
                             "([model §5.1](model.md#sec-5-1)); > 0: channel inversion, analog Gaussian and FLORAS "
                             "with csit = `phase` (one coherence block, rx_antennas = 1); N_r > 1: every antenna "
                             "estimated, the combiner the estimates'; 0: perfect CSI"),
    "phy.inversion_csit": ("`stale`, `per-block`, `per-subcarrier`", "with coherence blocks, channel inversion and analog Gaussian: "
                                                  "block 0's CSIT kept over the update, re-acquired with admission per block, or "
                                                  "(`tdl`) each subcarrier's first time block kept over its `tdl_time_blocks` "
                                                  "([model §5.1](model.md#sec-5-1)); analog Gaussian needs `per-block`; "
                                                  "with `csi_error` an error per measurement (channel inversion only)"),
    # [privacy]
    "privacy.delta": ("(0, 1)", "δ of the ε column"),
    "privacy.level": ("`client`, `item`", "unit of privacy"),
    "privacy.relation": ("`replace`, `add-remove`", "neighbouring relation"),
    "privacy.accountant": ("`rdp`, `rdp-generic`, `rdp-revealed`, `pld`, `gdp`, `fdp`, `tightest`",
                           "accountant of the ε column (docs/privacy.md)"),
    "privacy.target_epsilon": ("> 0 or `\"inf\"`", "calibrate the scheme's noise key to this ε at `delta` after "
                                                  "`run.rounds` ([model §10](model.md#sec-10)); none: the key is given"),
    "privacy.calibrate_key": ("a calibrated key of the scheme", "the key a `target_epsilon` calibrates when the scheme "
                                                                "has several (FLORAS: `C` at fixed N, or `N` at fixed C)"),
    "privacy.calibrated": ("written by the calibration", "record of the resolved target (value, achieved ε); "
                                                         "not set by hand"),
    # [run]
    "run.rounds": ("≥ 1", "T (`--rounds`)"),
    "run.seed": ("0 … 2⁶³−1", "master seed of every stream (`--seed`)"),
    "run.key_hex": ("≥ 32 hex digits", "FLORAS clients' shared key ([model §4](model.md#sec-4)); never written to disk"),
    "run.checkpoint_every": ("≥ 1", "rounds between checkpoints"),
    # [phy.floras]
    "phy.floras.N": ("≥ K (orthonormal sets: ≤ L)", "size of the sequence set; γ = N − K inactive sequences "
                                                   "([model §4](model.md#sec-4))"),
    "phy.floras.sequences": ("`walsh-hadamard`, `random-orthonormal`, `pn`", "sequence family (`pn` is not orthogonal: "
                                                                            "biased estimate, reported)"),
    "phy.floras.csit": ("`none`, `phase`", "effective gain Re(h_k) or \\|h_k\\| (phase pre-rotation)"),
    "phy.floras.path": ("`auto`, `fast`, `chip`, `sufficient`", "implementation; `auto` takes the sufficient-statistic "
                                                               "path of [model §6.1](model.md#sec-6-1) in learning runs"),
    "phy.floras.receiver": ("`plain`, `inverse-variance`, `capped`", "server weight w of the round's estimate "
                                                                     "([model §6.4](model.md#sec-6-4)); `plain`: w = 1"),
    "phy.floras.receiver_cap": ("> 0", "w_max of `capped`"),
    "phy.floras.receiver_scope": ("`round`, `block`", "with several pilots: one weight per round from the mean V̂, or each "
                                                      "pilot's entries weighted on its own V̂_m ([model §6.4](model.md#sec-6-4))"),
    "phy.floras.noise_estimate": ("`pilots`, `energy`", "V̂ from the pilot outputs, or ‖ŝ‖²/(b²d)"),
    "phy.floras.privacy_bound": ("`auto`, `idealised`, `law`", "the bound of the ε ([model §5.1](model.md#sec-5-1)): the idealised Cauchy "
                                 "release, or the PLD of the law given the pilots (the simulated link; N > K, no cell, "
                                 "one block and antenna, perfect CSI, `pld`/`tightest`); `auto`: the law with timing "
                                 "offsets and N > K, the idealised release otherwise"),
    "phy.floras.pilots": ("`per-block`, `stale`", "with coherence blocks: a reference slot per block ((d + B)·L channel uses), or one stale pilot per update"),
    # [phy.central-gaussian], [phy.analog-gaussian]
    "phy.central-gaussian.noise_multiplier": ("≥ 0, required", "z: total noise std z·S, S = 2C (`replace`) or C "
                                                               "(`add-remove`) ([model §9.1](model.md#sec-9-1))"),
    "phy.analog-gaussian.noise_multiplier": ("≥ 0, required", "z: total noise std z·S, S = 2C (`replace`) or C "
                                                              "(`add-remove`) ([model §9.1](model.md#sec-9-1))"),
    # [phy.ddgauss]
    "phy.ddgauss.bits": ("2 … 48", "B bits per coordinate (modulus 2^B) ([model §9.2](model.md#sec-9-2))"),
    "phy.ddgauss.grid": ("> 0", "rounding grid γ [model units]; none = from the bit budget"),
    "phy.ddgauss.local_std": ("≥ 0", "each client's discrete-Gaussian noise std σ [model units]"),
    "phy.ddgauss.beta": ("[0, 1)", "conditional-rounding failure bound β (default e^{−1/2}; 0 = unconditional rounding, Δ₂ = c/γ + √d)"),
    "phy.ddgauss.k_stddevs": ("> 0", "standard deviations of the modular sum kept inside the modulus"),
    "phy.ddgauss.dropout": ("[0, 1)", "fraction of the admitted clients whose noised shares never arrive (the server decodes the survivors' sum; the accountant counts only their noise)"),
    "phy.ddgauss.norm_bound": ("`general`, `optimistic`", "the sum's norm in the bit budget: n·c, or the source's optimistic √n·c"),
    # [phy.sqsgd]
    "phy.sqsgd.levels": ("≥ 2", "K_q quantization levels ([model §9.3](model.md#sec-9-3))"),
    "phy.sqsgd.ratio": ("(0, 1]", "subsampling ratio r (d̃ = ⌊r·d⌋ ≥ 1)"),
    "phy.sqsgd.epsilon0": ("> 0", "per-round LDP budget ε₀"),
    "phy.sqsgd.kappa": ("integer in [−n, n − 1]", "cap κ (n the padded rotation length); none = the κ maximizing m"),
    "phy.sqsgd.estimator": ("`unbiased`, `sparse`", "server estimator (`unbiased`: scaled by d/d̃; `sparse`: the source's)"),
    "phy.sqsgd.norm_bound": ("`fixed`, `adaptive`", "U = C, or the adaptive bound from each client's ScalarDP norm report ([docs/sqsgd.md](sqsgd.md))"),
    "phy.sqsgd.epsilon_s": ("> 0", "ScalarDP budget of the norm report per round (adaptive bound only; added to ε₀ by the accountant)"),
    "phy.sqsgd.norm_levels": ("integer ≥ 1", "k, steps of [0, C] of the ScalarDP report; floor of the bound C/k"),
    "phy.sqsgd.accumulation": ("true, false", "local accumulation with momentum correction (needs `estimator = \"sparse\"` and client ids)"),
    "phy.sqsgd.momentum": ("[0, 1)", "β of the accumulation's momentum correction"),
    "phy.sqsgd.mechanism": ("`privquant`, `pm`", "the client's privatizer: sqSGD's PrivQuant, or the piecewise mechanism baseline"),
}
