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
