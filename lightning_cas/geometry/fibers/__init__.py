"""Fibers of the parametrization: the Macaulay2 decomposition and the verdict (fiber), its exact checks at a
point (points), and the tangent ranks of a network of blocks (network)."""
