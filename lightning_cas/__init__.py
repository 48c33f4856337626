"""lightning_cas: the function spaces of lightning self-attention networks, computed and checked.

>>> from lightning_cas import Architecture, dimension
>>> dimension(Architecture((2, 2), (1,), tokens=2)).dimension
6
"""

from .api import dimension, predict, verify
from .architecture import Architecture
from .errors import LightningError
from .results import DimensionResult, VerifyResult

__all__ = ["Architecture", "DimensionResult", "LightningError", "VerifyResult", "dimension", "predict", "verify"]
__version__ = "0.1.0"
