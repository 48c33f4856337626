"""The local learning coefficient at given weights: the bracket of proved bounds (bracket), its closed forms
(closed_forms) and the data's Gram check (data)."""
