"""f-differential privacy: trade-off functions, their calculus, the federated notions and the fdp accountant
(model §9.4; Zheng, Chen, Long & Su, *Federated f-Differential Privacy*, AISTATS 2021; Dong, Roth & Su 2019, arXiv:1905.02383).

numpy/scipy only: nothing here imports phy/ or TensorFlow.

- :mod:`.tradeoff`: f as objects (Id, G_μ, f_{ε,δ}, piecewise linear on an α-grid, f_p, f⁻¹,
  min{f, g}**, C_p) with their exact (ε, δ) curves δ(ε) = 1 + f*(−e^ε);
- :mod:`.lossdist`: privacy-loss distributions of f on a loss grid (pessimistic) and their convolution;
- :mod:`.compose`: the tensor product ⊗ (closed form for Gaussians, numerical otherwise);
- :mod:`.from_rdp`: the f implied by an RDP curve;
- :mod:`.federated`: weak / strong federated f-DP and the text's three-step analysis;
- :mod:`.accounting`: privacy event → trade-off function of a run (the ``fdp`` accountant).
"""

from privacy.fdp.compose import Composition, tensor, tensor_power
from privacy.fdp.tradeoff import (EpsDelta, Gaussian, Identity, Inverse, Mixture, PiecewiseLinear, Symmetrised,
                                  TradeOff, mixture, subsample)

__all__ = ["TradeOff", "Identity", "Gaussian", "EpsDelta", "PiecewiseLinear", "Mixture", "Inverse", "Symmetrised",
           "Composition", "mixture", "subsample", "tensor", "tensor_power"]
