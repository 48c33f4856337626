---------------------------------------------------------------------------------------------
-- Jacobian of the coefficient map at a random point, by forward differentiation
---------------------------------------------------------------------------------------------

-- A dual matrix: a value and its P tangents (one per weight). The forward pass of Networks.m2 run on
-- dual matrices is forward differentiation: these are the operations it uses.
LcasDual = new Type of HashTable
lcasDual = (v, t) -> new LcasDual from {"value" => v, "tangents" => t}
LcasDual * LcasDual := (A, B) -> lcasDual(A#"value" * B#"value",
    apply(#(A#"tangents"), k -> (A#"tangents")#k * B#"value" + A#"value" * (B#"tangents")#k))
LcasDual + LcasDual := (A, B) -> lcasDual(A#"value" + B#"value",
    apply(#(A#"tangents"), k -> (A#"tangents")#k + (B#"tangents")#k))
transpose LcasDual := A -> lcasDual(transpose A#"value", apply(A#"tangents", transpose))
lcasEntrywise = (A, B) -> matrix table(numrows A, numcols A, (i, j) -> A_(i, j) * B_(i, j))
lcasEntrywisePower(LcasDual, ZZ) := (A, r) -> (
    if r == 1 then return A;
    V := A#"value";
    slope := r * lcasEntrywisePower(V, r - 1);  -- d(v^r) = r v^(r-1) dv, entry by entry
    lcasDual(lcasEntrywisePower(V, r), apply(A#"tangents", D -> lcasEntrywise(slope, D))))
lcasCausalMask LcasDual := A -> lcasDual(lcasCausalMask A#"value", apply(A#"tangents", lcasCausalMask))
lcasOnesRow LcasDual := A -> (O := lcasOnesRow A#"value"; lcasDual(O, apply(A#"tangents", D -> 0 * O)))

-- the output columns at the point pt and their derivatives in every weight, as a list of P
-- matrices over the token ring T
lcasTangents = (N, pt, T, columns) -> (
    P := #pt;
    (d0, tokens) := (N#"input", N#"tokens");
    pos := 0;
    X := matrix table(d0, tokens, (r, j) -> T_(r*tokens + j));
    weight := (m, n) -> (
        M := matrix table(m, n, (r, c) -> pt#(pos + r*n + c) * 1_T);
        tang := apply(P, k -> (
                if k < pos or k >= pos + m*n then map(T^m, T^n, 0)
                else (r := (k - pos) // n; c := (k - pos) % n; map(T^m, T^n, {(r, c) => 1_T}))));
        pos = pos + m*n;
        lcasDual(M, tang));
    Z := lcasForward(N, lcasCutWeights(N, weight), lcasDual(X, toList(P : map(T^d0, T^tokens, 0))));
    cols := lcasOutputColumns(N, columns);
    apply(Z#"tangents", M -> M_cols));

coefficientJacobian = method(Options => {Heads => null, CoefficientRing => null, Columns => 1})
coefficientJacobian NeuralNetwork := o -> N -> (
    lcasColumnsCheck(o.Columns, N#"tokens");
    kk := if o.CoefficientRing === null then ZZ/lcasDefaultPrime else o.CoefficientRing;
    P := N#"parameters";
    T := kk[lcasTokenSymbols(N#"input", N#"tokens")];
    pt := apply(P, k -> random kk);
    dF := lcasTangents(N, pt, T, o.Columns);
    -- one row block per output entry: coefficients of every token monomial, one column per weight
    entryRows := transpose apply(dF, M -> flatten entries M);
    blocks := apply(entryRows, r -> lift(last coefficients matrix {r}, kk));
    fold((A, B) -> A || B, blocks))
coefficientJacobian(List, List, ZZ) := o -> (widths, attention, tokens) ->
    coefficientJacobian(neuralNetwork(widths, attention, tokens, o.Heads), CoefficientRing => o.CoefficientRing,
        Columns => o.Columns)

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

-- The implicit ideal of the coefficient map (the output columns used) in coordinates y_1..y_n of a
-- basis of the linear span of the coefficients: an injective linear image of the neurovariety, so
-- dimension and degree are unchanged. Returns (ideal, #coefficients, n). A residual block makes the
-- coefficients inhomogeneous (the identity term has degree 0 in the weights): then the kernel is
-- computed without a grading, and the image closure is an affine variety rather than a cone.
lcasImplicit = (N, kk, columns) -> (
    (R, T, X) := lcasTower(N, kk);
    Phi := lcasForward(N, lcasBlockWeights(N, apply(numgens R, k -> R_k * 1_T)), X);
    coeffPolys := lcasCoefficients(Phi_(lcasOutputColumns(N, columns)), R);
    basisPolys := coeffPolys_(lcasSpanBasis coeffPolys);
    y := getSymbol "y";
    S1 := kk[y_1 .. y_(#basisPolys)];
    I := if all(basisPolys, isHomogeneous) then lcasImage(basisPolys, ideal 0_R, S1)
        else ker map(R, S1, basisPolys);
    (I, #coeffPolys, #basisPolys));

dimensionRecord = method(Options => {Heads => null, Strategy => "Jacobian", CoefficientRing => null,
        Columns => 1, Generators => false})
dimensionRecord NeuralNetwork := o -> N -> (
    lcasColumnsCheck(o.Columns, N#"tokens");
    P := N#"parameters";
    kk := null;
    if o.Strategy === "Jacobian" then (
        kk = if o.CoefficientRing === null then ZZ/lcasDefaultPrime else o.CoefficientRing;
        J := coefficientJacobian(N, CoefficientRing => kk, Columns => o.Columns);
        rk := rank J;
        new HashTable from lcasRecordBase() | {"strategy" => "Jacobian", "dimension" => rk, "rank" => rk,
            "rows" => numrows J, "prime" => char kk, "parameters" => P})
    else if o.Strategy === "Implicit" then (
        kk = if o.CoefficientRing === null then QQ else o.CoefficientRing;
        (I, ncoeff, nbasis) := lcasImplicit(N, kk, o.Columns);
        G := flatten entries mingens I;
        new HashTable from lcasRecordBase() | {"strategy" => "Implicit", "dimension" => dim I,
            "degree" => degree I, "parameters" => P, "coefficients" => ncoeff, "linear_span" => nbasis,
            "generator_degrees" => apply(G, g -> first degree g), "prime" => char kk}
            | (if o.Generators then {"generators" => G} else {}))
    else error "LightningCAS: Strategy must be \"Jacobian\" or \"Implicit\"")
dimensionRecord(List, List, ZZ) := o -> (widths, attention, tokens) ->
    dimensionRecord(neuralNetwork(widths, attention, tokens, o.Heads), Strategy => o.Strategy,
        CoefficientRing => o.CoefficientRing, Columns => o.Columns, Generators => o.Generators)

neurovarietyDimension = method(Options => options dimensionRecord)
neurovarietyDimension NeuralNetwork := o -> N -> (dimensionRecord(N, o))#"dimension"
neurovarietyDimension(List, List, ZZ) := o -> (widths, attention, tokens) ->
    (dimensionRecord(widths, attention, tokens, o))#"dimension"
