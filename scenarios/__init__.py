"""Scenario files, runs, sweeps and the command line: the layer that wires :mod:`phy`, :mod:`fl` and :mod:`privacy`."""

from phy.tf_runtime import set_tensorflow_defaults

set_tensorflow_defaults()  # before any TensorFlow allocation in this process, a dask worker's too (phy/tf_runtime.py)
