"""Federated submodel learning with private information retrieval (Kim & Lee; model §9.6).

Hides *which* submodel (row) a client trains from each of N non-colluding databases; it has no ε
and does not protect the update values. Pure numpy, no TensorFlow. Modules: :mod:`.field`
(F_q arithmetic), :mod:`.mds` (exclusive-data code), :mod:`.sun_jafar` (capacity-achieving PIR),
:mod:`.submodel` (storage, upload, update, simulation), :mod:`.costs` (symbols, channel uses,
multiplications), :mod:`.verify` (exhaustive privacy check).
"""
