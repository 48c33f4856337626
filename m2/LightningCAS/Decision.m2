---------------------------------------------------------------------------------------------
-- decision boundaries: their ED degree and the robustness radius of an input
---------------------------------------------------------------------------------------------
-- A network N at weights W with a readout w (d_L x t) decides by the sign of
-- g(X) = sum_ij w_ij phi_W(X)_ij, a homogeneous polynomial in the d_0 t input coordinates
-- x_(r,j) (row r, token j). The decision boundary is B = {g = 0}, a cone. Its ED degree is the
-- number of complex critical points of |X - u|^2 on the smooth locus of B for generic u: the
-- solutions of x - u = lambda grad g, g = 0 with grad g != 0. B is taken reduced (g is replaced
-- by its squarefree part), so a readout that makes g a power or a product counts each component
-- once.
--   exactly (mod p): the ideal (g) + 2-minors of [x - u | grad g], saturated by the singular locus
--     (grad g), for random u in (ZZ/p)^n: its degree;
--   numerically: the square system {x - u - lambda grad g, g} solved by total-degree homotopy
--     (NumericalAlgebraicGeometry solveSystem) at a random complex u; the distinct regular
--     finite solutions (a lower bound: a failed path can lose one).
-- At a given input X0 the real critical points are found both ways (eigenvalue solving of the
-- exact ideal over QQ, and the homotopy at u = X0); the homotopy solutions are checked by alpha
-- theory (NumericalCertification certifySolutions). The distance from X0 to B(R) is attained at a
-- real critical point of the smooth locus or at a real point of the singular locus; the singular
-- locus is searched the same way, component by component (its own critical points and its own
-- singular locus, down to points).

lcasRationalList = (name, L, n) -> (
    if not instance(L, List) or #L != n or not all(L, x -> instance(x, ZZ) or instance(x, QQ)) then
        error("LightningCAS: " | name | " must be a list of " | toString n | " rationals"));

lcasReal = x -> format(17, x + 0.0);

-- the numerical packages are loaded on first use only (they take a second): their functions by name
lcasNumerics = () -> (
    needsPackage "NumericalAlgebraicGeometry"; needsPackage "NumericalCertification"; needsPackage "EigenSolver";
    new HashTable from apply({"solveSystem", "polySystem", "zeroDimSolve", "status",
            "coordinates", "Regular", "point", "computeConstants", "certifyRegularSolution"}, k -> k => value k))

decisionBoundary = method(Options => {CoefficientRing => QQ})
decisionBoundary(NeuralNetwork, List, List) := o -> (N, values, readout) -> (
    lcasRationalList("the weights", values, N#"parameters");
    (dL, t) := (last N#"widths", N#"tokens");
    if #readout != dL or not all(readout, r -> instance(r, List)) then
        error("LightningCAS: the readout must be a " | toString dL | " x " | toString t | " list of rationals");
    scan(readout, r -> lcasRationalList("a readout row", r, t));
    S := (o.CoefficientRing)[lcasTokenSymbols(N#"input", t)];
    X := matrix table(N#"input", t, (r, j) -> S_(r*t + j));
    F := lcasForward(N, lcasBlockWeights(N, apply(values, v -> promote(v, S))), X);
    sum flatten table(dL, t, (i, j) -> promote(readout#i#j, S) * F_(i, j)))

-- the reduced polynomial of B: the product of the distinct irreducible factors of g
lcasSquarefree = g -> (
    if g == 0 then error "LightningCAS: the decision polynomial is zero";
    facs := select(toList factor g, f -> first degree f#0 > 0);
    product(facs, f -> f#0))

-- the critical ideal of |x - u|^2 on the smooth locus of {g = 0}, u a list of ring elements
lcasCriticalIdeal = (g, u) -> (
    S := ring g;
    J := jacobian ideal g;
    M := (transpose matrix{apply(numgens S, i -> S_i - u#i)}) | J;
    saturate(ideal(g) + minors(2, M), ideal J))

boundaryEDDegree = method(Options => {Modulus => 32003})
boundaryEDDegree RingElement := o -> g -> (
    kk := ZZ/(o.Modulus);
    S := kk(monoid ring g);
    gp := sub(lcasSquarefree g, S);
    if gp == 0 then error "LightningCAS: the decision polynomial vanishes mod the prime";
    I := lcasCriticalIdeal(gp, apply(numgens S, i -> random kk));
    if dim I > 0 then error "LightningCAS: the critical ideal is not zero-dimensional at a random point";
    degree I)

-- the Lagrange system {x - u - lambda grad g, g} in CC[x, lambda]
lcasLagrange = (g, u, kk) -> (
    S := ring g;
    n := numgens S;
    R := kk[gens S | {getSymbol "lambda"}];
    gR := sub(g, R);
    apply(n, i -> R_i - promote(u#i, R) - R_n * diff(R_i, gR)) | {gR})

-- each polynomial scaled to largest coefficient 1 (large integer coefficients make the tracker fail)
lcasNormalized = L -> apply(L, f -> f * (1 / max apply(flatten entries last coefficients f, a -> abs sub(a, CC))))

-- the distinct regular solutions of a square system by total-degree homotopy, as the union of runs
-- (each with its own random gamma: a run can lose a path) until two runs in a row add nothing, at most six
lcasUnionSolve = system -> (
    nag := lcasNumerics();
    distinct := {};
    quiet := 0;
    runs := 0;
    while quiet < 2 and runs < 6 do (
        before := #distinct;
        scan(select(nag#"solveSystem" system, p -> (nag#"status") p === nag#"Regular"), p ->
            if not any(distinct, q -> norm(matrix p - matrix q) < 1e-6 * (1 + norm matrix p))
            then distinct = append(distinct, p));
        runs = runs + 1;
        quiet = if #distinct == before then quiet + 1 else 0);
    distinct)

lcasSolveLagrange = (g, u) -> lcasUnionSolve lcasLagrange(g, u, CC)

boundaryCriticalPoints = method(Options => {Center => null})
boundaryCriticalPoints RingElement := o -> g -> (
    n := numgens ring g;
    u := if o.Center === null then apply(n, i -> random CC) else o.Center;
    lcasSolveLagrange(lcasSquarefree g, u))

lcasDistance = (p, X0) -> sqrt sum(#X0, i -> (realPart(p#i) - X0#i)^2);

-- the squared distances |x - X0|^2 at the points of a zero-dimensional ideal over QQ: the
-- univariate eliminant in D of I + (D - |x - X0|^2), its coefficients from D^0 up
lcasDistanceEliminant = (I, X0) -> (
    R := ring I;
    n := numgens R;
    dSym := getSymbol "D";
    RD := QQ[gens R | {dSym}, MonomialOrder => Eliminate n];
    ID := sub(I, RD) + ideal(RD_n - sum(n, i -> (RD_i - X0#i)^2));
    E := eliminate(take(gens RD, n), ID);
    h := (flatten entries gens E)#0;
    cs := apply(first degree h + 1, k -> coefficient(RD_n^k, h));
    apply(cs, c -> toString c))

-- the singular locus of B by its components over QQ: a linear component (a subspace) gives the
-- nearest point exactly, its orthogonal projection of X0; the others are listed as not searched
lcasSingularCandidates = (g, X0) -> (
    S := ring g;
    n := numgens S;
    I := ideal(g) + ideal jacobian g;
    if I == 1 then return {};
    apply(minimalPrimes I, P -> (
            P = ideal mingens P;
            if not all(flatten entries gens P, f -> first degree f == 1) then
                new HashTable from {"dimension" => dim P, "degree" => degree P, "linear" => false}
            else (
                -- nearest point of the subspace {A x = 0} to X0: X0 - A^T (A A^T)^-1 A X0
                A := if P == 0 then map(QQ^0, QQ^n, 0) else
                    lift(transpose (coefficients(gens P, Monomials => vars S))#1, QQ);
                x0 := transpose matrix{apply(X0, v -> v / 1)};
                y := if numrows A == 0 then x0 else x0 - (transpose A) * (inverse(A * transpose A)) * A * x0;
                d2 := (transpose(y - x0) * (y - x0))_(0, 0);
                new HashTable from {"dimension" => dim P, "degree" => 1, "linear" => true,
                    "nearest" => apply(flatten entries y, toString), "distance_squared" => toString d2})))
    )

-- alpha theory in exact arithmetic: the Lagrange system over the Gaussian rationals QQ[i], the
-- approximate solution rounded to QQ[i]; certified when alpha < (13 - 3 sqrt 17)/4, and then a
-- solution lies within 2 beta of the rounded point (the only one near it). A real point of a
-- real system gives a real solution (the ball is closed under conjugation); a point farther than
-- 2 beta from the real space gives a non-real one.
lcasGaussian = memoize(() -> (R := QQ[getSymbol "ii"]; R / ideal(R_0^2 + 1)))
lcasGaussianReal = z -> if instance(z, QQ) or instance(z, ZZ) then z else (
    (m, c) := coefficients(lift(z, ambient ring z));
    sum(numcols m, k -> if m_(0, k) == 1 then lift(c_(k, 0), QQ) else 0))
lcasRationalOf = x -> round(2^50 * x) / 2^50
lcasPointRecord = (p, X0) -> new HashTable from {
    "real" => apply(#X0, i -> lcasReal realPart p#i), "imag" => apply(#X0, i -> lcasReal imaginaryPart p#i),
    "distance" => lcasReal lcasDistance(p, X0)}

lcasCertify = (g, X0, p, nag) -> (
    K := lcasGaussian();
    system := (nag#"polySystem") lcasLagrange(g, X0, K);
    i := K_0;
    c := (nag#"coordinates") p;
    -- a point within 1e-8 of the real space is rounded to a real one: if it certifies, the solution is real
    nearReal := all(c, z -> abs imaginaryPart z < 1e-8 * (1 + abs z));
    q := (nag#"point"){apply(c, z -> promote(lcasRationalOf realPart z, K) + (if nearReal then 0_K else i * lcasRationalOf(imaginaryPart z)))};
    consts := (nag#"computeConstants")(system, q);
    ok := (nag#"certifyRegularSolution")(system, q, consts);
    beta := sqrt(lcasGaussianReal consts#1 + 0.0);
    imag := sqrt sum(c, z -> (imaginaryPart z)^2);
    new HashTable from {"certified" => ok, "beta" => beta,
        "real" => ok and nearReal,
        "nonreal" => ok and not nearReal and imag > 2 * beta + 2^-40})

-- X0 on B (g(X0) = 0, exactly over QQ): the nearest point of B is X0 itself, at distance 0; the Lagrange
-- system has the solution X0 with lambda = 0, singular when grad g(X0) = 0, so nothing is solved
lcasAt = (f, X0) -> sub(f, matrix{apply(X0, v -> v / 1)})
lcasOnBoundary = (g, X0) -> (lcasRationalList("the point", X0, numgens ring g); lcasAt(g, X0) == 0)
lcasOnBoundaryRecord = (g, X0) -> new HashTable from {"on_boundary" => true,
    "singular_point" => all(flatten entries jacobian ideal lcasSquarefree g, f -> lcasAt(f, X0) == 0)}

robustnessRadius = method()
robustnessRadius(RingElement, List) := (g, X0) -> (
    S := ring g;
    n := numgens S;
    lcasRationalList("the point", X0, n);
    g = lcasSquarefree g;
    -- exactly: the critical ideal at X0 over QQ, its degree and the eliminant of the distance
    crit := lcasCriticalIdeal(g, apply(X0, v -> promote(v, S)));
    zeroDim := dim crit <= 0;
    -- numerically: the homotopy at X0, each solution certified by alpha theory
    sols := lcasSolveLagrange(g, X0);
    nag := lcasNumerics();
    coords := nag#"coordinates";
    numeric := apply(sols, p -> (
            x := take(coords p, n);
            cert := lcasCertify(g, X0, p, nag);
            merge(lcasPointRecord(x, X0), new HashTable from {
                    "lambda" => {lcasReal realPart last coords p, lcasReal imaginaryPart last coords p},
                    "certified" => cert#"certified", "certified_real" => cert#"real",
                    "certified_nonreal" => cert#"nonreal", "beta" => lcasReal cert#"beta"},
                (a, b) -> b)));
    new HashTable from {
        "zero_dimensional" => zeroDim,
        "exact_count" => if zeroDim then degree crit else null,
        "distance_eliminant" => if zeroDim and crit != 1 then lcasDistanceEliminant(crit, X0) else {},
        "numeric_points" => numeric,
        "singular_components" => lcasSingularCandidates(g, X0)})

-- g before any count: zero, a nonzero constant, or the coefficients of its squarefree part over QQ (what
-- the exact count reduces mod p: lightning_cas chooses a prime that divides none of them)
boundaryPolynomialRecord = method()
boundaryPolynomialRecord(NeuralNetwork, List, List) := (N, values, readout) -> (
    g := decisionBoundary(N, values, readout);
    none := g == 0 or first degree g == 0;
    new HashTable from lcasRecordBase() | {"parameters" => N#"parameters", "zero" => g == 0,
        "constant" => g != 0 and first degree g == 0,
        "coefficients" => if none then {} else apply(flatten entries last coefficients lcasSquarefree g,
            c -> toString lift(c, QQ))})

-- the record of a boundary run (what lightning_cas reads): the polynomial's numbers, both counts,
-- and, with a point, the critical points and candidates of the radius
boundaryEDRecord = method(Options => {Modulus => 32003, NumericalRuns => 1})
boundaryEDRecord(NeuralNetwork, List, List, List) := o -> (N, values, readout, X0) -> (
    g := decisionBoundary(N, values, readout);
    base := lcasRecordBase() | {"parameters" => N#"parameters", "variables" => numgens ring g,
        "zero" => g == 0, "constant" => g != 0 and first degree g == 0};
    -- no boundary: g = 0 (every input on it) or a nonzero constant (none)
    if g == 0 or first degree g == 0 then return new HashTable from base;
    gr := lcasSquarefree g;
    t0 := cpuTime();
    exact := boundaryEDDegree(g, Modulus => o.Modulus);
    t1 := cpuTime();
    counts := apply(o.NumericalRuns, i -> #boundaryCriticalPoints g);
    t2 := cpuTime();
    parts := base | {"degree" => first degree g, "homogeneous" => isHomogeneous g, "reduced_degree" => first degree gr,
        "squarefree" => first degree gr == first degree g, "factors" => #select(toList factor g, f -> first degree f#0 > 0),
        "polynomial" => toString g, "prime" => o.Modulus,
        "ed_degree_exact" => exact, "ed_degree_numeric" => counts,
        "exact_cpu_ms" => round(1000 * (t1 - t0)), "numeric_cpu_ms" => round(1000 * (t2 - t1))};
    if #X0 > 0 then (
        t3 := cpuTime();
        parts = parts | {"radius" => (if lcasOnBoundary(g, X0) then lcasOnBoundaryRecord(g, X0) else
                    robustnessRadius(g, X0)), "radius_cpu_ms" => round(1000 * (cpuTime() - t3))});
    new HashTable from parts)

---------------------------------------------------------------------------------------------
-- critical points of training: the squared loss on the function space
---------------------------------------------------------------------------------------------
-- The loss sum_n |f(X_n) - Y_n|^2 depends on the function only through its values z = (f(X_n))_n,
-- a linear image of the function space; so its critical points on the function space are those of
-- |z - Y|^2 on the closure Z of {z(W)} (the projection of the neurovariety, when the data metric is
-- degenerate). Z is parametrized by the weights with positive-dimensional fibers: on a random
-- rational affine slice W = W0 + B s of the dimension r of Z (the rank of dz/dW at a random point),
-- the critical equations dL/ds = 0 are square; their regular solutions (total-degree homotopy)
-- with dz/ds of rank r map to the critical points of the smooth locus of Z. Per solution the
-- record has z, dz/ds and the Hessian of L(s) (complex; lightning_cas takes the second-order test).

lcasComplexRecord = z -> {lcasReal realPart z, lcasReal imaginaryPart z}

trainingCriticalPoints = method(Options => {MaxPaths => infinity})
trainingCriticalPoints(NeuralNetwork, List, List) := o -> (N, inputs, targets) -> (
    (d0, t, dL) := (N#"input", N#"tokens", last N#"widths");
    P := N#"parameters";
    -- the values z(W) on every input, as polynomials in the weights over QQ
    W := QQ[N#"weights"];
    blocks := lcasBlockWeights(N, gens W);
    z := flatten apply(inputs, X -> flatten entries lcasForward(N, blocks, matrix apply(X, r -> apply(r, v -> v / 1)))) ;
    y := flatten apply(targets, Y -> flatten Y);
    if #z != #y then error "LightningCAS: the targets do not match the outputs";
    Jz := jacobian matrix{z};
    w0 := apply(P, i -> (random(1, 9) * (-1)^(random 2)) / 1);
    r := rank sub(Jz, matrix{w0});
    -- values that no weight changes (the inputs are zero): the loss is constant, nothing to solve
    if r == 0 then return new HashTable from {"rank" => 0, "paths" => 0, "points" => {}, "too_large" => false};
    -- the gauge: the weights whose columns of dz/dW at w0 are independent stay free, the others are
    -- fixed at their (random) values in w0 (a coordinate slice meets the generic fibers transversally)
    J0 := sub(Jz, matrix{w0});
    free := {};
    scan(P, i -> if #free < r and rank J0^(free | {i}) > #free then free = append(free, i));
    sSym := getSymbol "s";
    Rs := QQ[sSym_1 .. sSym_r];
    Ws := apply(P, i -> (k := position(free, j -> j == i); if k === null then promote(w0#i, Rs) else Rs_k));
    zs := apply(z, f -> sub(f, matrix{Ws}));
    L := sum(#zs, k -> (zs#k - y#k)^2);
    crit := apply(r, k -> diff(Rs_k, L));
    paths := product(crit, f -> first degree f);
    if paths > o.MaxPaths then return new HashTable from {"rank" => r, "paths" => paths, "too_large" => true};
    nag := lcasNumerics();
    Rc := CC[gens Rs];
    sols := lcasUnionSolve lcasNormalized apply(crit, f -> sub(f, Rc));
    Jzs := jacobian matrix{apply(zs, f -> sub(f, Rc))};
    Lc := sub(L, Rc);
    Hs := matrix table(r, r, (a, b) -> diff(Rc_a, diff(Rc_b, Lc)));
    points := apply(sols, p -> (
            c := (nag#"coordinates") p;
            at := matrix{c};
            zz := apply(zs, f -> sub(sub(f, Rc), at));
            J := sub(Jzs, at);
            H := sub(Hs, at);
            new HashTable from {"s" => apply(c, lcasComplexRecord),
                "weights" => apply(Ws, f -> lcasComplexRecord sub(sub(f, Rc), at)),
                "values" => apply(zz, lcasComplexRecord),
                "jacobian" => apply(entries J, row -> apply(row, lcasComplexRecord)),
                "hessian" => apply(entries H, row -> apply(row, lcasComplexRecord))}));
    new HashTable from {"rank" => r, "paths" => paths, "points" => points, "too_large" => false})

trainingRecord = method(Options => {MaxPaths => infinity})
trainingRecord(NeuralNetwork, List, List) := o -> (N, inputs, targets) -> (
    t0 := cpuTime();
    base := lcasRecordBase() | {"parameters" => N#"parameters", "dimension" => neurovarietyDimension N};
    T := trainingCriticalPoints(N, inputs, targets, MaxPaths => o.MaxPaths);
    merge(merge(new HashTable from base, T, (a, b) -> b), new HashTable from {"cpu_ms" => round(1000 * (cpuTime() - t0))},
        (a, b) -> b))

-- The translated power sum h = sum_j c_j w_j^d + e and the distance |w - u|^2 in the metric S^-1: its
-- critical points solve h = 0, w - u = l S grad h, a family over the parameters (u, e) whose solution set is
-- a graph over (w, l), so irreducible: monodromy around loops in (u, e) reaches every solution. Stopped at
-- TargetCount (the bound the caller proved), then each target (u, e) is reached by a parameter homotopy.
powerSumCriticalPoints = method(Options => {TargetCount => 0, MonodromyRepeats => 50})
powerSumCriticalPoints(List, ZZ, List, List) := o -> (c, d, S, targets) -> (
    needsPackage "MonodromySolver";
    k := #c;
    uSym := getSymbol "u"; eSym := getSymbol "e"; wSym := getSymbol "w"; lSym := getSymbol "l";
    R := CC[uSym_1 .. uSym_k, eSym][wSym_1 .. wSym_k, lSym];
    W := toList(R_0 .. R_(k - 1));
    U := apply(k, j -> (coefficientRing R)_j);
    cc := apply(c, v -> v_CC);
    Sc := matrix apply(S, row -> apply(row, v -> v_CC));
    grad := apply(k, j -> d * cc#j * W#j^(d - 1));
    lag := apply(k, j -> W#j - U#j - R_k * sum(k, m -> Sc_(j, m) * grad#m));
    PS := (value "polySystem") transpose matrix {{sum(k, j -> cc#j * W#j^d) + (coefficientRing R)_k} | lag};
    -- a seed: random (w, l), then the parameters that make it a solution (they enter linearly)
    ws := apply(k, j -> random CC); ls := random CC;
    gs := apply(k, j -> d * cc#j * ws#j^(d - 1));
    us := apply(k, j -> ws#j - ls * sum(k, m -> Sc_(j, m) * gs#m));
    es := -sum(k, j -> cc#j * ws#j^d);
    -- a gate system (a straight-line program): its paths cost half those of the polynomial system
    Rf := first flattenRing R;
    GS := (value "gateSystem")(sub(PS, Rf), drop(gens Rf, numgens R));
    t0 := cpuTime();
    (V, npaths) := (value "monodromySolve")(GS, (value "point") {us | {es}}, {(value "point") {ws | {ls}}},
        (value "TargetSolutionCount") => (if o.TargetCount > 0 then o.TargetCount else null),
        (value "NumberOfNodes") => 3, (value "NumberOfEdges") => 3, (value "NumberOfRepeats") => o.MonodromyRepeats,
        (value "SelectEdgeAndDirection") => (value "selectBestEdgeAndDirection"),
        (value "Potential") => (if o.TargetCount > 0 then value "potentialE" else value "potentialLowerBound"));
    base := (value "points") V#(value "PartialSols");
    monodromyMs := round(1000 * (cpuTime() - t0));
    t1 := cpuTime();
    ends := apply(targets, p -> (
            H := (value "specialize")((value "parametricSegmentHomotopy") GS,
                transpose (matrix V#(value "BasePoint") | matrix {apply(p, v -> v_CC)}));
            sols := (value "trackHomotopy")(H, base);
            apply(sols, s -> {toString (value "status") s, apply(s#(value "Coordinates"), lcasComplexRecord)})));
    new HashTable from {"found" => #base, "target" => o.TargetCount, "paths" => (if instance(npaths, ZZ) then npaths else -1),
        "monodromy_cpu_ms" => monodromyMs, "homotopy_cpu_ms" => round(1000 * (cpuTime() - t1)), "targets" => ends})

-- The solutions of v = S D v^(d-1) (D = diag c), which has none at infinity (S D v^(d-1) = 0 forces v = 0)
-- and so exactly (d-1)^k counted with multiplicity: its total-degree homotopy loses no path to infinity.
powerSumAtInfinity = method()
powerSumAtInfinity(List, ZZ, List) := (c, d, S) -> (
    nag := lcasNumerics();
    k := #c;
    vSym := getSymbol "v";
    R := CC[vSym_1 .. vSym_k];
    V := gens R;
    eqs := apply(k, j -> V#j - sum(k, m -> S#j#m * c#m * V#m^(d - 1)));
    t0 := cpuTime();
    sols := (value "solveSystem") eqs;
    new HashTable from {"solutions" => apply(sols, s -> {toString (value "status") s, apply(s#(value "Coordinates"), lcasComplexRecord)}),
        "cpu_ms" => round(1000 * (cpuTime() - t0))})
