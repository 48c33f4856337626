doc ///
    Key
        lightningWeights
        (lightningWeights, List, List)
    Headline
        the weight variables of a lightning network, in their canonical order
    Usage
        lightningWeights(widths, attention)
    Inputs
        widths:List
            of positive integers $d_0, \ldots, d_L$
        attention:List
            of positive integers $a_1, \ldots, a_L$
        Heads => List
            of head counts $h_1, \ldots, h_L$; the default @TO null@ means one head per layer
    Outputs
        :List
            of @TO IndexedVariable@s: layer by layer, head by head, the entries of $Q$, $K$, $V$
            row by row; $q_{(i,r,c)}$ in a layer with one head, $q_{(i,h,r,c)}$ in a layer with
            several
    Description
        Example
            lightningWeights({2,1}, {1})
            lightningWeights({1,1}, {1}, Heads => {2})
            lightningWeights({1,1,1}, {1,1}, Heads => {2,1})
    SeeAlso
        lightningNetwork
///

doc ///
    Key
        lightningNetwork
        (lightningNetwork, List, List, ZZ)
        [lightningNetwork, CoefficientRing]
    Headline
        the output polynomials of a lightning self-attention network
    Usage
        lightningNetwork(widths, attention, tokens)
    Inputs
        widths:List
            of positive integers $d_0, \ldots, d_L$
        attention:List
            of positive integers $a_1, \ldots, a_L$
        tokens:ZZ
            the number $t$ of tokens
        Heads => List
            of head counts per layer (default @TO null@: one head per layer)
        CoefficientRing => Ring
            the coefficient field of the ring of weights and tokens (default @TO QQ@)
    Outputs
        :Matrix
            $d_L \times t$, the network applied to the generic token matrix $x_{(r,j)}$, over the
            polynomial ring in the weights (@TO lightningWeights@) followed by the tokens
    Description
        Text
            One layer with one head on one token of width one is the monomial $v q k x^3$.
            With two heads the layer sums two such terms.
        Example
            lightningNetwork({1,1}, {1}, 1)
            lightningNetwork({1,1}, {1}, 1, Heads => {2})
            F = lightningNetwork({2,1}, {1}, 2);
            ring F
            degree F_(0,0)
    SeeAlso
        lightningWeights
        neurovarietyDimension
///

doc ///
    Key
        Heads
        [lightningWeights, Heads]
        [lightningNetwork, Heads]
        [coefficientJacobian, Heads]
    Headline
        head counts of a multi-head lightning network
    Description
        Text
            An option of @TO lightningWeights@, @TO lightningNetwork@, @TO coefficientJacobian@,
            @TO neurovarietyDimension@, @TO dimensionRecord@, @TO fiberIdeal@ and
            @TO parametrizationFiber@: a list $h_1, \ldots, h_L$ of positive integers, or
            @TO null@ (the default) for one head per layer. Layer $i$ is then
            $Y \mapsto \sum_{h=1}^{h_i} V_{ih} Y (Y^T K_{ih}^T Q_{ih} Y)$.
        Example
            lightningNetwork({1,1}, {1}, 2, Heads => {2})
///
