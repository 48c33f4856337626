doc ///
    Key
        NeurovarietyResult
        (net, NeurovarietyResult)
        (toString, NeurovarietyResult)
        (isWellDefined, NeurovarietyResult)
    Headline
        the neurovariety of a network: its dimension and the data of its computation
    Description
        Text
            Made by @TO neurovariety@. A hash table with string keys, all of them always present
            (@TO null@ when the method does not compute the value):

            {\tt "network"}: the @TO NeuralNetwork@;

            {\tt "dimension"}: the dimension of the neurovariety (the closure of the set of
            functions the network computes, as the coefficients of its first output token);

            {\tt "parameters"}: the number of weights;

            {\tt "fiber_dimension"}: {\tt "parameters"} minus {\tt "dimension"}, the dimension of
            a generic fiber of the parametrization (the weights computing the same function as
            generic weights);

            {\tt "ambient"}: the number of coefficients, the coordinates of the space the
            neurovariety lies in (the Jacobian strategy counts those that depend on the weights);

            {\tt "method"}: {\tt "Jacobian"} (the rank of @TO coefficientJacobian@ at a random
            point) or {\tt "Implicit"} (the implicit ideal, exact);

            {\tt "prime"}: the characteristic of the field of the computation (0 for @TO QQ@);

            {\tt "degree"}: the degree of the neurovariety (implicit method only);

            {\tt "linear_span"}: the dimension of the linear span of the coefficients, the number
            of variables of the ideal (implicit method only);

            {\tt "ideal"}: the implicit ideal in coordinates $y_1, \ldots, y_n$, a basis of that
            span (implicit method only).

            @TO net@ shows a short table, @TO toString@ one line; {\tt isWellDefined} checks that
            the numbers fit together.
        Example
            R = neurovariety({2,1}, {1}, 2, Strategy => "Implicit")
            R#"dimension"
            R#"ideal"
            toString R
            isWellDefined R
    SeeAlso
        neurovariety
        dimensionRecord
///

doc ///
    Key
        neurovariety
        (neurovariety, NeuralNetwork)
        (neurovariety, List, List, ZZ)
        [neurovariety, Strategy]
        [neurovariety, CoefficientRing]
        [neurovariety, Heads]
        [neurovariety, Columns]
    Headline
        the neurovariety of a network as one object with a readable summary
    Usage
        neurovariety N
        neurovariety(widths, attention, tokens)
    Inputs
        N:NeuralNetwork
        widths:List
            of positive integers $d_0, \ldots, d_L$ (the paper's stack of attention layers)
        attention:List
            of positive integers $a_1, \ldots, a_L$
        tokens:ZZ
        Strategy => String
            {\tt "Jacobian"} (default) or {\tt "Implicit"}, as in @TO neurovarietyDimension@
        CoefficientRing => Ring
            default @TO null@: {\tt ZZ/2147483629} (Jacobian) or @TO QQ@ (Implicit)
        Heads => List
            of head counts per layer, with the lists (default @TO null@: one head per layer)
        Columns => ZZ
            how many output tokens to use (default 1)
    Outputs
        :NeurovarietyResult
    Description
        Text
            The same computation as @TO neurovarietyDimension@, kept whole: the dimension, the
            weight count, the generic fiber dimension, the number of coefficients, and with
            {\tt Strategy => "Implicit"} the degree and the implicit ideal itself. The keys are
            described at @TO NeurovarietyResult@. @TO dimensionRecord@ gives the same numbers
            as a record for @TO printRecord@.
        Example
            setRandomSeed 0;
            neurovariety({3,3,3}, {2,2}, 2)
            neurovariety(neuralNetwork(2, 1, {linearBlock 1, powerBlock 2}), Strategy => "Implicit")
    SeeAlso
        NeurovarietyResult
        neurovarietyDimension
        mapDimension
///
