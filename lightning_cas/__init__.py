"""lightning_cas: the function spaces of lightning self-attention networks, computed and checked.

>>> from lightning_cas import Architecture, dimension
>>> dimension(Architecture((2, 2), (1,), tokens=2)).dimension
6

Names are imported on first use, so that ``lightning-cas dim`` does not pay for sympy or the
geometry modules it never touches.
"""

from __future__ import annotations

import importlib

__version__ = "0.3.0"

# public name -> module that defines it
_EXPORTS = {
    "Architecture": "lightning_cas.core.architecture",
    "LightningError": "lightning_cas.errors",
    "dimension": "lightning_cas.api",
    "predict": "lightning_cas.api",
    "verify": "lightning_cas.api",
    "sweep": "lightning_cas.batch.sweep",
    "DimensionResult": "lightning_cas.results.dimension",
    "VerifyResult": "lightning_cas.results.verify",
    "Provenance": "lightning_cas.results.contract",
    "load_result": "lightning_cas.api",
    "TheoryReport": "lightning_cas.results.theory",
    "Options": "lightning_cas.options",
    "M2Session": "lightning_cas.macaulay2.runner",
    "Macaulay2": "lightning_cas.macaulay2.connection",
    "TimeLimitError": "lightning_cas.errors",
    "InputError": "lightning_cas.errors",
    "fiber": "lightning_cas.geometry.fibers.fiber",
    "FiberResult": "lightning_cas.results.fibers",
    "implicit": "lightning_cas.geometry.one_layer.implicit",
    "ImplicitResult": "lightning_cas.results.implicit",
    "singular_locus": "lightning_cas.geometry.one_layer.singular",
    "SingularLocusResult": "lightning_cas.results.singular",
    "is_singular": "lightning_cas.geometry.one_layer.pointwise",
    "PointSingularityResult": "lightning_cas.results.singular",
    "boundary": "lightning_cas.geometry.one_layer.boundary",
    "BoundaryResult": "lightning_cas.results.boundary",
    "check_claims": "lightning_cas.geometry.one_layer.claims",
    "ClaimsResult": "lightning_cas.results.claims",
    "multihead_bound": "lightning_cas.core.multihead",
    "span_dimension": "lightning_cas.core.multihead",
    "head_mixing_bound": "lightning_cas.core.multihead",
    "execute_notebook": "lightning_cas.batch.notebook",
    "write_notebook": "lightning_cas.batch.notebook",
    "NotebookRun": "lightning_cas.batch.notebook",
    "Network": "lightning_cas.core.network",
    "Attention": "lightning_cas.core.network",
    "MLP": "lightning_cas.core.network",
    "Linear": "lightning_cas.core.network",
    "Power": "lightning_cas.core.network",
    "Activation": "lightning_cas.core.network",
    "LayerNorm": "lightning_cas.core.network",
    "RMSNorm": "lightning_cas.core.network",
    "load_network": "lightning_cas.system.networks",
    "degree": "lightning_cas.geometry.degree.m2",
    "ed_degree": "lightning_cas.geometry.degree.m2",
    "DegreeResult": "lightning_cas.results.degrees",
    "EDDegreeResult": "lightning_cas.results.degrees",
    "learning_coefficient": "lightning_cas.geometry.learning.bracket",
    "LearningCoefficientResult": "lightning_cas.results.learning",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'lightning_cas' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
