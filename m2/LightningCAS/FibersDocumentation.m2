doc ///
    Key
        fiberIdeal
        (fiberIdeal, NeuralNetwork, List)
        (fiberIdeal, List, List, ZZ, List)
        [fiberIdeal, CoefficientRing]
        [fiberIdeal, Heads]
        [fiberIdeal, Columns]
    Headline
        the ideal of the weights that compute the same function as a given point
    Usage
        fiberIdeal(widths, attention, tokens, point)
    Inputs
        widths:List
        attention:List
        tokens:ZZ
        point:List
            of the weights of $W$, in the order of @TO lightningWeights@
        CoefficientRing => Ring
            the coefficient field (default @TO QQ@; a prime field gives the fiber mod $p$)
        Heads => List
            of head counts per layer (default @TO null@: one head per layer)
        Columns => ZZ
            how many output tokens to compare (default 1; equal first columns for every input
            already mean equal functions, by permutation equivariance)
    Outputs
        :Ideal
            in the ring of the weights: every token coefficient of $\phi_{W'} - \phi_W$
    Description
        Example
            I = fiberIdeal({2,1}, {1}, 2, {1,2,3,-1,1,1})
            dim I
    SeeAlso
        parametrizationFiber
///

doc ///
    Key
        parametrizationFiber
        (parametrizationFiber, NeuralNetwork, List)
        (parametrizationFiber, List, List, ZZ, List)
        [parametrizationFiber, CoefficientRing]
        [parametrizationFiber, Heads]
        [parametrizationFiber, Columns]
        [parametrizationFiber, WitnessTries]
    Headline
        the fiber of the parametrization through a weight point, decomposed
    Usage
        parametrizationFiber(widths, attention, tokens, point)
    Inputs
        widths:List
        attention:List
        tokens:ZZ
        point:List
            of the weights of $W$, in the order of @TO lightningWeights@
        CoefficientRing => Ring
            default @TO QQ@
        Heads => List
            of head counts per layer (default @TO null@: one head per layer)
        Columns => ZZ
            how many output tokens to compare (default 1)
        WitnessTries => ZZ
            attempts at a rational point on each component that misses $W$ (default 6)
    Outputs
        :HashTable
            with string keys {\tt "fiber_dimension"}, {\tt "fiber_generators"} (how many),
            {\tt "parameters"}, {\tt "m2_version"}, {\tt "package_version"} and
            {\tt "components"}: a list with one hash table per minimal prime of the
            @TO fiberIdeal@, with keys {\tt "dimension"}, {\tt "degree"},
            {\tt "contains_point"} (a Boolean), {\tt "generators"} (its minimal generators) and
            {\tt "witness"} (a rational weight point on the component, when it does not contain
            $W$ and one was found; otherwise @TO null@)
    Description
        Text
            Components are minimal primes over the coefficient field: irreducible over it, not
            necessarily absolutely irreducible. The search for witnesses is random
            (@TO setRandomSeed@).
        Example
            setRandomSeed 0;
            F = parametrizationFiber({2,1}, {1}, 2, {1,2,3,-1,1,1});
            F#"fiber_dimension"
            apply(F#"components", c -> (c#"dimension", c#"contains_point"))
    SeeAlso
        fiberIdeal
        printRecord
///

doc ///
    Key
        WitnessTries
    Headline
        attempts at a rational point on a fiber component
    Description
        Text
            An option of @TO parametrizationFiber@ (default 6): for a component that does not contain
            the given point, fix a maximal independent set of variables at random integers and look
            for a degree-one prime of what remains, at most this many times. With 0 tries no
            witness is searched for.
        Example
            setRandomSeed 0;
            F = parametrizationFiber({2,1}, {1}, 2, {1,2,3,-1,1,1}, WitnessTries => 0);
            apply(F#"components", c -> c#"witness")
///

doc ///
    Key
        localFiberDimension
        (localFiberDimension, NeuralNetwork, List)
        (localFiberDimension, List, List, ZZ, List)
        [localFiberDimension, CoefficientRing]
        [localFiberDimension, Heads]
        [localFiberDimension, Columns]
    Headline
        the dimension of the fiber at the point itself
    Usage
        localFiberDimension(widths, attention, tokens, point)
    Inputs
        widths:List
        attention:List
        tokens:ZZ
        point:List
            of the weights of $W$, in the order of @TO lightningWeights@
        CoefficientRing => Ring
            the coefficient field (default @TO QQ@)
        Heads => List
            of head counts per layer (default @TO null@: one head per layer)
        Columns => ZZ
            how many output tokens to compare (default 1)
    Outputs
        :ZZ
            the largest dimension of a component of the fiber through $W$ that contains $W$: the dimension of
            the tangent cone of @TO fiberIdeal@ at $W$
    Description
        Text
            The local learning coefficient at $W$ is at most (parameters minus this)/2.
            At the zero function of a 2 -> 1 layer the fiber has the
            component $V = 0$ (dimension 4) and the component $Q = 0$ (dimension 4) through $W$.
        Example
            localFiberDimension({2,1}, {1}, 2, {0,0,0,0,0,0})
            localFiberDimension({2,1}, {1}, 2, {1,2,3,-1,1,1})
    SeeAlso
        fiberIdeal
        parametrizationFiber
///
