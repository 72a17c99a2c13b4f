"""The physical layer of the simulator (model §1–§7); TensorFlow is imported inside the functions that need it."""

from .tf_runtime import set_tensorflow_defaults

set_tensorflow_defaults()  # before any TensorFlow allocation in this process (phy/tf_runtime.py)
