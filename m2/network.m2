-- lightning_cas: shared Macaulay2 code that builds a lightning self-attention network.
-- Expects (set by the rendered header): widths, attention, tokens (lists / integers of ZZ), and
-- optionally heads (heads per layer; one head per layer when the header does not set it).
-- Tokens are columns: X is d_0 x t; layer i maps Z to sum_h V_ih * Z * (transpose Z * transpose K_ih * Q_ih * Z).

lcasEmit = (key, val) -> (<< "@@LCAS@@ " << key << " " << toString val << endl;);

-- heads per layer: the header's list, or all 1 (an unset global is a Symbol, not a List)
lcasHeads = () -> if instance(heads, List) then heads else apply(#attention, i -> 1);

-- names of the weight variables, layer by layer, head by head: Q_ih (a_i x d_{i-1}), K_ih (same),
-- V_ih (d_i x d_{i-1}); q_(i,r,c) in a one-head layer, q_(i,h,r,c) in a layer with several heads
lcasWeightSymbols = () -> flatten for i from 1 to #attention list (
    a := attention#(i-1); d := widths#(i-1); e := widths#i; H := (lcasHeads())#(i-1);
    idx := (h, r, c) -> if H == 1 then (i, r, c) else (i, h, r, c);
    flatten for h from 1 to H list (
        (flatten for r from 1 to a list for c from 1 to d list (getSymbol "q")_(idx(h,r,c)))
        | (flatten for r from 1 to a list for c from 1 to d list (getSymbol "k")_(idx(h,r,c)))
        | (flatten for r from 1 to e list for c from 1 to d list (getSymbol "v")_(idx(h,r,c)))));

lcasTokenSymbols = () -> flatten for r from 1 to widths#0 list for j from 1 to tokens list (getSymbol "x")_(r,j);

-- weightValues: a list of ring elements, one per weight symbol, in lcasWeightSymbols order.
-- Returns per layer the triple (Q, K, V) (a Sequence) for a one-head layer, or the List of its
-- heads' triples, as matrices over the ring of the values.
lcasLayers = weightValues -> (
    pos := 0;
    for i from 1 to #attention list (
        a := attention#(i-1); d := widths#(i-1); e := widths#i; H := (lcasHeads())#(i-1);
        take1 := (m, n) -> (M := matrix table(m, n, (r, c) -> weightValues#(pos + r*n + c)); pos = pos + m*n; M);
        hs := for h from 1 to H list (Q := take1(a, d); K := take1(a, d); V := take1(e, d); (Q, K, V));
        if H == 1 then first hs else hs));

-- The network output as a matrix (d_L x t) given the layers and the token matrix X.
lcasNetwork = (layers, X) -> (
    Z := X;
    for layer in layers do (
        hs := if instance(layer, List) then layer else {layer};
        Z = sum apply(hs, QKV -> (
                (Q, K, V) := QKV;
                V * Z * ((transpose Z) * (transpose K) * Q * Z))));
    Z);

-- Forward-mode differentiation: a "dual" is (value, list of P tangents), one tangent per weight.
lcasDualMul = (A, B) -> (A#0 * B#0, apply(#(A#1), k -> (A#1)#k * B#0 + A#0 * (B#1)#k));
lcasDualAdd = (A, B) -> (A#0 + B#0, apply(#(A#1), k -> (A#1)#k + (B#1)#k));
lcasDualT = A -> (transpose A#0, apply(A#1, transpose));

-- Jacobian of the network output (first `columns` columns) with respect to every weight, at the
-- point pt (a list of P scalars), as a list of P matrices over the token ring T.
lcasNetworkTangents = (pt, T, columns) -> (
    P := #pt;
    zeroLike := M -> map(target M, source M, 0);
    pos := 0;
    X := matrix table(widths#0, tokens, (r, j) -> T_(r*tokens + j));
    Z := (X, apply(P, k -> zeroLike X));
    for i from 1 to #attention do (
        a := attention#(i-1); d := widths#(i-1); e := widths#i; H := (lcasHeads())#(i-1);
        weight := (m, n) -> (
            M := matrix table(m, n, (r, c) -> pt#(pos + r*n + c) * 1_T);
            tang := apply(P, k -> (
                    if k < pos or k >= pos + m*n then map(T^m, T^n, 0)
                    else (r := (k - pos) // n; c := (k - pos) % n; map(T^m, T^n, {(r, c) => 1_T}))));
            pos = pos + m*n;
            (M, tang));
        ZT := lcasDualT Z;
        terms := for h from 1 to H list (
            Q := weight(a, d); K := weight(a, d); V := weight(e, d);
            att := lcasDualMul(lcasDualMul(ZT, lcasDualT K), lcasDualMul(Q, Z));
            lcasDualMul(lcasDualMul(V, Z), att));
        Z = fold(lcasDualAdd, terms));
    cols := toList(0 .. columns - 1);
    (Z#0_cols, apply(Z#1, M -> M_cols)));
