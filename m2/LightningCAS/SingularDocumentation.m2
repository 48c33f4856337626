doc ///
    Key
        weightStrata
        (weightStrata, ImplicitModel)
    Headline
        the closures of the images of the special weight strata
    Usage
        weightStrata M
    Inputs
        M:ImplicitModel
    Outputs
        :HashTable
            from names to ideals in the coordinates of M: {\tt "rank11"} (rank $V$ = rank $A$ = 1),
            {\tt "parallel"} (also rowspace $V$ = colspace $A$) and, when $1 < a < d$,
            {\tt "rankA"} (rank $A < a$)
    Description
        Text
            Each closure is the image of a parametrization by rank factorizations ($V = c u^T$,
            $A = g h^T$; $V = c u^T$, $A = u h^T$; $A = G^T H$ with $a - 1$ rows). These are the
            sets the singular and critical pieces are matched to.
        Example
            applyValues(weightStrata implicitModel({2,1}, {1}, 2), dim)
    SeeAlso
        singularStrata
        criticalLocus
///

doc ///
    Key
        (singularLocus, ImplicitModel)
    Headline
        the singular locus of a one-layer neurovariety by the Jacobian criterion
    Usage
        singularLocus M
    Inputs
        M:ImplicitModel
    Outputs
        :Ideal
            $I$ plus the minors of size codim $I$ of the Jacobian matrix of $I$
    Description
        Text
            All minors when there are at most 20000 of them; otherwise the sum of the minors of
            dim $I$ + 1 random combinations of the generators, which equals the singular locus
            with high probability. Feasible for the smallest cases; @TO singularStrata@ reaches
            further.
        Example
            M = implicitModel({2,1}, {1}, 2);
            radical singularLocus M
    SeeAlso
        singularRecord
        singularStrata
///

doc ///
    Key
        singularRecord
        (singularRecord, ImplicitModel)
    Headline
        the singular locus by the whole ideal, decomposed, as a record
    Usage
        singularRecord M
    Inputs
        M:ImplicitModel
    Outputs
        :HashTable
            with string keys {\tt "singular"} (an @TO idealRecord@ of @TO (singularLocus, ImplicitModel)@),
            {\tt "randomized"} (whether random combinations were used), {\tt "components"} (one
            @TO idealRecord@ per minimal prime, with the key {\tt "strata"}: the names of the
            @TO weightStrata@ containing it)
    Description
        Example
            (singularRecord implicitModel({2,1}, {1}, 2))#"components"
///

doc ///
    Key
        criticalImage
        (criticalImage, ImplicitModel)
    Headline
        the image of the critical locus of the parametrization, by elimination
    Usage
        criticalImage M
    Inputs
        M:ImplicitModel
    Outputs
        :Ideal
            the kernel of the coordinate map on the weights where the differential has rank below
            the dimension (not necessarily radical)
    Description
        Text
            Feasible for the smallest cases only; @TO criticalLocus@ computes the same set on
            orbit slices.
        Example
            M = implicitModel({2,1}, {1}, 2);
            dim criticalImage M
    SeeAlso
        criticalLocus
///
