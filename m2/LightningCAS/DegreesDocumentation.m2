doc ///
    Key
        degreeRecord
        (degreeRecord, NeuralNetwork)
        (degreeRecord, List, List, ZZ)
        [degreeRecord, Strategy]
        [degreeRecord, Columns]
        [degreeRecord, CoefficientRing]
    Headline
        the degree of a neurovariety, exactly or from a pseudo-witness set
    Usage
        degreeRecord N
        degreeRecord(widths, attention, tokens)
    Inputs
        N:NeuralNetwork
        Strategy=>String
            {\tt "Implicit"} (the degree of the implicit ideal) or {\tt "Numerical"}
            (NumericalImplicitization's pseudoWitnessSet with the trace test)
        Columns=>ZZ
            how many output columns give the coordinates
        CoefficientRing=>Ring
            of the implicit ideal (default QQ)
    Outputs
        :HashTable
            with keys {\tt "degree"}, {\tt "dimension"}, {\tt "coordinates"} (the dimension of the
            coefficient span) and, numerically, {\tt "trace"} (the trace test's residual, as a string)
            and {\tt "trace_test_passed"}
    Description
        Text
            The coordinates are a basis of the linear span of the coefficients of the output columns
            (as polynomials in the tokens): an injective linear image of the neurovariety, so the degree
            is the neurovariety's. A numerical count whose trace test failed is only a lower bound.
        Example
            degreeRecord({2,1}, {1}, 2)
    SeeAlso
        neurovarietyDegree
        edDegreeRecord
///

doc ///
    Key
        neurovarietyDegree
        (neurovarietyDegree, NeuralNetwork)
        (neurovarietyDegree, List, List, ZZ)
        [neurovarietyDegree, Strategy]
        [neurovarietyDegree, Columns]
        [neurovarietyDegree, CoefficientRing]
    Headline
        the degree of a neurovariety
    Usage
        neurovarietyDegree N
    Inputs
        N:NeuralNetwork
        Strategy=>String
            as in @TO degreeRecord@
        Columns=>ZZ
        CoefficientRing=>Ring
    Outputs
        :ZZ
    Description
        Text
            One layer with $d = 2$, $d' = 1$, $a = 1$ is the cone over the Segre variety
            $\PP^1 \times \PP^2$, of degree 3; with $a = 2$ the degree is 4.
        Example
            neurovarietyDegree({2,1}, {1}, 2)
            neurovarietyDegree({2,1}, {2}, 2)
    SeeAlso
        degreeRecord
///

doc ///
    Key
        lagrangeIdeal
        (lagrangeIdeal, Ideal, Matrix, Matrix)
    Headline
        the critical ideal of a quadratic distance on the smooth locus of a variety
    Usage
        lagrangeIdeal(I, G, u)
    Inputs
        I:Ideal
            of a variety in $n$ variables
        G:Matrix
            $n \times n$, the symmetric form $q(y) = y^T G y$
        u:Matrix
            $n \times 1$, the data point
    Outputs
        :Ideal
            $I + $ minors$(c+1, [Jac(I) \mid G(y - u)])$ saturated by the singular locus
            $I + $ minors$(c, Jac(I))$, $c$ the codimension; for generic $u$ its degree is the ED degree
    Description
        Example
            kk = ZZ/32003; S = kk[a..f];
            I = minors(2, genericMatrix(S, 2, 3));
            degree lagrangeIdeal(I, id_(kk^6), random(kk^6, kk^1))
    SeeAlso
        edDegree
///

doc ///
    Key
        edDegreeRecord
        (edDegreeRecord, NeuralNetwork)
        (edDegreeRecord, List, List, ZZ)
        [edDegreeRecord, Metric]
        [edDegreeRecord, Strategy]
        [edDegreeRecord, CoefficientRing]
        [edDegreeRecord, Columns]
        [edDegreeRecord, MonodromyRepeats]
        [edDegreeRecord, TargetCount]
    Headline
        the Euclidean-distance degree of a neurovariety
    Usage
        edDegreeRecord N
    Inputs
        N:NeuralNetwork
        Metric=>Thing
            {\tt "generic"} (a random form $M^T M$: the invariant), {\tt "standard"} (the Euclidean
            form in the coordinates of the coefficient span) or a list of input token matrices
            (each a list of $d_0$ rows of $t$ numbers): the data form $\sum_n |f(X_n)|^2$
        Strategy=>String
            {\tt "Lagrange"} (the degree of @TO lagrangeIdeal@ over ZZ/p at a random data point) or
            {\tt "Monodromy"} (critical points of a gauge-fixed parametrization by MonodromySolver:
            found and stable, a lower bound)
        CoefficientRing=>Ring
            ZZ/p for the Lagrange strategy (default ZZ/32003)
        Columns=>ZZ
        MonodromyRepeats=>ZZ
            monodromy stops after this many loops without a new solution
        TargetCount=>ZZ
            when positive, the number of critical points on the gauge slice an exact count gave
            (lightning-cas passes msolve's): monodromy stops as soon as it has found that many
    Outputs
        :HashTable
            with keys {\tt "ed_degree"}, {\tt "dimension"} and {\tt "coordinates"} of the variety the
            count is taken on; for the data form also {\tt "span"}, the dimension of the coefficient
            span (larger than the coordinates when the data form is degenerate: the count is then that
            of the projection of the neurovariety by the evaluation map)
    Description
        Example
            (edDegreeRecord({2,1}, {1}, 2))#"ed_degree"
            (edDegreeRecord({2,1}, {1}, 2, Metric => {{{1,2},{3,-1}}}))#"ed_degree"
    SeeAlso
        edDegree
        lagrangeIdeal
///

doc ///
    Key
        edDegree
        (edDegree, NeuralNetwork)
        (edDegree, List, List, ZZ)
        (edDegree, Ideal)
        [edDegree, Metric]
        [edDegree, Strategy]
        [edDegree, CoefficientRing]
        [edDegree, Columns]
        [edDegree, MonodromyRepeats]
        [edDegree, TargetCount]
    Headline
        the Euclidean-distance degree of a neurovariety or of any variety
    Usage
        edDegree N
        edDegree I
    Inputs
        N:NeuralNetwork
        I:Ideal
            over ZZ/p
        Metric=>Thing
            as in @TO edDegreeRecord@ ({\tt "generic"} or {\tt "standard"} for an ideal)
        Strategy=>String
        CoefficientRing=>Ring
        Columns=>ZZ
        MonodromyRepeats=>ZZ
    Outputs
        :ZZ
    Description
        Text
            The rank-one $2 \times 3$ matrices have ED degree 2 for the Frobenius form (Eckart-Young)
            and 10 for a generic form; the one-layer neurovariety with $d = 2$, $d' = 1$, $a = 1$ is the
            same variety in other coordinates: generic ED degree 10.
        Example
            S = ZZ/32003[a..f]; I = minors(2, genericMatrix(S, 2, 3));
            (edDegree(I, Metric => "standard"), edDegree I)
            edDegree({2,1}, {1}, 2)
    SeeAlso
        edDegreeRecord
///

doc ///
    Key
        Metric
    Headline
        the quadratic form of an ED degree
    SeeAlso
        edDegreeRecord
///

doc ///
    Key
        MonodromyRepeats
    Headline
        loops without a new solution before monodromy stops
    SeeAlso
        edDegreeRecord
///

doc ///
    Key
        TargetCount
    Headline
        the number of critical points on the slice an exact count gave: monodromy stops there
    SeeAlso
        edDegreeRecord
///
