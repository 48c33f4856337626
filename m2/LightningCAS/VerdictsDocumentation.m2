doc ///
    Key
        pointVerdict
        (pointVerdict, ImplicitModel, List, List, List)
        [pointVerdict, Directions]
    Headline
        the data of a real verdict at a rational weight point
    Usage
        pointVerdict(M, Q, K, V)
    Inputs
        M:ImplicitModel
            of the full output
        Q:List
            the rows of $Q$ ($a \times d$), rationals
        K:List
            the rows of $K$ ($a \times d$)
        V:List
            the rows of $V$ ($d' \times d$)
        Directions => ZZ
            random kernel directions tried per critical preimage and pair of weight blocks
            (default 2)
    Outputs
        :HashTable
            with string keys {\tt "vertex"} (whether $\phi_W = 0$; then nothing else) and
            otherwise {\tt "tangent_rank"} and {\tt "codimension"} ($\phi_W$ is smooth when they
            agree), {\tt "rational_preimages"}, {\tt "regular_preimages"},
            {\tt "critical_preimages"}, {\tt "fiber_degree"} (@TO null@ for a positive-dimensional
            fiber), {\tt "fiber_off_chart"} and {\tt "witnesses"}
    Description
        Text
            The fiber of $p = \phi_W$ is taken in $(V, A)$ with rank $A \le a$, one point per
            scaling orbit. $p$ is an interior point of the real image when it is smooth with a
            regular real preimage, or when the whole fiber consists of rational regular points
            (every branch is then covered). For a boundary point, $\phi$ is bilinear in two
            blocks of weights, so for $\delta$ in the kernel of that partial differential at a
            critical preimage, $p - s \phi_2(\delta)$ is a real point of the variety; each witness
            records the blocks, $\delta$, the preimage and the eliminant $f(s, t)$ of its fiber
            ({\tt "variable"} "t^2" when $f$ is written in $u = t^2$). If $f(s, \cdot)$ has no real
            root for small $s > 0$ (a Sturm count, left to the caller), $p$ is a limit of points
            outside the real image.
        Example
            setRandomSeed 0;
            r = pointVerdict(implicitModel({2,1}, {1}, 2), {{1,2}}, {{1,0}}, {{1,1}});
            (r#"tangent_rank", r#"codimension", r#"regular_preimages")
    SeeAlso
        criticalLocus
///

doc ///
    Key
        Directions
    Headline
        kernel directions tried per witness curve
    Description
        Text
            An option of @TO pointVerdict@ (default 2).
        Example
            options pointVerdict
///
