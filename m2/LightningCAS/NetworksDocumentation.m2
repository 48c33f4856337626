doc ///
    Key
        lightningWeights
        (lightningWeights, NeuralNetwork)
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
            lightningWeights neuralNetwork(2, 2, {attentionBlock(1, Value => 1), mlpBlock 1, linearBlock 1})
    SeeAlso
        lightningNetwork
///

doc ///
    Key
        lightningNetwork
        (lightningNetwork, NeuralNetwork)
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
        Text
            Any network of blocks (@TO neuralNetwork@): an mlp of degree 2 on one token of width one
            is $d (u x)^2$, and a causal layer on two tokens lets the first token see itself only.
        Example
            lightningNetwork neuralNetwork(1, 1, {mlpBlock 1})
            lightningNetwork neuralNetwork(1, 2, {attentionBlock(1, Causal => true)})
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

doc ///
    Key
        NeuralNetwork
        (net, NeuralNetwork)
        (toString, NeuralNetwork)
        (isWellDefined, NeuralNetwork)
    Headline
        a network as a stack of blocks
    Description
        Text
            Made by @TO neuralNetwork@. A hash table with string keys: {\tt "input"} ($d_0$),
            {\tt "tokens"} ($t$), {\tt "blocks"} (the @TO NetworkBlock@s with their input width
            and out resolved), {\tt "widths"} (the width before every block and after the last),
            {\tt "matrices"} (one entry per weight matrix in the canonical order: block, head,
            letter, rows, columns), {\tt "weights"} (their entries as variables, see
            @TO lightningWeights@), {\tt "parameters"} and {\tt "causal"}. Every function that
            takes the old arguments (widths, attention, tokens) takes a network too.
            {\tt isWellDefined} checks that the parts fit together.
        Example
            N = neuralNetwork(4, 3, {attentionBlock(2, Value => 2, Causal => true, Residual => true),
                mlpBlock(8), linearBlock 1, powerBlock 2})
            N#"widths"
            isWellDefined N
    SeeAlso
        neuralNetwork
        NetworkBlock
///

doc ///
    Key
        neuralNetwork
        (neuralNetwork, ZZ, ZZ, List)
        (neuralNetwork, List, List, ZZ)
        (neuralNetwork, List, List, ZZ, List)
        (neuralNetwork, List, List, ZZ, Nothing)
    Headline
        a network of attention, mlp, linear and power blocks
    Usage
        neuralNetwork(inputWidth, tokens, blocks)
        neuralNetwork(widths, attention, tokens)
        neuralNetwork(widths, attention, tokens, heads)
    Inputs
        inputWidth:ZZ
            the width $d_0$ of a token
        tokens:ZZ
            the number $t$ of tokens
        blocks:List
            of @TO NetworkBlock@s, applied in order, or of their integer lists:
            $\{0, h, a, b, out, causal, residual\}$ for attention ($b = 0$: a full value map),
            $\{1, m, r, out, residual\}$ for mlp, $\{2, out\}$ for linear, $\{3, r\}$ for power
            (causal 0 or 1, residual $n \ge 0$); a last 1 after an attention, mlp or linear list gives the
            block biases; a linear block ending a residual group is $\{2, out, bias, n\}$, a power block
            $\{3, r, n\}$
        widths:List
            $d_0, \ldots, d_L$ of the paper's network: the stack of plain attention blocks
        attention:List
            $a_1, \ldots, a_L$
        heads:List
            head counts per layer, or @TO null@ for one head each
    Outputs
        :NeuralNetwork
    Description
        Text
            The network acts on the $d_0 \times t$ token matrix $Y$ (tokens are columns). Each block
            maps width $d$ to its out (by default $d$). {\tt Residual => n} on block $i$ (any kind;
            true is 1) ends a residual group of the blocks $i-n+1, \ldots, i$: the group returns its input
            plus those blocks applied in order, so {\tt Residual => true} is $Y + $ block$(Y)$ and a
            pre-LN layer $x + f(g(x))$ is $g$ followed by $f$ with {\tt Residual => 2}. Groups are nested
            or disjoint, start at block 0 or later and keep the width:

            attention (@TO attentionBlock@): $\sum_h V_h Y S_h$ with $S_h = (K_h Y)^T (Q_h Y)$, entry
            $(i, j) = \langle K_h y_i, Q_h y_j\rangle$; causal keeps the entries $i \le j$; with a
            value dimension $b$, $V_h = O_h W_h$;

            mlp (@TO mlpBlock@): $W_2 (W_1 Y)^{\circ r}$, the power taken entry by entry;

            linear (@TO linearBlock@): $W Y$;   power (@TO powerBlock@): $Y^{\circ r}$, no weights.

            The weights are ordered block by block, inside a block as listed (per head $Q$, $K$, then
            $V$ or $W$, $O$; $W_1$ then $W_2$), every matrix row by row, and named
            $letter_{(i,r,c)}$ for block $i$ (in a block with several heads $letter_{(i,h,r,c)}$) with
            the letters q k v w o (attention), u d (mlp), p (linear). Only polynomial blocks exist
            here: softmax attention is refused. The old arguments give the stack of plain attention
            blocks, with the old names and order, so every result is the one of the old functions.
        Example
            N = neuralNetwork(2, 2, {attentionBlock(1, Causal => true), mlpBlock(2, Out => 1)})
            lightningWeights N
            neurovarietyDimension N
            neuralNetwork(2, 2, {{0, 1, 1, 0, 2, 1, 0}, {1, 2, 2, 1, 0}}) === N
            neurovarietyDimension neuralNetwork({3,3,3}, {2,2}, 2)
    SeeAlso
        NeuralNetwork
        neurovarietyDimension
        parametrizationFiber
///

doc ///
    Key
        NetworkBlock
        (net, NetworkBlock)
        (toString, NetworkBlock)
        (isWellDefined, NetworkBlock)
    Headline
        one block of a network
    Description
        Text
            Made by @TO attentionBlock@, @TO mlpBlock@, @TO linearBlock@ and @TO powerBlock@: a hash
            table with the key {\tt "kind"} ({\tt "attention"}, {\tt "mlp"}, {\tt "linear"} or
            {\tt "power"}) and the block's numbers ({\tt "heads"}, {\tt "attention"}, {\tt "value"},
            {\tt "hidden"}, {\tt "degree"}, {\tt "out"}, {\tt "causal"}, {\tt "residual"}; an out of
            @TO null@ means the block's input width). {\tt isWellDefined} checks those numbers.
        Example
            attentionBlock(2, Heads => 2, Value => 1)
            isWellDefined mlpBlock 4
    SeeAlso
        neuralNetwork
///

doc ///
    Key
        attentionBlock
        (attentionBlock, ZZ)
        [attentionBlock, Heads]
        [attentionBlock, Value]
        [attentionBlock, Out]
        [attentionBlock, Causal]
        [attentionBlock, Residual]
        [attentionBlock, Normalization]
        [attentionBlock, Bias]
        Bias
        Value
        Out
        Causal
        Residual
        Normalization
    Headline
        a lightning attention block
    Usage
        attentionBlock a
    Inputs
        a:ZZ
            the attention dimension ($Q_h$, $K_h$ are $a \times d$)
        Heads => ZZ
            the number of heads (default 1)
        Value => ZZ
            a value dimension $b$: $V_h = O_h W_h$ with $W_h$ ($b \times d$) and $O_h$ ($out \times b$);
            the default @TO null@ is a full $V_h$ ($out \times d$)
        Out => ZZ
            the output width (default @TO null@: the input width)
        Causal => Boolean
            token $j$ attends to the tokens $i \le j$ only (default false)
        Residual => ZZ
            true (or 1): return $Y + $ block$(Y)$; $n$: end a residual group of the last $n$ blocks (see
            @TO neuralNetwork@); default false; the group keeps the width
        Normalization => String
            only {\tt "none"}: softmax attention is not polynomial and is refused
        Bias => Boolean
            affine projections (default false): $K_h y + b_k$, $Q_h y + b_q$, $V_h y + b_v$ (or
            $W_h y + b_w$ and one output bias $b_o$ after the head sum), each bias broadcast over the
            tokens and named {\tt bq}, {\tt bk}, {\tt bv}, {\tt bw}, {\tt bo}
    Outputs
        :NetworkBlock
    Description
        Example
            attentionBlock 2
            attentionBlock(2, Heads => 4, Value => 1, Causal => true, Residual => true)
            lightningNetwork neuralNetwork(1, 2, {attentionBlock(1, Residual => true)})
    SeeAlso
        neuralNetwork
///

doc ///
    Key
        mlpBlock
        (mlpBlock, ZZ)
        [mlpBlock, Degree]
        [mlpBlock, Out]
        [mlpBlock, Residual]
        [mlpBlock, Bias]
    Headline
        a polynomial mlp block
    Usage
        mlpBlock m
    Inputs
        m:ZZ
            the hidden width ($W_1$ is $m \times d$, $W_2$ is $out \times m$)
        Degree => ZZ
            the power $r$ taken entry by entry (default 2)
        Out => ZZ
            the output width (default @TO null@: the input width)
        Residual => ZZ
            true (or 1): return $Y + $ block$(Y)$; $n$: end a residual group of the last $n$ blocks
            (default false)
        Bias => Boolean
            $W_2 (W_1 Y + b_u)^{\circ r} + b_d$ (default false)
    Outputs
        :NetworkBlock
    Description
        Text
            $Y \mapsto W_2 (W_1 Y)^{\circ r}$. One hidden neuron on width one is $d (u x)^r$.
        Example
            lightningNetwork neuralNetwork(1, 1, {mlpBlock(1, Degree => 3)})
            neurovarietyDimension neuralNetwork(3, 1, {mlpBlock(2, Out => 1)})
    SeeAlso
        neuralNetwork
///

doc ///
    Key
        linearBlock
        (linearBlock, ZZ)
        [linearBlock, Bias]
        [linearBlock, Residual]
    Headline
        a linear block
    Usage
        linearBlock out
    Inputs
        out:ZZ
            the output width ($W$ is $out \times d$)
        Bias => Boolean
            $W Y + b_p$, an affine map (default false)
        Residual => ZZ
            end a residual group of the last $n$ blocks, true being 1 (default false)
    Outputs
        :NetworkBlock
    Description
        Text
            $Y \mapsto W Y$: an embedding, an unembedding or a readout. Alone it fills all
            $out \times d$ matrices.
        Example
            neurovarietyDimension neuralNetwork(3, 2, {linearBlock 2})
            neurovarietyDimension neuralNetwork(3, 2, {linearBlock(2, Bias => true)})
    SeeAlso
        neuralNetwork
///

doc ///
    Key
        positionBlock
        [positionBlock, Residual]
    Headline
        a learned positional embedding
    Usage
        positionBlock()
    Inputs
        Residual => ZZ
            end a residual group of the last $n$ blocks, true being 1 (default false)
    Outputs
        :NetworkBlock
    Description
        Text
            $Y \mapsto Y + E$ with $E$ a $d \times t$ matrix of weights {\tt e}, one column per token:
            affine in $E$, so the network is not homogeneous.
        Example
            lightningNetwork neuralNetwork(1, 2, {positionBlock(), attentionBlock 1})
    SeeAlso
        neuralNetwork
///

doc ///
    Key
        powerBlock
        (powerBlock, ZZ)
        [powerBlock, Residual]
    Headline
        an entrywise power block
    Usage
        powerBlock r
    Inputs
        r:ZZ
            the power
        Residual => ZZ
            end a residual group of the last $n$ blocks, true being 1 (default false)
    Outputs
        :NetworkBlock
    Description
        Text
            $Y \mapsto Y^{\circ r}$, without weights: with linear blocks around it, the polynomial
            networks of Kileel, Trager and Bruna. Sums of two squares of linear forms in three
            variables are the symmetric matrices of rank at most 2, a hypersurface:
        Example
            neurovarietyDimension neuralNetwork(3, 1, {linearBlock 2, powerBlock 2, linearBlock 1})
            lightningNetwork neuralNetwork(1, 1, {linearBlock 1, powerBlock(2, Residual => 2)})
    SeeAlso
        neuralNetwork
///
