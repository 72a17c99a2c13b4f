"""The learning side of the simulator (model §1, §2, §8).

:mod:`fl.data` (Fashion-MNIST / MNIST IDX files, scikit-learn digits, a synthetic task),
:mod:`fl.partition` (IID, label shards, Dirichlet; equal client sizes), :mod:`fl.fedprox_synthetic`
(FedProx's Synthetic(α, β) population, clients generated on demand, model §11), :mod:`fl.clients`
(where the trainer finds a chunk's data: stacked rows or generated clients), :mod:`fl.models`
(MLP and CNN with a forward pass batched over clients), :mod:`fl.training` (the K scheduled
clients' local SGD as batched TensorFlow computations, in chunks; evaluation), :mod:`fl.federated` (client
sampling and the FedAvg step over any :class:`phy.aggregation.Aggregator`).

``fl`` uses the physical layer only through :mod:`phy.aggregation` and :mod:`phy.randomness`;
TensorFlow is imported inside the functions that need it, after :mod:`phy.tf_runtime` has set its process-wide
defaults (the host-memory allocator).
"""

from phy.tf_runtime import set_tensorflow_defaults

set_tensorflow_defaults()  # before any TensorFlow allocation in this process (phy/tf_runtime.py)
