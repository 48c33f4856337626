doc ///
    Key
        singularStrata
        (singularStrata, ImplicitModel)
        [singularStrata, MinorBudget]
        [singularStrata, SamplesPerPiece]
    Headline
        the singular locus of a one-layer neurovariety on slices of the group orbits
    Usage
        singularStrata M
    Inputs
        M:ImplicitModel
        MinorBudget => ZZ
            the most minors formed at once (default 3000000); a piece needing more is reported
            unresolved
        SamplesPerPiece => ZZ
            random rational weight points per piece with linear equations (default 1)
    Outputs
        :HashTable
            with string keys {\tt "pieces"}, {\tt "unresolved"}, {\tt "singular"} (an
            @TO idealRecord@, or @TO null@ when a piece is unresolved or matches no stratum) and
            {\tt "factor_route"}; the names in {\tt "matches"} are those of @TO weightStrata@
    Description
        Text
            $G = GL(d') \times GL(d)$ acts by $(V, A) \mapsto (h V g, g^T A g)$ and $\phi$ is
            equivariant, so the singular locus is $G$-stable, and every point of the
            neurovariety is in the orbit of $\phi(V_r, A)$ with $V_r = [I_r\ 0; 0\ 0]$. On each
            slice a stable piece $P$ is singular when the Jacobian of $I$ has generic rank below
            the codimension on $P$; a smooth piece with a dense orbit meets the singular locus only
            where the orbit dimension drops, and a smooth piece without one only in the minors of
            the Jacobian; those sets are examined in turn. Every piece records {\tt "rank_V"},
            {\tt "jacobian_rank"}, {\tt "codimension"}, {\tt "image_dimension"}, {\tt "rank_A"},
            {\tt "colspace_A_in_rowspace_V"}, {\tt "matches"} (the stratum whose closure it is, or
            {\tt "none"}), {\tt "generators"} (in the slice coordinates) and {\tt "points"} (weights
            $\{Q, K, V\}$ on it). The singular locus is the intersection of the matched strata
            closures, or the vertex. With $d' = a = 1$ the test runs on the factor
            $S = sym(v \otimes k)$ of $\phi = S \otimes q$ ({\tt "factor_route"}).
        Example
            setRandomSeed 0;
            S = singularStrata implicitModel({2,2}, {1}, 2);
            apply(S#"pieces", p -> (p#"rank_V", p#"matches", p#"image_dimension"))
            (S#"singular")#"dimension"
    SeeAlso
        (singularLocus, ImplicitModel)
        weightStrata
///

doc ///
    Key
        criticalLocus
        (criticalLocus, ImplicitModel)
        [criticalLocus, MinorBudget]
        [criticalLocus, SamplesPerPiece]
    Headline
        the critical locus of the parametrization on slices of the group orbits, and its image
    Usage
        criticalLocus M
    Inputs
        M:ImplicitModel
        MinorBudget => ZZ
            the most minors formed at once (default 3000000)
        SamplesPerPiece => ZZ
            random rational weight points per piece with linear equations (default 1)
    Outputs
        :HashTable
            with string keys {\tt "pieces"} (as in @TO singularStrata@, without the Jacobian
            keys), {\tt "unresolved"}, {\tt "critical_image"} (an @TO idealRecord@ of the union
            of the matched strata closures, or @TO null@), {\tt "base_locus_V_or_A"} (whether
            $\phi$ vanishes only where $V = 0$ or $A = 0$, which makes the image closed)
    Description
        Text
            The rank of the differential is $G$-invariant, so the critical locus meets every orbit
            in a slice point, and the same slices as in @TO singularStrata@ apply. The
            parametrization is $(V, A)$ when $a \ge d$ (every real $A$ is $K^T Q$, so the real image
            is the same, with fewer critical points) and $(Q, K, V)$ otherwise.
        Example
            setRandomSeed 0;
            C = criticalLocus implicitModel({2,1}, {1}, 2);
            apply(C#"pieces", p -> p#"matches")
            (C#"critical_image")#"dimension"
    SeeAlso
        criticalImage
        pointVerdict
///

doc ///
    Key
        MinorBudget
    Headline
        the most minors the slice computations form at once
    Description
        Text
            An option of @TO singularStrata@ and @TO criticalLocus@ (default 3000000). Pieces that
            need more are listed under {\tt "unresolved"}, and no ideal is assembled.
        Example
            S = singularStrata(implicitModel({2,2}, {1}, 2), MinorBudget => 1);
            apply(S#"unresolved", u -> u#"reason")
///

doc ///
    Key
        SamplesPerPiece
    Headline
        random weight points per slice piece
    Description
        Text
            An option of @TO singularStrata@ and @TO criticalLocus@ (default 1): rational weights
            on each piece with linear equations, moved off the slice by a random group element.
        Example
            setRandomSeed 0;
            C = criticalLocus(implicitModel({2,1}, {1}, 2), SamplesPerPiece => 2);
            #((first C#"pieces")#"points")
///
