doc ///
    Key
        ImplicitModel
        (net, ImplicitModel)
        (toString, ImplicitModel)
        (isWellDefined, ImplicitModel)
    Headline
        the coordinates of a one-layer neurovariety, ready for implicitization
    Description
        Text
            Made by @TO implicitModel@. A hash table with string keys; the ones meant for users are
            {\tt "widths"}, {\tt "attention"}, {\tt "tokens"}, {\tt "ring"} (the ring of the
            coordinates $y_1, \ldots, y_n$), {\tt "coordinates"} (the $y_i$ as polynomials in the
            parameters), {\tt "labels"} (per $y_i$: the output row, then the exponents of its token
            monomial), {\tt "parametrization"} (0: $(Q, K, V)$; 1: $(V, A)$ with $A$ generic; 2:
            $(V, A)$ with rank $A \le a$; 3: $(V, Z)$ with $Z$ symmetric of rank $\le 2a$),
            {\tt "parameters"} and {\tt "ambient"} ($n$); {\tt "weight ring"} and
            {\tt "weight coordinates"} are the coordinates as polynomials in the weights the
            differential is taken in ($(Q, K, V)$, or $(V, A)$ when $a \ge d$). The implicit ideal and
            the other results are computed once and kept in its cache, so the functions taking a
            model share them. The coordinates at other weights are @TO implicitCoordinates@.
            {\tt isWellDefined} checks that the parts of a model fit together.
        Example
            M = implicitModel({2,1}, {1}, 2)
            M#"coordinates"
            isWellDefined M
    SeeAlso
        implicitModel
///

doc ///
    Key
        implicitModel
        (implicitModel, List, List, ZZ)
        [implicitModel, OneCoordinate]
        [implicitModel, Reparametrize]
    Headline
        the coordinates of a one-layer neurovariety
    Usage
        M = implicitModel(widths, attention, tokens)
    Inputs
        widths:List
            $\{d, d'\}$: one layer
        attention:List
            $\{a\}$
        tokens:ZZ
            the number $t$ of tokens
        OneCoordinate => Boolean
            use the first output row only (default false): a projection of the neurovariety, much
            smaller; the singular locus and the verdicts need the full output
        Reparametrize => Boolean
            eliminate from $(V, A = K^T Q)$ (or $(V, Z)$, $Z$ the symmetric part of $A$, for one
            token) instead of the weights $(Q, K, V)$ (default true); both give the same ideal,
            the reparametrization much faster
    Outputs
        M:ImplicitModel
    Description
        Text
            The layer is $\phi_W(X) = V X (X^T K^T Q X)$. Its first output token is a vector of
            cubic forms in the tokens; their coefficients are polynomials in the weights, and a
            basis $y_1, \ldots, y_n$ of the linear span of these coefficients is the set of
            coordinates of the model (an injective linear image of the neurovariety, so its
            dimension, degree and singularities are those of the neurovariety).

            The function depends on $W$ only through $V$ and $A = K^T Q$. When $a \ge d$, $A$ is a
            generic matrix; when $a < d$ it is a matrix of rank at most $a$, and the ideal is
            eliminated modulo the $(a+1)$-minors of $A$. Functions that need the differential of
            $W \mapsto \phi_W$ (critical points, verdicts, the numerical degree) keep $(Q, K, V)$
            when $a < d$.
        Example
            M = implicitModel({2,2}, {2}, 2)
            M#"parametrization"
            #(M#"coordinates")
    SeeAlso
        implicitIdeal
        implicitRecord
///

doc ///
    Key
        implicitIdeal
        (implicitIdeal, ImplicitModel)
        (implicitIdeal, List, List, ZZ)
        [implicitIdeal, OneCoordinate]
        [implicitIdeal, Reparametrize]
    Headline
        the implicit ideal of a one-layer neurovariety
    Usage
        implicitIdeal M
        implicitIdeal(widths, attention, tokens)
    Inputs
        M:ImplicitModel
        widths:List
        attention:List
        tokens:ZZ
        OneCoordinate => Boolean
            for the second form, passed to @TO implicitModel@ (default @TO null@, meaning false); a
            model already has it, so the first form refuses the option
        Reparametrize => Boolean
            for the second form, passed to @TO implicitModel@ (default @TO null@, meaning true)
    Outputs
        :Ideal
            in the coordinates $y_i$ of the model, minimally generated: the kernel of the
            coefficient ring map, exact over @TO QQ@
    Description
        Text
            The kernel is taken with the $y_i$ graded by the degree of their images, so it is a
            graded computation; the ideal is returned in the standard-graded ring, for
            @TO dim@ and @TO degree@. The result is cached in the model.
        Example
            I = implicitIdeal({2,1}, {1}, 2)
            (dim I, degree I)
    SeeAlso
        implicitRecord
        neurovarietyDimension
///

doc ///
    Key
        implicitRecord
        (implicitRecord, ImplicitModel)
        [implicitRecord, ComputeIdeal]
        [implicitRecord, Generators]
        [implicitRecord, NumericalDegreeRuns]
    Headline
        the implicit ideal and its data, as a record
    Usage
        implicitRecord M
    Inputs
        M:ImplicitModel
        ComputeIdeal => Boolean
            whether to compute the implicit ideal at all (default true); false with
            NumericalDegreeRuns > 0 gives the numerical degree of cases elimination cannot reach
        Generators => Boolean
            whether the record carries the generators of the ideal (default true)
        NumericalDegreeRuns => ZZ
            how many runs of @TO numericalDegree@ to add (default 0)
    Outputs
        :HashTable
            with string keys {\tt "parametrization"}, {\tt "parameters"}, {\tt "coefficients"}
            (the nonzero coefficients), {\tt "linear_span"} (the number of coordinates),
            {\tt "labels"}, {\tt "coordinates"}, {\tt "numerical_degree_runs"},
            {\tt "m2_version"}, {\tt "package_version"}, and with the ideal {\tt "dimension"},
            {\tt "codimension"}, {\tt "degree"}, {\tt "generator_degrees"},
            {\tt "implicit_cpu_ms"} and {\tt "generators"}
    Description
        Example
            r = implicitRecord implicitModel({2,1}, {1}, 2);
            (r#"dimension", r#"degree", r#"generator_degrees")
    SeeAlso
        printRecord
///

doc ///
    Key
        numericalDegree
        (numericalDegree, ImplicitModel, ZZ)
    Headline
        the degree of the neurovariety by monodromy, several times
    Usage
        numericalDegree(M, runs)
    Inputs
        M:ImplicitModel
        runs:ZZ
    Outputs
        :List
            of hash tables, one per run, with keys {\tt "degree"} (@TO null@ when the run failed)
            and {\tt "cpu_ms"}
    Description
        Text
            Each run is {\tt numericalImageDegree} of the package NumericalImplicitization on the
            parametrization by the weights, which is loaded on first use. A single run can miss
            sheets, so the caller should take the consensus of several; the result is numeric,
            not exact.
        Example
            setRandomSeed 0;
            apply(numericalDegree(implicitModel({2,1}, {1}, 1), 2), r -> r#"degree")
    SeeAlso
        implicitRecord
///

doc ///
    Key
        OneCoordinate
    Headline
        use the first output row only
    Description
        Text
            An option of @TO implicitModel@ and @TO implicitIdeal@ (default false).
        Example
            #((implicitModel({2,2}, {1}, 2, OneCoordinate => true))#"coordinates")
///

doc ///
    Key
        Reparametrize
    Headline
        eliminate from (V, A) instead of (Q, K, V)
    Description
        Text
            An option of @TO implicitModel@ and @TO implicitIdeal@ (default true). Both
            parametrizations have the same image closure; false is the slow route, an independent
            check.
        Example
            (implicitModel({2,1}, {2}, 2, Reparametrize => false))#"parametrization"
///

doc ///
    Key
        ComputeIdeal
    Headline
        whether implicitRecord eliminates
    Description
        Text
            An option of @TO implicitRecord@ (default true).
        Example
            keys implicitRecord(implicitModel({2,1}, {1}, 1), ComputeIdeal => false)
///

doc ///
    Key
        NumericalDegreeRuns
    Headline
        how many monodromy runs implicitRecord adds
    Description
        Text
            An option of @TO implicitRecord@ (default 0); see @TO numericalDegree@.
        Example
            options implicitRecord
///

doc ///
    Key
        implicitCoordinates
        (implicitCoordinates, ImplicitModel, Matrix, Matrix)
        (implicitCoordinates, ImplicitModel, Sequence)
    Headline
        the coordinates of a one-layer function at given matrices V and A
    Usage
        implicitCoordinates(M, V, A)
    Inputs
        M:ImplicitModel
        V:Matrix
            $d' \times d$
        A:Matrix
            $d \times d$ (for weights, $A = K^T Q$), over the same ring as $V$
    Outputs
        :List
            the coordinates $y_1, \ldots, y_n$ of the model at the function $V X (X^T A X)$:
            numbers for numerical matrices, polynomials for matrices of variables
    Description
        Example
            M = implicitModel({2,1}, {1}, 2);
            implicitCoordinates(M, matrix {{1,1}}, matrix {{1,0},{0,0}})
            sub(implicitIdeal M, matrix {oo}) == 0
    SeeAlso
        implicitModel
///
