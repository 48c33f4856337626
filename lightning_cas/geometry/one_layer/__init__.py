"""One attention layer: the implicit ideal (implicit), its singular locus on G-orbit strata (singular, strata),
questions at a point (pointwise, exact_values), the real boundary with certificates (boundary, certificates)
and the paper's claims checked one by one (claims)."""
