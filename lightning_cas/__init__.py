"""lightning_cas: the function spaces of lightning self-attention networks, computed and checked.

>>> from lightning_cas import Architecture, dimension
>>> dimension(Architecture((2, 2), (1,), tokens=2)).dimension
6
"""

from .api import dimension, predict, verify
from .architecture import Architecture
from .errors import LightningError
from .fibers import FiberResult, fiber
from .claims import ClaimsResult, check_claims
from .geometry import ImplicitResult, PointSingularityResult, SingularLocusResult, implicit, is_singular, singular_locus
from .real_boundary import BoundaryResult, boundary
from .results import DimensionResult, VerifyResult

__all__ = ["Architecture", "BoundaryResult", "ClaimsResult", "DimensionResult", "FiberResult", "ImplicitResult",
           "LightningError", "PointSingularityResult", "SingularLocusResult", "VerifyResult", "boundary",
           "check_claims", "dimension", "fiber", "implicit", "is_singular", "predict", "singular_locus", "verify"]
__version__ = "0.1.0"
