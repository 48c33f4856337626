-- LightningCAS: neurovarieties of lightning self-attention networks, for Macaulay2 1.21.
-- Load without installing:
--   loadPackage("LightningCAS", FileName => "/path/to/m2/LightningCAS.m2")
-- The lightning_cas Python package calls these functions and reads their records as JSON.
newPackage("LightningCAS",
    Version => "0.1.0",
    Date => "December 1, 2026",
    Headline => "neurovarieties of lightning self-attention networks",
    Authors => {{Name => "lightning_cas contributors"}},
    Keywords => {"Applied Algebraic Geometry"},
    PackageImports => {"JSON", "MinimalPrimes"},
    AuxiliaryFiles => false,
    DebuggingMode => false)

export {
    "lightningWeights",
    "lightningNetwork",
    "coefficientJacobian",
    "neurovarietyDimension",
    "dimensionRecord",
    "fiberIdeal",
    "parametrizationFiber",
    "printRecord",
    "Heads",
    "Columns",
    "Generators",
    "WitnessTries"
    }

-- The default prime of the Jacobian strategy: large, so that a random point is unlucky
-- (rank lower than the generic rank) with probability at most (degree - 1) * rank / p.
lcasDefaultPrime = 2147483629;
lcasMarker = "@@LCAS-JSON@@ ";

---------------------------------------------------------------------------------------------
-- architecture: checked shapes, one (a, d, e, h) per layer
---------------------------------------------------------------------------------------------

lcasPositive = (name, L) -> (
    if not instance(L, List) or #L == 0 or not all(L, n -> instance(n, ZZ) and n > 0) then
        error("LightningCAS: " | name | " must be a nonempty list of positive integers"));

-- shapes#i = (attention a_i, input width d_{i-1}, output width d_i, heads h_i)
lcasShapes = (widths, attention, heads) -> (
    lcasPositive("widths", widths);
    lcasPositive("attention", attention);
    if #widths != #attention + 1 then
        error "LightningCAS: widths must have one entry more than attention (d_0, ..., d_L and a_1, ..., a_L)";
    hs := if heads === null then toList(#attention : 1) else heads;
    lcasPositive("Heads", hs);
    if #hs != #attention then error "LightningCAS: Heads must give one head count per layer";
    apply(#attention, i -> (attention#i, widths#i, widths#(i+1), hs#i)));

lcasTokensCheck = tokens -> (
    if not instance(tokens, ZZ) or tokens < 1 then error "LightningCAS: tokens must be a positive integer");

lcasColumnsCheck = (columns, tokens) -> (
    if not instance(columns, ZZ) or columns < 1 or columns > tokens then
        error "LightningCAS: Columns must be an integer between 1 and the number of tokens");

lcasParameterCount = shapes -> sum apply(shapes, s -> s#3 * (2 * s#0 * s#1 + s#2 * s#1));

-- Names of the weights, layer by layer and head by head: Q (a x d), then K (a x d), then V (e x d).
-- In a one-head layer the names are q_(i,r,c), k_(i,r,c), v_(i,r,c); in a layer with several
-- heads q_(i,h,r,c), k_(i,h,r,c), v_(i,h,r,c) (the names lightning_cas uses in Python too).
lcasWeightSymbols = shapes -> (
    name := (letter, i, h, r, c) -> if (shapes#(i-1))#3 == 1 then (getSymbol letter)_(i, r, c)
        else (getSymbol letter)_(i, h, r, c);
    flatten flatten for i from 1 to #shapes list (
        (a, d, e, h) := shapes#(i-1);
        for hh from 1 to h list (
            (flatten table(a, d, (r, c) -> name("q", i, hh, r+1, c+1)))
            | (flatten table(a, d, (r, c) -> name("k", i, hh, r+1, c+1)))
            | (flatten table(e, d, (r, c) -> name("v", i, hh, r+1, c+1))))));

lcasTokenSymbols = (d0, tokens) -> flatten table(d0, tokens, (r, j) -> (getSymbol "x")_(r+1, j+1));

-- the weight values (a flat list in the order above) cut into layers, each a list of heads (Q, K, V)
lcasLayers = (shapes, values) -> (
    pos := 0;
    take1 := (m, n) -> (M := matrix table(m, n, (r, c) -> values#(pos + r*n + c)); pos = pos + m*n; M);
    for s in shapes list (
        (a, d, e, h) := s;
        for hh from 1 to h list (Q := take1(a, d); K := take1(a, d); V := take1(e, d); (Q, K, V))));

-- the network on the token matrix X (d_0 x t): layer Y -> sum_h V_h Y (Y^T K_h^T Q_h Y)
lcasForward = (layers, X) -> (
    Z := X;
    for heads in layers do (
        G := transpose Z;
        Z = sum apply(heads, QKV -> (QKV#2 * Z) * (G * transpose(QKV#1) * QKV#0 * Z)));
    Z);

-- the polynomial ring of weights over kk, and the token ring T over it
lcasTower = (shapes, d0, tokens, kk) -> (
    R := kk[lcasWeightSymbols shapes];
    T := R[lcasTokenSymbols(d0, tokens)];
    X := matrix table(d0, tokens, (r, j) -> T_(r*tokens + j));
    (R, T, X));

-- every coefficient (in the tokens) of the entries of a matrix over T, as elements of R
lcasCoefficients = (M, R) -> select(
    flatten apply(flatten entries M, f -> apply(flatten entries last coefficients f, c -> lift(c, R))),
    g -> g != 0);

---------------------------------------------------------------------------------------------
-- the network
---------------------------------------------------------------------------------------------

lightningWeights = method(Options => {Heads => null})
lightningWeights(List, List) := o -> (widths, attention) -> lcasWeightSymbols lcasShapes(widths, attention, o.Heads)

lightningNetwork = method(Options => {Heads => null, CoefficientRing => QQ})
lightningNetwork(List, List, ZZ) := o -> (widths, attention, tokens) -> (
    shapes := lcasShapes(widths, attention, o.Heads);
    lcasTokensCheck tokens;
    ws := lcasWeightSymbols shapes;
    S := (o.CoefficientRing)[ws | lcasTokenSymbols(widths#0, tokens)];
    X := matrix table(widths#0, tokens, (r, j) -> S_(#ws + r*tokens + j));
    lcasForward(lcasLayers(shapes, take(gens S, #ws)), X))

---------------------------------------------------------------------------------------------
-- Jacobian of the coefficient map at a random point, by forward differentiation
---------------------------------------------------------------------------------------------

-- a "dual" is (value, list of P tangents), one tangent per weight
lcasDualMul = (A, B) -> (A#0 * B#0, apply(#(A#1), k -> (A#1)#k * B#0 + A#0 * (B#1)#k));
lcasDualAdd = (A, B) -> (A#0 + B#0, apply(#(A#1), k -> (A#1)#k + (B#1)#k));
lcasDualT = A -> (transpose A#0, apply(A#1, transpose));

-- the first `columns` output columns at the point pt and their derivatives in every weight,
-- as a list of P matrices over the token ring T
lcasTangents = (shapes, pt, T, d0, tokens, columns) -> (
    P := #pt;
    pos := 0;
    X := matrix table(d0, tokens, (r, j) -> T_(r*tokens + j));
    Z := (X, toList(P : map(T^d0, T^tokens, 0)));
    weight := (m, n) -> (
        M := matrix table(m, n, (r, c) -> pt#(pos + r*n + c) * 1_T);
        tang := apply(P, k -> (
                if k < pos or k >= pos + m*n then map(T^m, T^n, 0)
                else (r := (k - pos) // n; c := (k - pos) % n; map(T^m, T^n, {(r, c) => 1_T}))));
        pos = pos + m*n;
        (M, tang));
    for s in shapes do (
        (a, d, e, h) := s;
        ZT := lcasDualT Z;
        terms := for hh from 1 to h list (
            Q := weight(a, d); K := weight(a, d); V := weight(e, d);
            lcasDualMul(lcasDualMul(V, Z), lcasDualMul(lcasDualMul(ZT, lcasDualT K), lcasDualMul(Q, Z))));
        Z = fold(lcasDualAdd, terms));
    cols := toList(0 .. columns - 1);
    apply(Z#1, M -> M_cols));

coefficientJacobian = method(Options => {Heads => null, CoefficientRing => null, Columns => 1})
coefficientJacobian(List, List, ZZ) := o -> (widths, attention, tokens) -> (
    shapes := lcasShapes(widths, attention, o.Heads);
    lcasTokensCheck tokens;
    lcasColumnsCheck(o.Columns, tokens);
    kk := if o.CoefficientRing === null then ZZ/lcasDefaultPrime else o.CoefficientRing;
    P := lcasParameterCount shapes;
    T := kk[lcasTokenSymbols(widths#0, tokens)];
    pt := apply(P, k -> random kk);
    dF := lcasTangents(shapes, pt, T, widths#0, tokens, o.Columns);
    -- one row block per output entry: coefficients of every token monomial, one column per weight
    entryRows := transpose apply(dF, M -> flatten entries M);
    blocks := apply(entryRows, r -> lift(last coefficients matrix {r}, kk));
    fold((A, B) -> A || B, blocks))

---------------------------------------------------------------------------------------------
-- dimension
---------------------------------------------------------------------------------------------

lcasRecordBase = () -> {"m2_version" => version#"VERSION", "package_version" => (options LightningCAS)#Version};

-- The implicit ideal of the coefficient map (first `columns` output columns) in coordinates
-- y_1..y_n of a basis of the linear span of the coefficients: an injective linear image of the
-- neurovariety, so dimension and degree are unchanged. Returns (ideal, #coefficients, n).
lcasImplicit = (shapes, widths, tokens, kk, columns) -> (
    (R, T, X) := lcasTower(shapes, widths#0, tokens, kk);
    Phi := lcasForward(lcasLayers(shapes, apply(numgens R, k -> R_k * 1_T)), X);
    coeffPolys := lcasCoefficients(Phi_(toList(0 .. columns - 1)), R);
    C := lift(last coefficients matrix {coeffPolys}, kk);
    chosen := {};
    r := 0;
    scan(#coeffPolys, j -> (
            s := rank C_(append(chosen, j));
            if s > r then (chosen = append(chosen, j); r = s)));
    basisPolys := coeffPolys_chosen;
    if not all(basisPolys, isHomogeneous) then error "LightningCAS: coefficient polynomials are not homogeneous";
    y := getSymbol "y";
    S := kk[y_1 .. y_(#basisPolys), Degrees => apply(basisPolys, f -> first degree f)];
    I := ker map(R, S, basisPolys);
    S1 := kk[y_1 .. y_(#basisPolys)];
    ((map(S1, S, vars S1)) I, #coeffPolys, #basisPolys));

dimensionRecord = method(Options => {Heads => null, Strategy => "Jacobian", CoefficientRing => null,
        Columns => 1, Generators => false})
dimensionRecord(List, List, ZZ) := o -> (widths, attention, tokens) -> (
    shapes := lcasShapes(widths, attention, o.Heads);
    lcasTokensCheck tokens;
    lcasColumnsCheck(o.Columns, tokens);
    P := lcasParameterCount shapes;
    kk := null;
    if o.Strategy === "Jacobian" then (
        kk = if o.CoefficientRing === null then ZZ/lcasDefaultPrime else o.CoefficientRing;
        J := coefficientJacobian(widths, attention, tokens, Heads => o.Heads, CoefficientRing => kk,
            Columns => o.Columns);
        rk := rank J;
        new HashTable from lcasRecordBase() | {"strategy" => "Jacobian", "dimension" => rk, "rank" => rk,
            "rows" => numrows J, "prime" => char kk, "parameters" => P})
    else if o.Strategy === "Implicit" then (
        kk = if o.CoefficientRing === null then QQ else o.CoefficientRing;
        (I, ncoeff, nbasis) := lcasImplicit(shapes, widths, tokens, kk, o.Columns);
        G := flatten entries mingens I;
        new HashTable from lcasRecordBase() | {"strategy" => "Implicit", "dimension" => dim I,
            "degree" => degree I, "parameters" => P, "coefficients" => ncoeff, "linear_span" => nbasis,
            "generator_degrees" => apply(G, g -> first degree g), "prime" => char kk}
            | (if o.Generators then {"generators" => G} else {}))
    else error "LightningCAS: Strategy must be \"Jacobian\" or \"Implicit\"")

neurovarietyDimension = method(Options => options dimensionRecord)
neurovarietyDimension(List, List, ZZ) := o -> (widths, attention, tokens) ->
    (dimensionRecord(widths, attention, tokens, o))#"dimension"

---------------------------------------------------------------------------------------------
-- fibers of the parametrization
---------------------------------------------------------------------------------------------

lcasPoint = (point, P, kk) -> (
    if not instance(point, List) or #point != P then
        error("LightningCAS: the point must be a list of " | toString P | " weights");
    apply(point, c -> promote(c, kk)));

fiberIdeal = method(Options => {Heads => null, CoefficientRing => QQ, Columns => 1})
fiberIdeal(List, List, ZZ, List) := o -> (widths, attention, tokens, point) -> (
    shapes := lcasShapes(widths, attention, o.Heads);
    lcasTokensCheck tokens;
    lcasColumnsCheck(o.Columns, tokens);
    kk := o.CoefficientRing;
    pt := lcasPoint(point, lcasParameterCount shapes, kk);
    (R, T, X) := lcasTower(shapes, widths#0, tokens, kk);
    cols := toList(0 .. o.Columns - 1);
    PhiVar := (lcasForward(lcasLayers(shapes, apply(numgens R, k -> R_k * 1_T)), X))_cols;
    PhiPt := (lcasForward(lcasLayers(shapes, apply(pt, c -> c * 1_T)), X))_cols;
    diffs := lcasCoefficients(PhiVar - PhiPt, R);
    if #diffs == 0 then ideal(0_R) else trim ideal diffs)

-- A rational point on the variety of the prime Pr: fix a maximal independent set of variables
-- at random small integers; the remaining zero-dimensional ideal often has a rational
-- (degree-one) prime. null when `tries` attempts find none.
lcasRationalPoint = (Pr, tries) -> (
    R := ring Pr;
    kk := coefficientRing R;
    found := null;
    d := dim Pr;
    for attempt from 1 to tries do (
        indep := if d > 0 then support first independentSets(Pr, Limit => 1) else {};
        J := Pr + ideal apply(indep, v -> v - ((random 19) - 9));
        if dim J != 0 then continue;
        lin := select(minimalPrimes J, Q -> degree Q == 1);
        if #lin > 0 then (
            Q := first lin;
            found = apply(gens R, v -> lift(v % Q, kk));
            break));
    found);

parametrizationFiber = method(Options => {Heads => null, CoefficientRing => QQ, Columns => 1, WitnessTries => 6})
parametrizationFiber(List, List, ZZ, List) := o -> (widths, attention, tokens, point) -> (
    I := fiberIdeal(widths, attention, tokens, point, Heads => o.Heads, CoefficientRing => o.CoefficientRing,
        Columns => o.Columns);
    R := ring I;
    kk := coefficientRing R;
    atPoint := map(kk, R, lcasPoint(point, numgens R, kk));
    onPoint := J -> all(flatten entries gens J, g -> atPoint g == 0);
    if not onPoint I then error "LightningCAS: the point is not in its own fiber";
    comps := minimalPrimes I;
    new HashTable from lcasRecordBase() | {
        "parameters" => numgens R,
        "fiber_generators" => numgens I,
        "fiber_dimension" => dim I,
        "components" => apply(comps, Pr -> (
                contains := onPoint Pr;
                new HashTable from {
                    "dimension" => dim Pr,
                    "degree" => degree Pr,
                    "contains_point" => contains,
                    "generators" => flatten entries mingens Pr,
                    "witness" => (if contains then null else lcasRationalPoint(Pr, o.WitnessTries))}))})

---------------------------------------------------------------------------------------------
-- records as JSON
---------------------------------------------------------------------------------------------

-- Numbers beyond ZZ (QQ, ZZ/p, polynomials) become their toString, so nothing is rounded.
lcasPlain = method()
lcasPlain Thing := x -> error("LightningCAS: cannot write a " | toString class x | " into a record")
lcasPlain ZZ := x -> x
lcasPlain Boolean := x -> x
lcasPlain String := x -> x
lcasPlain Nothing := x -> x
lcasPlain QQ := x -> toString x
lcasPlain RingElement := x -> toString x
lcasPlain VisibleList := L -> apply(toList L, lcasPlain)
lcasPlain HashTable := H -> new HashTable from apply(pairs H, (k, v) -> toString k => lcasPlain v)

printRecord = method()
printRecord HashTable := H -> (<< lcasMarker << toJSON lcasPlain H << endl;)

beginDocumentation()

doc ///
    Key
        LightningCAS
    Headline
        neurovarieties of lightning self-attention networks
    Description
        Text
            A lightning self-attention layer with attention width $a$, input width $d$ and output
            width $e$ maps a token matrix $Y$ ($d \times t$, one column per token) to
            $V Y (Y^T K^T Q Y)$, with weights $Q, K$ ($a \times d$) and $V$ ($e \times d$). A network
            with widths $d_0, \ldots, d_L$ and attention widths $a_1, \ldots, a_L$ composes $L$
            such layers. With $h_i$ heads, layer $i$ is the sum over its heads of
            $V_{ih} Y (Y^T K_{ih}^T Q_{ih} Y)$.

            The output entries are polynomials in the weights and the tokens. Their coefficients
            (as polynomials in the tokens) parametrize the {\em neurovariety}: the closure of the
            set of functions the architecture computes. This package builds the network
            (@TO lightningNetwork@), computes the dimension of the neurovariety
            (@TO neurovarietyDimension@: a Jacobian rank at a random point, or exactly by
            implicitization), and the fiber of the parametrization through a weight point
            (@TO parametrizationFiber@). Records of the computations can be printed as JSON
            (@TO printRecord@), which is how the Python package lightning_cas reads them.

            The weights are ordered layer by layer and, inside a layer, head by head: the entries
            of $Q$, then $K$, then $V$, each row by row (@TO lightningWeights@).
        Example
            neurovarietyDimension({3,3,3}, {2,2}, 2)
            neurovarietyDimension({2,2}, {1}, 2, Strategy => "Implicit")
    Subnodes
        :The network
        lightningWeights
        lightningNetwork
        :Dimension
        neurovarietyDimension
        dimensionRecord
        coefficientJacobian
        :Fibers
        fiberIdeal
        parametrizationFiber
        :Records
        printRecord
        :Options
        Heads
        Columns
        Generators
        WitnessTries
///

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
        fiberIdeal
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
        printRecord
        (printRecord, HashTable)
    Headline
        print a record as one line of JSON
    Usage
        printRecord H
    Inputs
        H:HashTable
            such as the output of @TO dimensionRecord@ or @TO parametrizationFiber@
    Consequences
        Item
            prints {\tt @@LCAS-JSON@@ } followed by the record as JSON on one line. Integers and
            Booleans stay JSON numbers and Booleans; rationals, elements of prime fields and
            polynomials become their @TO toString@, so nothing is rounded.
    Description
        Example
            printRecord dimensionRecord({2,2}, {1}, 2)
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
        whether the implicit dimension record carries the generators of the ideal
    Description
        Text
            An option of @TO dimensionRecord@ (default false).
        Example
            (dimensionRecord({2,1}, {1}, 2, Strategy => "Implicit", Generators => true))#"generators"
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

-- hand checks: one layer of width one, one and two heads
TEST ///
F = lightningNetwork({1,1}, {1}, 2)
R = ring F
(qq, kk, vv, x1, x2) = toSequence gens R;
assert(entries F == {{qq*kk*vv*(x1^2 + x2^2)*x1, qq*kk*vv*(x1^2 + x2^2)*x2}})
///

TEST ///
assert(apply(lightningWeights({1,1}, {1}, Heads => {2}), toString)
    == {"q_(1,1,1,1)", "k_(1,1,1,1)", "v_(1,1,1,1)", "q_(1,2,1,1)", "k_(1,2,1,1)", "v_(1,2,1,1)"})
F = lightningNetwork({1,1}, {1}, 2, Heads => {2})
R = ring F
(q1, k1, v1, q2, k2, v2, x1, x2) = toSequence gens R;
assert(entries F == {{(q1*k1*v1 + q2*k2*v2)*(x1^2 + x2^2)*x1, (q1*k1*v1 + q2*k2*v2)*(x1^2 + x2^2)*x2}})
///

TEST ///
-- two layers of width one, heads {2,1}, one token: layer 1 gives c x^3 with c = sum_h q_h k_h v_h,
-- layer 2 gives q k v (c x^3)^3
assert(apply(lightningWeights({1,1,1}, {1,1}, Heads => {2,1}), toString) == {"q_(1,1,1,1)", "k_(1,1,1,1)",
    "v_(1,1,1,1)", "q_(1,2,1,1)", "k_(1,2,1,1)", "v_(1,2,1,1)", "q_(2,1,1)", "k_(2,1,1)", "v_(2,1,1)"})
F = lightningNetwork({1,1,1}, {1,1}, 1, Heads => {2,1})
R = ring F
w = gens R;
c = w#0*w#1*w#2 + w#3*w#4*w#5;
assert(entries F == {{w#6*w#7*w#8 * c^3 * w#9^9}})
///

TEST ///
-- a 1x1 attention layer on one width-2 token: (v.x)(k.x)(q.x), one column per weight ordering
F = lightningNetwork({2,1}, {1}, 1)
R = ring F
(q1, q2, k1, k2, v1, v2, x1, x2) = toSequence gens R;
assert(entries F == {{(v1*x1 + v2*x2)*(k1*x1 + k2*x2)*(q1*x1 + q2*x2)}})
///

TEST ///
-- the dimension from the Jacobian and from the implicit ideal agree, with one and two heads
setRandomSeed 1
assert(neurovarietyDimension({2,1}, {1}, 2) == 4)
assert(neurovarietyDimension({2,1}, {1}, 2, Strategy => "Implicit") == 4)
assert(neurovarietyDimension({2,2}, {1}, 2) == neurovarietyDimension({2,2}, {1}, 2, Strategy => "Implicit"))
-- first output column: (q.x_1) S(x_1, x_2) with S = sum_l (v.x_l)(k.x_l), a linear form times a
-- quadratic form from a rank-one matrix v k^T: dimension 2 + 3 - 1 = 4 with one head; two heads
-- give every element of (linear forms) (x) (the 3-dimensional span of such S): 2 * 3 = 6
assert(neurovarietyDimension({2,1}, {1}, 2, Heads => {2}) == 6)
assert(neurovarietyDimension({2,1}, {1}, 2, Heads => {2}, Strategy => "Implicit") == 6)
-- products of three linear forms in three variables: 9 parameters, 2 scalings
assert(neurovarietyDimension({3,1}, {1}, 1) == 7)
///

TEST ///
setRandomSeed 0
assert(neurovarietyDimension({3,3,3}, {2,2}, 2) == 23)
r = dimensionRecord({3,3,3}, {2,2}, 2, CoefficientRing => ZZ/32003)
assert(r#"prime" == 32003 and r#"rank" == 23 and r#"parameters" == 42)
///

TEST ///
-- the fiber through a point of a 2 -> 1 layer on two tokens
setRandomSeed 0
F = parametrizationFiber({2,1}, {1}, 2, {1,2,3,-1,1,1})
assert(F#"parameters" == 6)
assert(any(F#"components", c -> c#"contains_point"))
assert(F#"fiber_dimension" == 6 - neurovarietyDimension({2,1}, {1}, 2))
I = fiberIdeal({2,1}, {1}, 2, {1,2,3,-1,1,1})
assert(sub(I, matrix {{1,2,3,-1,1,1}}) == 0)
///

TEST ///
-- bad input is refused
assert(try (lightningNetwork({2,0}, {1}, 1); false) else true)
assert(try (neurovarietyDimension({2,2}, {1,1}, 1); false) else true)
assert(try (neurovarietyDimension({2,2}, {1}, 2, Columns => 3); false) else true)
assert(try (neurovarietyDimension({2,2}, {1}, 2, Strategy => "nope"); false) else true)
assert(try (lightningNetwork({2,2}, {1}, 1, Heads => {1,1}); false) else true)
assert(try (fiberIdeal({2,1}, {1}, 2, {1,2}); false) else true)
///

end--

restart
loadPackage("LightningCAS", FileName => "m2/LightningCAS.m2", Reload => true)
check "LightningCAS"
