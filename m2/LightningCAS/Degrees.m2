---------------------------------------------------------------------------------------------
-- degree and Euclidean-distance degree of a neurovariety (any stack of polynomial blocks)
---------------------------------------------------------------------------------------------
-- Coordinates, and why:
--  * the degree and the generic ED degree are those of the neurovariety in any linear coordinates of
--    its coefficient span: a basis of the span of the coefficients of the output columns used (as
--    the implicit dimension does), an injective linear image;
--  * the standard ED degree is that of the Euclidean form in those coordinates y_i (basis dependent);
--  * the data metric sum_n |f(X_n)|^2 is the Euclidean form of the evaluations f(X_n): its
--    coordinates are a basis w of the span of the entries of f(X_1), ..., f(X_N) as polynomials in
--    the weights, with the Gram form C C^T of the evaluation in that basis. When the evaluation map
--    has a kernel on the span (few samples) the variety in w is the projection of the neurovariety,
--    which is where the critical points of the degenerate form live.
-- Exact counts run over ZZ/p (the Lagrange ideal at a random data point u, saturated by the
-- singular locus); numerical ones over CC (NumericalImplicitization, MonodromySolver).

lcasMetric = metric -> (
    if not (member(metric, {"generic", "standard"}) or instance(metric, List)) then
        error "LightningCAS: Metric must be \"generic\", \"standard\" or a list of input token matrices";
    metric)

-- a basis of the coefficient span of the output columns used, as polynomials in the weights over kk
lcasSpanCoordinates = (N, kk, columns) -> (
    lcasColumnsCheck(columns, N#"tokens");
    (R, T, X) := lcasTower(N, kk);
    Phi := lcasForward(N, lcasBlockWeights(N, apply(numgens R, k -> R_k * 1_T)), X);
    coeffPolys := lcasCoefficients(Phi_(lcasOutputColumns(N, columns)), R);
    if #coeffPolys == 0 then error "LightningCAS: the network computes the zero function";
    (R, coeffPolys_(lcasSpanBasis coeffPolys), #coeffPolys))

-- the evaluations at the inputs (each a d_0 x t list of rows): a basis of their span and the Gram
-- form of the evaluation map in that basis (sum_n |f(X_n)|^2 = w^T G w)
lcasDataCoordinates = (N, kk, inputs) -> (
    R := kk[N#"weights"];
    W := lcasBlockWeights(N, gens R);
    evals := flatten apply(inputs, Xn -> (
            M := matrix apply(Xn, row -> apply(row, v -> v * 1_R));
            if numrows M != N#"input" or numcols M != N#"tokens" then
                error "LightningCAS: every input must be a d_0 x t matrix";
            flatten entries lcasForward(N, W, M)));
    nonzero := select(evals, f -> f != 0);
    if #nonzero == 0 then error "LightningCAS: the network vanishes on every input";
    chosen := lcasSpanBasis nonzero;
    B := nonzero_chosen;
    Call := lift(last coefficients(matrix {nonzero}, Monomials => monomials matrix {nonzero}), kk);
    Cm := solve(Call_chosen, Call);  -- nonzero = B * Cm
    (R, B, Cm * transpose Cm))

-- the ideal of the closure of the image of the polynomials B, in variables y_1..y_#B
lcasCoordinateIdeal = B -> (
    R := ring first B;
    S := (coefficientRing R)[(getSymbol "y")_1 .. (getSymbol "y")_(#B)];
    if all(B, isHomogeneous) then lcasImage(B, ideal 0_R, S) else ker map(R, S, B))

-- the rank of the Jacobian of B at a random rational point: the dimension of the image
lcasImageDimension = B -> (
    R := ring first B;
    pt := apply(numgens R, k -> random(-1000, 1000) / random(1, 1000));
    rank sub(jacobian matrix {B}, matrix {pt / (c -> c * 1_(coefficientRing R))}))

-- the critical ideal of q(y - u) = (y - u)^T G (y - u) on the smooth locus of V(I): the Lagrange
-- ideal I + minors(c+1, [Jac I | G (y - u)]) saturated by the singular locus I + minors(c, Jac I)
lagrangeIdeal = method()
lagrangeIdeal(Ideal, Matrix, Matrix) := (I, G, u) -> (
    S := ring I;
    n := numgens S;
    if numrows G != n or numcols G != n or numrows u != n or numcols u != 1 then
        error "LightningCAS: the form must be n x n and the data point n x 1 (n = the number of variables)";
    g := sub(G, S) * (transpose vars S - sub(u, S));
    c := codim I;
    if c == 0 then return ideal g;  -- the whole space: the one critical point y = u
    Jac := jacobian I;
    saturate(I + minors(c + 1, Jac | g), I + minors(c, Jac)))

-- a random form of the kind asked for, n x n over kk: generic = M^T M for a random M (a random
-- linear change of coordinates, then the Euclidean form), standard = the identity
lcasForm = (metric, n, kk) -> if metric === "standard" then id_(kk^n) else (
    M := random(kk^n, kk^n);
    transpose M * M)

-- exact (mod p) ED degree of a neurovariety
lcasLagrangeED = (N, metric, p, columns) -> (
    kk := ZZ/p;
    (R, B, G) := if instance(metric, List) then lcasDataCoordinates(N, kk, metric)
        else ((R0, B0, nc) := lcasSpanCoordinates(N, kk, columns); (R0, B0, lcasForm(metric, #B0, kk)));
    t0 := cpuTime();
    I := lcasCoordinateIdeal B;
    t1 := cpuTime();
    E := lagrangeIdeal(I, G, random(kk^(#B), kk^1));
    {"coordinates" => #B, "dimension" => dim I, "degree of the variety" => degree I,
        "ed_degree" => (if dim E == 0 then degree E else null), "critical_dimension" => dim E,
        "implicit_cpu_ms" => floor(1000 * (t1 - t0)), "critical_cpu_ms" => floor(1000 * (cpuTime() - t1))})

-- m weights in a random order whose columns of the Jacobian at a random rational point have rank m
lcasFreeWeights = (B, m) -> (
    R := ring first B;
    pt := apply(numgens R, k -> random(-1000, 1000) / random(1, 1000));
    J := sub(jacobian matrix {B}, matrix {pt / (c -> c * 1_(coefficientRing R))});  -- P x n
    chosen := {};
    scan(random toList(0 .. numgens R - 1), k -> if #chosen < m and rank J^(append(chosen, k)) > #chosen then
        chosen = append(chosen, k));
    if #chosen < m then error "LightningCAS: no gauge of free weights found";
    sort chosen)

-- the data coordinates over QQ rescaled exactly for floating point: each coordinate to largest
-- coefficient 1 (y = D y', so the form becomes D G D) and the form to largest entry 1. A linear change
-- of coordinates and a scalar leave the ED degree alone; without them the coefficients have the size
-- of the inputs to the degree of the network (1e-600 or 1e900 from entries 1e-200 or 1e300), which CC
-- rounds to 0 or infinity
lcasUnitScale = (R, B, G) -> (
    sc := apply(B, f -> max apply(flatten entries last coefficients f, a -> abs lift(a, QQ)));
    D := diagonalMatrix(QQ, sc);
    G = D * lift(G, QQ) * D;
    top := max apply(flatten entries G, abs);
    (R, apply(#B, i -> (1 / sc#i) * B#i), if top == 0 then G else (1 / top) * G))

-- numerical ED degree: critical points of s -> q(F(w0 + L s) - u), s the m free weights of a gauge
-- (the others fixed at random values w0), by monodromy in the data point u; regular critical
-- points off the vertex whose images are distinct are counted (a lower bound unless confirmed); target > 0:
-- the number of critical points on the slice an exact count gave, where monodromy may stop
lcasMonodromyED = (N, metric, columns, repeats, target) -> (
    needsPackage "MonodromySolver";
    (R, B, G) := if instance(metric, List) then lcasUnitScale lcasDataCoordinates(N, QQ, metric)
        else ((R0, B0, nc) := lcasSpanCoordinates(N, QQ, columns); (R0, B0, null));
    n := #B;
    m := lcasImageDimension B;
    Gc := if G =!= null then sub(G, CC) else if metric === "standard" then id_(CC^n) else (
        M := random(CC^n, CC^n); transpose M * M);
    -- the image fills its space: the one critical point y = u
    if m == n then return {"coordinates" => n, "dimension" => m, "ed_degree" => 1, "solutions" => 1,
        "regular_solutions" => 1, "paths" => 0, "repeats" => repeats, "monodromy_cpu_ms" => 0};
    P := numgens R;
    homogeneous := all(B, isHomogeneous);
    uSym := getSymbol "u"; sSym := getSymbol "s";
    Cu := CC[uSym_1 .. uSym_n];
    Cs := Cu[sSym_1 .. sSym_m];
    -- the gauge: m of the weights free (chosen so that the differential is onto the tangent space), the
    -- others fixed at random values; the symmetry orbits then meet the slice in few points
    free := lcasFreeWeights(B, m);
    w0 := random(CC^P, CC^1);
    L := map(CC^P, CC^m, flatten apply(m, j -> {(free#j, j) => 1_CC}));
    slice := flatten entries (sub(w0, Cs) + sub(L, Cs) * transpose vars Cs);
    RC := CC(monoid R);
    toSlice := map(Cs, RC, slice);
    Fs := apply(B, f -> toSlice sub(f, RC));
    Jt := jacobian matrix {Fs};  -- m x n
    uCol := transpose sub(vars Cu, Cs);
    eqs := Jt * sub(Gc, Cs) * (transpose matrix {Fs} - uCol);
    PS := (value "polySystem") flatten entries eqs;
    -- a seed: a random s0 and a data point u0 for which s0 is critical
    s0 := random(CC^1, CC^m);
    at0 := map(CC, Cs, flatten entries s0 | toList(n : 0_CC));
    atS := z -> map(CC, Cs, z | toList(n : 0_CC));
    F0 := transpose matrix {apply(Fs, f -> at0 f)};
    A0 := ((atS flatten entries s0) Jt) * Gc;
    vb := random(CC^(n - m), CC^1);
    va := solve(A0_(toList(0 .. m - 1)), -(A0_(toList(m .. n - 1))) * vb);
    u0 := F0 - (va || vb);
    t0 := cpuTime();
    (V, npaths) := (value "monodromySolve")(PS, (value "point") {flatten entries u0}, {(value "point") s0},
        (value "NumberOfRepeats") => repeats, (value "NumberOfNodes") => 4, Verbose => false,
        (value "TargetSolutionCount") => (if target > 0 then target else null));
    sols := (value "points") V#(value "PartialSols");
    -- images of the regular critical points, told apart to 1e-6 relative to their size
    images := new MutableHashTable;
    regular := 0;
    scan(sols, x -> (
            z := x#(value "Coordinates");
            J0 := (atS z) Jt;
            sv := first SVD J0;
            y := apply(Fs, f -> (atS z) f);
            scale := max(1, max apply(y, abs));
            -- a regular point of the slice's map, off the vertex of a cone (a singular point)
            if min sv > 1e-6 * max(1, max sv) and (not homogeneous or max apply(y, abs) > 1e-8) then (
                regular = regular + 1;
                key := toString apply(y, c -> (round(6, realPart c / scale), round(6, imaginaryPart c / scale)));
                images#key = 1)));
    {"coordinates" => n, "dimension" => m, "ed_degree" => #(keys images), "solutions" => #sols,
        "regular_solutions" => regular, "paths" => (if instance(npaths, ZZ) then npaths else -1),
        "repeats" => repeats, "monodromy_cpu_ms" => floor(1000 * (cpuTime() - t0))})

-- the data metric's record also gives the dimension of the coefficient span (degenerate when larger)
lcasSpanEntry = (N, metric, kk, columns) -> if instance(metric, List) then
    {"span" => #((lcasSpanCoordinates(N, kk, columns))#1)} else {}

edDegreeRecord = method(Options => {Metric => "generic", Strategy => "Lagrange", CoefficientRing => null,
        Columns => 1, MonodromyRepeats => 8, TargetCount => 0})
edDegreeRecord NeuralNetwork := o -> N -> (
    metric := lcasMetric o.Metric;
    base := lcasRecordBase() | {"parameters" => N#"parameters", "strategy" => o.Strategy,
        "metric" => (if instance(metric, List) then "data" else metric)};
    new HashTable from base | (
        if o.Strategy === "Lagrange" then (
            p := if o.CoefficientRing === null then 32003 else char o.CoefficientRing;
            if p == 0 then error "LightningCAS: the Lagrange strategy runs over ZZ/p (CoefficientRing => ZZ/p)";
            {"prime" => p} | lcasLagrangeED(N, metric, p, o.Columns) | lcasSpanEntry(N, metric, ZZ/p, o.Columns))
        else if o.Strategy === "Monodromy" then (
            lcasCount("MonodromyRepeats", o.MonodromyRepeats, 1);
            lcasCount("TargetCount", o.TargetCount, 0);
            lcasMonodromyED(N, metric, o.Columns, o.MonodromyRepeats, o.TargetCount) | {"target" => o.TargetCount} |
                lcasSpanEntry(N, metric, QQ, o.Columns))
        else error "LightningCAS: Strategy must be \"Lagrange\" or \"Monodromy\""))
edDegreeRecord(List, List, ZZ) := o -> (widths, attention, tokens) ->
    edDegreeRecord(neuralNetwork(widths, attention, tokens), o)

edDegree = method(Options => options edDegreeRecord)
edDegree NeuralNetwork := o -> N -> (edDegreeRecord(N, o))#"ed_degree"
edDegree(List, List, ZZ) := o -> (widths, attention, tokens) -> (edDegreeRecord(widths, attention, tokens, o))#"ed_degree"
-- the ED degree of any variety V(I) for the form G (generic: a random M^T M), exact mod p
edDegree Ideal := o -> I -> (
    kk := coefficientRing ring I;
    if char kk == 0 then error "LightningCAS: edDegree of an ideal runs over ZZ/p";
    n := numgens ring I;
    E := lagrangeIdeal(I, lcasForm(lcasMetric o.Metric, n, kk), random(kk^n, kk^1));
    if dim E != 0 then error "LightningCAS: the critical ideal is not zero-dimensional (u not generic?)";
    degree E)

-- the degree: exactly from the implicit ideal, or numerically from a pseudo-witness set with the
-- trace test (NumericalImplicitization); a count that fails the trace test is a lower bound
degreeRecord = method(Options => {Strategy => "Implicit", Columns => 1, CoefficientRing => QQ})
degreeRecord NeuralNetwork := o -> N -> (
    base := lcasRecordBase() | {"parameters" => N#"parameters", "strategy" => o.Strategy};
    if o.Strategy === "Implicit" then (
        (R, B, nc) := lcasSpanCoordinates(N, o.CoefficientRing, o.Columns);
        t0 := cpuTime();
        I := lcasCoordinateIdeal B;
        new HashTable from base | {"degree" => degree I, "dimension" => dim I, "coordinates" => #B,
            "coefficients" => nc, "prime" => char o.CoefficientRing,
            "implicit_cpu_ms" => floor(1000 * (cpuTime() - t0))})
    else if o.Strategy === "Numerical" then (
        needsPackage "NumericalImplicitization";
        (R1, B1, nc1) := lcasSpanCoordinates(N, QQ, o.Columns);
        RC := CC(monoid R1);
        t1 := cpuTime();
        W := (value "pseudoWitnessSet")(apply(B1, f -> sub(f, RC)), ideal 0_RC, Verbose => false);
        new HashTable from base | {"degree" => W.degree, "dimension" => lcasImageDimension B1,
            "coordinates" => #B1, "coefficients" => nc1, "trace" => toString W.trace,
            "trace_test_passed" => W#(value "isCompletePseudoWitnessSet"),
            "numerical_cpu_ms" => floor(1000 * (cpuTime() - t1))})
    else error "LightningCAS: Strategy must be \"Implicit\" or \"Numerical\"")
degreeRecord(List, List, ZZ) := o -> (widths, attention, tokens) -> degreeRecord(neuralNetwork(widths, attention, tokens), o)

neurovarietyDegree = method(Options => options degreeRecord)
neurovarietyDegree NeuralNetwork := o -> N -> (degreeRecord(N, o))#"degree"
neurovarietyDegree(List, List, ZZ) := o -> (widths, attention, tokens) -> (degreeRecord(widths, attention, tokens, o))#"degree"
