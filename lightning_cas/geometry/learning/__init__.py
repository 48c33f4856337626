"""The local learning coefficient at given weights: the bracket of proved bounds (bracket), its closed forms
(closed_forms), the Newton polyhedron of the fiber ideal (newton) and the data's Gram check (data)."""
