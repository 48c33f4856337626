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


-- positions of a greedy basis of the linear span of a list of polynomials (first come, first kept)
lcasSpanBasis = polys -> (
    C := lift(last coefficients matrix {polys}, coefficientRing ring first polys);
    chosen := {};
    r := 0;
    scan(#polys, j -> (
            s := rank C_(append(chosen, j));
            if s > r then (chosen = append(chosen, j); r = s)));
    chosen);

-- closure of the image of the parameter variety {J = 0} (J homogeneous, in the ring of F) under
-- the homogeneous polynomials F (zeros allowed), as an ideal of the
-- standard-graded ring S (one variable per polynomial): the kernel of the map to the quotient
-- ring, graded (ker on R/J is far faster than eliminating from the graph ideal
-- J + (y_i - f_i) with an elimination order: 19 s against > 300 s for (3,1,2), t = 2)
lcasImage = (F, J, S) -> (
    e := first degree first select(F, f -> f != 0);
    Sd := newRing(S, Degrees => apply(F, f -> if f == 0 then e else first degree f));
    Rs := ring first F;
    Rq := if J == 0 then Rs else Rs / J;
    Fq := apply(F, f -> if f == 0 then 0_Rq else sub(f, Rq));
    (map(S, Sd, vars S)) ker map(Rq, Sd, Fq));

-- The implicit ideal of the coefficient map (first `columns` output columns) in coordinates
-- y_1..y_n of a basis of the linear span of the coefficients: an injective linear image of the
-- neurovariety, so dimension and degree are unchanged. Returns (ideal, #coefficients, n).
lcasImplicit = (shapes, widths, tokens, kk, columns) -> (
    (R, T, X) := lcasTower(shapes, widths#0, tokens, kk);
    Phi := lcasForward(lcasLayers(shapes, apply(numgens R, k -> R_k * 1_T)), X);
    coeffPolys := lcasCoefficients(Phi_(toList(0 .. columns - 1)), R);
    basisPolys := coeffPolys_(lcasSpanBasis coeffPolys);
    if not all(basisPolys, isHomogeneous) then error "LightningCAS: coefficient polynomials are not homogeneous";
    y := getSymbol "y";
    S1 := kk[y_1 .. y_(#basisPolys)];
    (lcasImage(basisPolys, ideal 0_R, S1), #coeffPolys, #basisPolys));

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
