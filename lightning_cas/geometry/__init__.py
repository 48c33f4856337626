"""Questions about the variety beyond its dimension: fibers (fibers), and for one layer the implicit
ideal (implicit), the singular locus (singular, on the slices of strata), questions at a point
(pointwise), the real boundary with certificates (boundary, certificates), the paper's claims checked
one by one (claims); the typed results (records) and their Macaulay2 and LaTeX forms (formats)."""
