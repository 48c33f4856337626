"""The degree and the Euclidean-distance degree of a neurovariety: Macaulay2 (m2, m2_records), msolve
(msolve, msolve_degree, forms), monodromy stopped at msolve's count (monodromy) and the closed forms."""
