"""The decision boundary of a polynomial network and the robustness radius of an input: Macaulay2 (m2,
m2_radius) and msolve (system, msolve, radius_exact, radius_bounds), certified monodromy for power sums (certified,
radius_certified)."""
