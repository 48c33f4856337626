doc ///
    Key
        coefficientJacobian
        (coefficientJacobian, List, List, ZZ)
        [coefficientJacobian, CoefficientRing]
    Headline
        the Jacobian of the coefficient map at a random weight point
    Usage
        coefficientJacobian(widths, attention, tokens)
    Inputs
        widths:List
        attention:List
        tokens:ZZ
        Heads => List
            of head counts per layer (default @TO null@: one head per layer)
        CoefficientRing => Ring
            the field the random point is drawn from; the default @TO null@ means
            {\tt ZZ/2147483629}, a prime below $2^{31}$
        Columns => ZZ
            how many output tokens to use (default 1)
    Outputs
        :Matrix
            over the coefficient field: one row per (output entry, token monomial), one column per
            weight; the derivatives of the coefficients at a random point
    Description
        Text
            The weights are drawn with @TO random@, so the result depends on @TO setRandomSeed@.
            Its rank is the dimension of the neurovariety with high probability.
        Example
            setRandomSeed 0;
            J = coefficientJacobian({2,2}, {1}, 2);
            (numrows J, numcols J, rank J)
    SeeAlso
        neurovarietyDimension
///

doc ///
    Key
        neurovarietyDimension
        (neurovarietyDimension, List, List, ZZ)
        [neurovarietyDimension, Strategy]
        [neurovarietyDimension, CoefficientRing]
        [neurovarietyDimension, Heads]
        [neurovarietyDimension, Columns]
        [neurovarietyDimension, Generators]
    Headline
        the dimension of the neurovariety of a lightning network
    Usage
        neurovarietyDimension(widths, attention, tokens)
    Inputs
        widths:List
            of positive integers $d_0, \ldots, d_L$
        attention:List
            of positive integers $a_1, \ldots, a_L$
        tokens:ZZ
            the number of tokens
        Strategy => String
            {\tt "Jacobian"} (default) or {\tt "Implicit"}
        CoefficientRing => Ring
            default @TO null@: {\tt ZZ/2147483629} for the Jacobian strategy, @TO QQ@ for the
            implicit one
        Heads => List
            of head counts per layer (default @TO null@: one head per layer)
        Columns => ZZ
            how many output tokens to use (default 1)
        Generators => Boolean
            ignored here; see @TO dimensionRecord@
    Outputs
        :ZZ
            the dimension of the neurovariety (the affine cone of functions)
    Description
        Text
            {\tt Strategy => "Jacobian"} is the rank of the @TO coefficientJacobian@ at a random
            point over the coefficient field: never more than the dimension, and equal to it
            unless the point is unlucky, which happens with probability at most
            $(\deg - 1) r / p$ for coefficients of degree $\deg$ in the weights and rank $r$.
            {\tt Strategy => "Implicit"} computes the kernel of the coefficient ring map over
            @TO QQ@ and its Krull dimension: exact, and feasible only for small networks.

            Only the first output token is used by default: permuting the tokens permutes the
            output columns, so the other columns' coefficients are copies of the first column's
            and add nothing to the dimension.
        Example
            neurovarietyDimension({3,3,3}, {2,2}, 2)
            neurovarietyDimension({2,1}, {1}, 2, Strategy => "Implicit")
            neurovarietyDimension({2,1}, {1}, 2, Heads => {2})
    SeeAlso
        dimensionRecord
        coefficientJacobian
///

doc ///
    Key
        dimensionRecord
        (dimensionRecord, List, List, ZZ)
        [dimensionRecord, Strategy]
        [dimensionRecord, CoefficientRing]
        [dimensionRecord, Heads]
        [dimensionRecord, Columns]
        [dimensionRecord, Generators]
    Headline
        the dimension of the neurovariety with the data of its computation
    Usage
        dimensionRecord(widths, attention, tokens)
    Inputs
        widths:List
        attention:List
        tokens:ZZ
        Strategy => String
            {\tt "Jacobian"} (default) or {\tt "Implicit"}, as in @TO neurovarietyDimension@
        CoefficientRing => Ring
            default @TO null@: {\tt ZZ/2147483629} (Jacobian) or @TO QQ@ (Implicit)
        Heads => List
            of head counts per layer (default @TO null@: one head per layer)
        Columns => ZZ
            how many output tokens to use (default 1)
        Generators => Boolean
            whether the implicit record carries the minimal generators (default false)
    Outputs
        :HashTable
            with string keys: {\tt "dimension"}, {\tt "parameters"}, {\tt "prime"} (0 over
            @TO QQ@), {\tt "m2_version"}, {\tt "package_version"}; for the Jacobian strategy
            {\tt "rank"} and {\tt "rows"}; for the implicit one {\tt "degree"},
            {\tt "coefficients"} (nonzero coefficient polynomials), {\tt "linear_span"} (the
            dimension of their span, the number of coordinates of the ideal),
            {\tt "generator_degrees"} and, with {\tt Generators => true}, {\tt "generators"}
    Description
        Example
            dimensionRecord({2,1}, {1}, 2, Strategy => "Implicit", Generators => true)
    SeeAlso
        neurovarietyDimension
        printRecord
///

doc ///
    Key
        Columns
        [coefficientJacobian, Columns]
    Headline
        how many output tokens a computation uses
    Description
        Text
            Permuting the input tokens permutes the output columns, so the coefficients of the
            first output column determine the others. The default 1 is therefore enough for
            dimensions and fibers; a larger value (at most the number of tokens) repeats the
            computation with more, redundant, equations.
        Example
            neurovarietyDimension({2,2}, {1}, 2, Columns => 2) == neurovarietyDimension({2,2}, {1}, 2)
///

doc ///
    Key
        Generators
    Headline
        whether a record carries the generators of the implicit ideal
    Description
        Text
            An option of @TO dimensionRecord@ (default false) and of @TO implicitRecord@ (default true).
        Example
            (dimensionRecord({2,1}, {1}, 2, Strategy => "Implicit", Generators => true))#"generators"
///
