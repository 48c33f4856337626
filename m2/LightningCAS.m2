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
    PackageImports => {"JSON", "MinimalPrimes", "Elimination"},
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
    "ImplicitModel",
    "implicitModel",
    "implicitIdeal",
    "implicitRecord",
    "idealRecord",
    "numericalDegree",
    "weightStrata",
    "singularRecord",
    "singularStrata",
    "criticalImage",
    "criticalLocus",
    "pointVerdict",
    "Heads",
    "Columns",
    "Generators",
    "WitnessTries",
    "OneCoordinate",
    "Reparametrize",
    "ComputeIdeal",
    "NumericalDegreeRuns",
    "MinorBudget",
    "SamplesPerPiece",
    "Directions"
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
-- one-layer geometry: the implicit ideal, its singular locus, the critical locus of the
-- parametrization and certified real verdicts at a point
---------------------------------------------------------------------------------------------
-- Structure used, and why:
--  * the function depends on W only through (V, A = K^T Q); when a >= d, A is a generic d x d
--    matrix, so (V, A) is a linear parametrization with far fewer variables;
--    when 1 < a < d (t >= 2), A ranges over the d x d matrices of rank <= a, so the ideal is the
--    kernel of the same (V, A) map on the quotient by minors(a + 1, A) (a prime ideal; (Q, K) -> K^T Q
--    is onto that variety, so the image closure is the same). Everything that needs the
--    differential of W -> phi_W (critical points, verdicts, the numerical degree) keeps (Q, K, V);
--  * one token (t = 1): x^T A x = x^T Z x with Z = (A + A^T)/2, and the Z of rank <= a matrices are
--    dense in the symmetric matrices of rank <= min(2a, d), so (V, Z), Z symmetric modulo its
--    (2a+1)-minors (none when 2a >= d), has the same image closure (far faster: (3,1,2) does not
--    finish in 15 min on the minors of A);
--  * only the first output token (the other tokens give linear copies), optionally only the first
--    output row (OneCoordinate);
--  * a basis of the linear span of the coefficients: an injective linear image, so dimension,
--    degree and singularities are unchanged;
--  * target variables graded by the degree of their image, so ker is a graded computation; the
--    ideal is then moved to a standard-graded ring for dimension and degree.

ImplicitModel = new Type of HashTable
ImplicitModel.synonym = "implicit model"
net ImplicitModel := M -> net("an implicit model of widths " | toString M#"widths" | ", attention "
    | toString M#"attention" | ", " | toString M#"tokens" | " token(s), in " | toString M#"ambient" | " coordinates")

lcasBoolean = (name, x) -> if not instance(x, Boolean) then error("LightningCAS: " | name | " must be true or false");
lcasCount = (name, x, lo) -> if not instance(x, ZZ) or x < lo then
    error("LightningCAS: " | name | " must be an integer >= " | toString lo);

implicitModel = method(Options => {OneCoordinate => false, Reparametrize => true})
implicitModel(List, List, ZZ) := o -> (widths, attention, tokens) -> (
    shapes := lcasShapes(widths, attention, null);
    lcasTokensCheck tokens;
    if #shapes != 1 then error "LightningCAS: the geometry functions handle one layer";
    lcasBoolean("OneCoordinate", o.OneCoordinate);
    lcasBoolean("Reparametrize", o.Reparametrize);
    kk := QQ;
    nD := widths#0; nOut := widths#1; nAtt := attention#0;
    -- the parametrization the ideal is eliminated from: 0 = (Q, K, V); 1 = (V, A), A generic
    -- (a >= d); 2 = (V, A) on rank A <= a (1 < a < d, t >= 2); 3 = (V, Z), Z symmetric of rank
    -- <= 2a (a < d, t = 1). For a = 1 < d, t >= 2 the ideal stays on (Q, K, V), which is fast there
    route := (if not o.Reparametrize then 0 else if nAtt >= nD then 1
        else if tokens == 1 then 3 else if nAtt > 1 then 2 else 0);
    vSym := getSymbol "v"; aSym := getSymbol "a"; ySym := getSymbol "y"; zSym := getSymbol "z";
    vaSymbols := () -> flatten table(nOut, nD, (p, q) -> vSym_(p+1, q+1)) | flatten table(nD, nD, (r, s) -> aSym_(r+1, s+1));
    vaMatrices := L -> (matrix table(nOut, nD, (p, q) -> L#(p*nD + q)), matrix table(nD, nD, (r, s) -> L#(nOut*nD + r*nD + s)));
    upperPairs := flatten apply(nD, r -> apply(toList(r .. nD - 1), c -> (r, c)));
    vzSymbols := () -> flatten table(nOut, nD, (p, q) -> vSym_(p+1, q+1)) | apply(upperPairs, rc -> zSym_(rc#0 + 1, rc#1 + 1));
    vzMatrices := L -> (matrix table(nOut, nD, (p, q) -> L#(p*nD + q)),
        matrix table(nD, nD, (r, c) -> L#(nOut*nD + position(upperPairs, rc -> rc == (min(r, c), max(r, c))))));
    -- the (Q, K, V) weight ring with V and A = K^T Q in it
    qkvWeights := () -> (
        Rq := kk[lcasWeightSymbols shapes];
        (Qq, Kq, Vq) := first first lcasLayers(shapes, gens Rq);
        (Rq, Vq, (transpose Kq) * Qq));
    (R, Vm, Am) := (if route == 1 or route == 2 then (Rva := kk[vaSymbols()]; (Va, Aa) := vaMatrices gens Rva; (Rva, Va, Aa))
        else if route == 3 then (Rvz := kk[vzSymbols()]; (Vz, Zz) := vzMatrices gens Rvz; (Rvz, Vz, Zz))
        else qkvWeights());
    -- the ideal of the parameter variety in R: the rank condition on route 2 (on A) and 3 (on Z), else zero
    sourceIdeal := (if route == 2 then minors(nAtt + 1, Am)
        else if route == 3 and 2 * nAtt < nD then minors(2 * nAtt + 1, Am) else ideal 0_R);
    xRing := kk[lcasTokenSymbols(nD, tokens)];
    monList := flatten entries basis(3, xRing);
    rowsUsed := if o.OneCoordinate then {0} else toList(0 .. nOut - 1);
    -- all coefficients (row p, monomial m) of output token 1, in a fixed order, for any (V, A)
    coeffList := (V0, A0) -> (
        Rp := ring V0;
        Tp := Rp[lcasTokenSymbols(nD, tokens)];
        X := matrix table(nD, tokens, (r, j) -> Tp_(r*tokens + j));
        Phi := sub(V0, Tp) * X * ((transpose X) * sub(A0, Tp) * X);
        mons := matrix {apply(monList, m -> (map(Tp, xRing, gens Tp)) m)};
        flatten apply(rowsUsed, p -> apply(flatten entries last coefficients(Phi_(p, 0), Monomials => mons),
                c -> lift(c, Rp))));
    allCoeffs := coeffList(Vm, Am);
    nonzero := select(toList(0 .. #allCoeffs - 1), i -> allCoeffs#i != 0);
    -- a basis of the linear span of the (non-zero) coefficient polynomials
    chosen := nonzero_(lcasSpanBasis allCoeffs_nonzero);
    B := allCoeffs_chosen;
    if not all(B, isHomogeneous) then error "LightningCAS: coefficient polynomials are not homogeneous";
    S1 := kk[ySym_1 .. ySym_(#B)];
    -- the coordinates as polynomials in (Q, K, V), for what needs the differential of W -> phi_W
    (Rw, Vw, Aw, Bw) := (if route >= 2 then (
            (Rq0, Vq0, Aq0) := qkvWeights();
            (Rq0, Vq0, Aq0, (coeffList(Vq0, Aq0))_chosen))
        else (R, Vm, Am, B));
    new ImplicitModel from {
        "widths" => widths, "attention" => attention, "tokens" => tokens,
        "one coordinate" => o.OneCoordinate, "parametrization" => route,
        "parameters" => numgens R, "coefficients" => #nonzero, "ambient" => #B,
        "ring" => S1, "coordinates" => B, "source ideal" => sourceIdeal,
        "labels" => apply(chosen, i -> {rowsUsed#(i // #monList) + 1} | first exponents monList#(i % #monList)),
        "weights" => (Rw, Vw, Aw, Bw),
        -- the coordinates of phi at any (V, A): a function of two matrices over one ring
        "coordinate map" => (V0, A0) -> (coeffList(V0, A0))_chosen,
        "va symbols" => vaSymbols, "va matrices" => vaMatrices,
        "cache" => new MutableHashTable})

lcasCached = (M, key, f) -> (c := M#"cache"; if not c#?key then c#key = f(); c#key);

-- the options belong to the second form (they are the model's); null means the model's default
implicitIdeal = method(Options => {OneCoordinate => null, Reparametrize => null})
implicitIdeal ImplicitModel := o -> M -> (
    if o.OneCoordinate =!= null or o.Reparametrize =!= null then
        error "LightningCAS: OneCoordinate and Reparametrize are options of implicitModel; this model already has them";
    lcasCached(M, "ideal", () -> (
        t0 := cpuTime();
        I := ideal mingens lcasImage(M#"coordinates", M#"source ideal", M#"ring");
        M#"cache"#"ideal cpu" = cpuTime() - t0;
        I)))
implicitIdeal(List, List, ZZ) := o -> (widths, attention, tokens) -> implicitIdeal implicitModel(widths, attention, tokens,
    OneCoordinate => (if o.OneCoordinate === null then false else o.OneCoordinate),
    Reparametrize => (if o.Reparametrize === null then true else o.Reparametrize))

idealRecord = method()
idealRecord Ideal := J -> (
    J = ideal mingens J;
    new HashTable from {"generators" => flatten entries gens J, "dimension" => dim J, "degree" => degree J})

numericalDegree = method()
numericalDegree(ImplicitModel, ZZ) := (M, runs) -> (
    lcasCount("the number of runs", runs, 0);
    if runs == 0 then return {};
    -- NumericalImplicitization is loaded on first use only (it takes seconds)
    needsPackage "NumericalImplicitization";
    imageDegree := value "numericalImageDegree";
    (Rw, Vw, Aw, Bw) := M#"weights";
    RC := CC (monoid Rw);
    FC := apply(Bw, f -> sub(f, RC));
    apply(runs, i -> (
            t1 := cpuTime();
            got := try imageDegree(FC, ideal 0_RC, Verbose => false) else null;
            new HashTable from {"degree" => got, "cpu_ms" => floor(1000 * (cpuTime() - t1))})))

implicitRecord = method(Options => {ComputeIdeal => true, Generators => true, NumericalDegreeRuns => 0})
implicitRecord ImplicitModel := o -> M -> (
    lcasBoolean("ComputeIdeal", o.ComputeIdeal);
    lcasBoolean("Generators", o.Generators);
    lcasCount("NumericalDegreeRuns", o.NumericalDegreeRuns, 0);
    base := lcasRecordBase() | {"parametrization" => M#"parametrization", "parameters" => M#"parameters",
        "coefficients" => M#"coefficients", "linear_span" => M#"ambient", "labels" => M#"labels",
        "coordinates" => M#"coordinates",
        "numerical_degree_runs" => numericalDegree(M, o.NumericalDegreeRuns)};
    if not o.ComputeIdeal then return new HashTable from base;
    I := implicitIdeal M;
    G := flatten entries gens I;
    new HashTable from base | {"dimension" => dim I, "codimension" => codim I, "degree" => degree I,
        "generator_degrees" => apply(G, g -> first degree g),
        "implicit_cpu_ms" => floor(1000 * M#"cache"#"ideal cpu")}
        | (if o.Generators then {"generators" => G} else {}))

---------------------------------------------------------------------------------------------
-- strata of the weights and the singular locus by the whole ideal
---------------------------------------------------------------------------------------------

-- Closures of the images of the weight strata (docs/mathematics.md, section 5), each from a
-- parametrization by rank factorizations: "rank11" (rank V = rank A = 1), "parallel" (also
-- rowspace V = colspace A) and, when 1 < a < d, "rankA" (rank A < a).
weightStrata = method()
weightStrata ImplicitModel := M -> lcasCached(M, "strata", () -> (
        (nD, nOut, nAtt) := (M#"widths"#0, M#"widths"#1, M#"attention"#0);
        kk := QQ;
        phi := M#"coordinate map";
        closure := VA -> ideal mingens lcasImage(phi VA, ideal 0_(ring first VA), M#"ring");
        cSym := getSymbol "c"; uSym := getSymbol "u"; gSym := getSymbol "g"; hSym := getSymbol "h"; vSym := getSymbol "v";
        col := L -> transpose matrix {L};
        row := L -> matrix {L};
        out := {};
        -- rank V = rank A = 1: V = c u^T, A = g h^T
        P1 := kk[cSym_1 .. cSym_nOut, uSym_1 .. uSym_nD, gSym_1 .. gSym_nD, hSym_1 .. hSym_nD];
        out = append(out, "rank11" => closure(col toList(P1_0 .. P1_(nOut-1)) * row toList(P1_nOut .. P1_(nOut+nD-1)),
                col toList(P1_(nOut+nD) .. P1_(nOut+2*nD-1)) * row toList(P1_(nOut+2*nD) .. P1_(nOut+3*nD-1))));
        -- rowspace V = colspace A (rank one): V = c u^T, A = u h^T
        P2 := kk[cSym_1 .. cSym_nOut, uSym_1 .. uSym_nD, hSym_1 .. hSym_nD];
        uu := row toList(P2_nOut .. P2_(nOut+nD-1));
        out = append(out, "parallel" => closure(col toList(P2_0 .. P2_(nOut-1)) * uu,
                transpose uu * row toList(P2_(nOut+nD) .. P2_(nOut+2*nD-1))));
        -- rank A < a (only meaningful when 1 < a < d): A = G^T H with a - 1 rows
        if nAtt > 1 and nAtt < nD then (
            m := nAtt - 1;
            P3 := kk[flatten table(nOut, nD, (p, q) -> vSym_(p+1, q+1)) | flatten table(m, nD, (r, s) -> gSym_(r+1, s+1))
                | flatten table(m, nD, (r, s) -> hSym_(r+1, s+1))];
            V3 := matrix table(nOut, nD, (p, q) -> P3_(p*nD + q));
            G3 := matrix table(m, nD, (r, s) -> P3_(nOut*nD + r*nD + s));
            H3 := matrix table(m, nD, (r, s) -> P3_(nOut*nD + m*nD + r*nD + s));
            out = append(out, "rankA" => closure(V3, (transpose G3) * H3)));
        new HashTable from out))

-- The Jacobian criterion on the whole ideal: I + the codim-minors of jacobian I. All of them
-- when there are at most 20000; otherwise the sum over dim I + 1 random combinations of the
-- generators. Each gives Sing plus a divisor of X (where a random space of combinations meets the
-- kernel of the Jacobian); k random divisors leave a set of dim <= dim X - k off Sing, so
-- k = dim X + 1 is needed for "equal with high probability".
lcasWholeSingular = M -> lcasCached(M, "singular", () -> (
        I := implicitIdeal M;
        cI := codim I;
        JI := jacobian I;
        few := binomial(numcols JI, cI) * binomial(numrows JI, cI) <= 20000 or cI == 0;
        J := if few then I + minors(cI, JI) else
            I + sum apply(dim I + 1, i -> minors(cI, JI * random(QQ^(numcols JI), QQ^cI, Height => 100)));
        (ideal mingens J, not few)))

-- a method of Core's singularLocus
singularLocus ImplicitModel := M -> first lcasWholeSingular M

singularRecord = method()
singularRecord ImplicitModel := M -> (
    (J, randomized) := lcasWholeSingular M;
    strata := weightStrata M;
    names := sort keys strata;
    comps := minimalPrimes J;
    new HashTable from lcasRecordBase() | {"randomized" => randomized, "singular" => idealRecord J,
        "components" => apply(comps, P -> merge(idealRecord P,
            new HashTable from {"strata" => select(names, s -> isSubset(strata#s, P))}, (x, y) -> y))})

criticalImage = method()
criticalImage ImplicitModel := M -> (
    -- critical points of W -> phi_W (differential rank below the dimension) and their image, by
    -- elimination: feasible for the smallest cases only; criticalLocus works on slices instead
    (Rw, Vw, Aw, Bw) := M#"weights";
    S1 := M#"ring";
    crit := minors(dim implicitIdeal M, jacobian matrix {Bw});
    (map(S1, S1, vars S1)) ker map(Rw / crit, S1, apply(Bw, f -> sub(f, Rw / crit))))

---------------------------------------------------------------------------------------------
-- slices of G-orbits: the singular locus by strata and the critical locus
---------------------------------------------------------------------------------------------
-- G = GL(d') x GL(d) acts by (V, A) -> (h V g, g^T A g); phi is equivariant, so Sing(X) and the
-- critical locus are G-stable, and every point of X = image(phi) (no base points, so the image is
-- closed) lies in G.phi(V_r, A) with V_r = [I_r 0; 0 0], r = rank V. The slice functions below are
-- shared by singularStrata and criticalLocus.
-- With d' = a = 1, phi = S (x) gamma with S = sym(v (x) k): off the vertex, X is locally Y x C^(d-1)
-- (Y = closure of the S), so Sing(X) = Sing(Y) (x) C^d and the test runs on the factor Y, which is
-- far smaller (the full Jacobian of X has codim 11 for d = 3).
lcasSlices = (M, budget, samples) -> (
    kk := QQ;
    (nD, nOut, nAtt) := (M#"widths"#0, M#"widths"#1, M#"attention"#0);
    phi := M#"coordinate map";
    S1 := M#"ring";
    factorRoute := nOut == 1 and nAtt == 1 and nD > 1;
    strata := weightStrata M;
    orbitSlice := r -> (
        Rs := if nAtt >= nD then kk[flatten table(nD, nD, (i, j) -> (getSymbol "b")_(i+1, j+1))]
            else kk[flatten table(nAtt, nD, (i, j) -> (getSymbol "q")_(i+1, j+1))
                    | flatten table(nAtt, nD, (i, j) -> (getSymbol "k")_(i+1, j+1))];
        As := if nAtt >= nD then matrix table(nD, nD, (i, j) -> Rs_(i*nD + j))
            else transpose matrix table(nAtt, nD, (i, j) -> Rs_(nAtt*nD + i*nD + j))
                * matrix table(nAtt, nD, (i, j) -> Rs_(i*nD + j));
        Vs := matrix table(nOut, nD, (i, j) -> if i == j and i < r then 1_Rs else 0_Rs);
        (Rs, Vs, As));
    unitMat := (m, n, i, j, Rs) -> map(Rs^m, Rs^n, {(i, j) => 1_Rs});
    asColumn := L -> transpose matrix {L};
    -- the model the test runs on: coordinates (polynomials in the slice ring), Jacobian of the ideal
    -- composed with them, codimension, and the infinitesimal G-action on the coordinates
    orbitModel := (Rs, Vs, As) -> (
        if factorRoute then (
            -- S = sym(e1 (x) k) with k the column of A (A = k^T q): gamma = q is a free factor
            kcol := transpose matrix {toList(Rs_(nD) .. Rs_(2*nD - 1))};
            symS := (v, k) -> flatten apply(nD, i -> apply(toList(i .. nD - 1), j -> v_(0, i) * k_(j, 0) + v_(0, j) * k_(i, 0)));
            coords := symS(Vs, kcol);
            nY := #coords;
            PY := kk[(getSymbol "v")_1 .. (getSymbol "v")_nD, (getSymbol "w")_1 .. (getSymbol "w")_nD];
            SY := kk[(getSymbol "s")_1 .. (getSymbol "s")_nY];
            IY := lcasImage(symS(matrix {toList(PY_0 .. PY_(nD-1))}, transpose matrix {toList(PY_nD .. PY_(2*nD-1))}), ideal 0_PY, SY);
            JY := (map(Rs, SY, coords)) jacobian IY;
            actF := apply(flatten table(nD, nD, (p, q) -> (p, q)), pq -> (E := unitMat(nD, nD, pq#0, pq#1, Rs);
                asColumn(symS(Vs * E, kcol) + symS(Vs, transpose(E) * kcol))));
            (coords, JY, codim IY, fold((a, b) -> a | b, actF), IY))
        else (
            I1 := implicitIdeal M;
            phis := phi(Vs, As);
            actX := apply(flatten table(nOut, nOut, (p, q) -> (p, q)), pq ->
                    asColumn phi(unitMat(nOut, nOut, pq#0, pq#1, Rs) * Vs, As))
                | apply(flatten table(nD, nD, (p, q) -> (p, q)), pq -> (E := unitMat(nD, nD, pq#0, pq#1, Rs);
                    asColumn(phi(Vs * E, As) + phi(Vs, transpose(E) * As + As * E))));
            (phis, (map(Rs, S1, phis)) jacobian I1, codim I1, fold((a, b) -> a | b, actX), I1)));
    tooMany := (N, k) -> binomial(numrows N, k) * binomial(numcols N, k) > budget;
    -- rank of the differential of (g, slice point) -> g.phi on the piece P: the dimension of the closure
    -- of G.phi(P) in the model's coordinates (the factor Y on the d' = a = 1 route: add d - 1 for X)
    sliceImageRank := (Rs, P, Act, Dphi) -> (
        RP := Rs / P;
        T := if P == 0 then id_(Rs^(numgens Rs)) else gens ker sub(transpose jacobian gens P, RP);
        rank (sub(Act, RP) | sub(Dphi, RP) * sub(T, RP)));
    toX := dY -> if factorRoute then dY + nD - 1 else dY;
    -- the piece in the weights: generic rank of A, and whether colspace A lies in rowspace V = span(e_1..e_r)
    weightDescription := (Rs, r, P, As) -> (
        RP := Rs / P;
        (rank sub(As, RP), r == nD or isSubset(ideal flatten entries As^(toList(r .. nD - 1)), P)));
    -- the stratum closure a piece is (same dimension and contains it), or "none"
    matchName := (r, dimY, rankA, colIn) -> (
        have := s -> strata#?s and dim strata#s == dimY;
        if r == 1 and rankA == 1 and colIn and have "parallel" then "parallel"
        else if r == 1 and rankA == 1 and have "rank11" then "rank11"
        else if rankA < nAtt and have "rankA" then "rankA" else "none");
    -- a random rational point of a linear piece, moved by a random element of G (so it is no longer
    -- in normal form), as weights {Q, K, V}; A = K^T Q with K = [I; 0], Q = [A; 0] when a >= d
    piecePoint := (Rs, Vs, As, P) -> (
        Kp := if P == 0 then id_(kk^(numgens Rs)) else gens ker lift(transpose jacobian gens P, kk);
        pt := flatten entries (Kp * random(kk^(numcols Kp), kk^1, Height => 9));
        ev := N -> lift(sub(N, apply(numgens Rs, i -> Rs_i => pt#i)), kk);
        h := random(kk^nOut, kk^nOut, Height => 5); while det h == 0 do h = random(kk^nOut, kk^nOut, Height => 5);
        g := random(kk^nD, kk^nD, Height => 5); while det g == 0 do g = random(kk^nD, kk^nD, Height => 5);
        Vp := h * ev(Vs) * g;
        (Qp, Kp2) := if nAtt >= nD then ((transpose g) * ev(As) * g || map(kk^(nAtt - nD), kk^nD, 0), id_(kk^nD) || map(kk^(nAtt - nD), kk^nD, 0))
            else (ev(matrix table(nAtt, nD, (i, j) -> Rs_(i*nD + j))) * g, ev(matrix table(nAtt, nD, (i, j) -> Rs_(nAtt*nD + i*nD + j))) * g);
        {entries Qp, entries Kp2, entries Vp});
    piecePoints := (Rs, Vs, As, P) -> (
        if not all(flatten entries gens P, f -> f == 0 or first degree f == 1) then return {};
        apply(samples, i -> piecePoint(Rs, Vs, As, P)));
    -- one found piece as a record
    piece := (Rs, r, P, Vs, As, Act, Dphi, extra) -> (
        (rankA, colIn) := weightDescription(Rs, r, P, As);
        dimY := toX sliceImageRank(Rs, P, Act, Dphi);
        new HashTable from {"rank_V" => r, "image_dimension" => dimY, "rank_A" => rankA,
            "colspace_A_in_rowspace_V" => colIn, "matches" => matchName(r, dimY, rankA, colIn),
            "generators" => flatten entries mingens P, "points" => piecePoints(Rs, Vs, As, P)} | extra);
    unresolved := (r, P, reason) -> new HashTable from {"rank_V" => r, "reason" => reason,
        "generators" => flatten entries mingens P};
    -- the ideal of a union of matched strata closures (the vertex alone when nothing matched)
    union := (names, vertex) -> if #names == 0 then vertex else intersect apply(unique names, s -> strata#s);
    -- slice r with its model and the differential of phi there, once per model (singularStrata and
    -- criticalLocus both walk the same slices): (Rs, Vs, As, coords, JS, cc, Act, Iused, Dphi)
    slice := r -> lcasCached(M, "slice " | toString r, () -> (
            (Rs, Vs, As) := orbitSlice r;
            (coords, JS, cc, Act, Iused) := orbitModel(Rs, Vs, As);
            (Rs, Vs, As, coords, JS, cc, Act, Iused, transpose jacobian matrix {coords})));
    new HashTable from {"slice" => slice, "too many" => tooMany, "piece" => piece,
        "unresolved" => unresolved, "union" => union, "factor route" => factorRoute, "image rank" => sliceImageRank,
        "vertex" => (Rs, P, As) -> isSubset(ideal flatten entries As, P)})

lcasSliceOptions = {MinorBudget => 3000000, SamplesPerPiece => 1}

lcasSliceChecks = (M, o) -> (
    -- the group action mixes the output rows: the slices need all of them
    if M#"one coordinate" then error "LightningCAS: the slice computations need the model of the full output (OneCoordinate => false)";
    lcasCount("MinorBudget", o.MinorBudget, 1); lcasCount("SamplesPerPiece", o.SamplesPerPiece, 0));

-- On each slice a G-stable piece P (a prime in the slice coordinates) is
--   singular     when the Jacobian of I at phi has generic rank < codim on P (exact rank over frac(R/P));
--   smooth but with a dense G-orbit: then Sing meets it only where the orbit dimension drops
--                (minors of the infinitesimal action), and those pieces are examined in turn;
--   smooth without a dense orbit: Sing meets it in P + the codim-minors of the Jacobian (of the
--                generators up to the first degree whose Jacobian has full rank, a G-stable set).
-- Minors beyond MinorBudget are not formed: that piece is reported unresolved.
singularStrata = method(Options => lcasSliceOptions)
singularStrata ImplicitModel := o -> M -> (
    lcasSliceChecks(M, o);
    (nD, nOut) := (M#"widths"#0, M#"widths"#1);
    F := lcasSlices(M, o.MinorBudget, o.SamplesPerPiece);
    found := {}; unres := {};
    scan(toList(1 .. min(nOut, nD)), r -> (
        (Rs, Vs, As, coords, JS, cc, Act, Iused, Dphi) := F#"slice" r;
        gdegs := apply(flatten entries gens Iused, g -> first degree g);
        local process;
        process = P -> (
            RP := Rs / P;
            if F#"vertex"(Rs, P, As) then return;   -- A = 0: phi = 0, the vertex
            jr := rank sub(JS, RP);
            if jr < cc then (
                found = append(found, F#"piece"(Rs, r, P, Vs, As, Act, Dphi, {"jacobian_rank" => jr, "codimension" => cc}));
                return);
            ta := rank sub(Act, RP);
            if ta == F#"image rank"(Rs, P, Act, Dphi) then (
                if F#"too many"(Act, ta) then (unres = append(unres, F#"unresolved"(r, P, "orbit-dimension minors")); return);
                scan(minimalPrimes(P + minors(ta, Act)), Q -> process Q))
            else (
                e := min gdegs;
                while rank sub(JS_(positions(gdegs, x -> x <= e)), RP) < cc do e = e + 1;
                J1 := JS_(positions(gdegs, x -> x <= e));
                if F#"too many"(J1, cc) then (unres = append(unres, F#"unresolved"(r, P, "Jacobian minors")); return);
                scan(minimalPrimes(P + minors(cc, J1)), Q -> if Q != P then process Q)));
        process ideal 0_Rs));
    -- the singular locus as an ideal: the strata closures it matched (each irreducible, of the same
    -- dimension and containing the piece, hence equal to its closure), or the vertex alone; the unit
    -- ideal when X is the whole coordinate space (codim 0: a linear space, smooth at 0 too)
    names := apply(found, p -> p#"matches");
    S1 := M#"ring";
    complete := #unres == 0 and all(names, s -> s != "none");
    new HashTable from lcasRecordBase() | {"factor_route" => F#"factor route", "pieces" => found, "unresolved" => unres,
        "singular" => (if not complete then null
            else idealRecord F#"union"(names, if codim implicitIdeal M == 0 then ideal 1_S1 else ideal vars S1))})

-- Critical points of the parametrization, by the same slices: the rank of the differential is
-- G-invariant, so the critical locus is G-stable and meets every orbit in a slice point (V_r, A).
-- The parametrization is (V, A) when a >= d (every real A is K^T Q, so it has the same real image as
-- (Q, K, V) and fewer critical points), else (Q, K, V); on the d' = a = 1 route it is (v, k) -> S,
-- whose critical points are those of phi = S (x) q off the vertex (rank d phi = rank dS + d - 1).
criticalLocus = method(Options => lcasSliceOptions)
criticalLocus ImplicitModel := o -> M -> (
    lcasSliceChecks(M, o);
    kk := QQ;
    (nD, nOut, nAtt) := (M#"widths"#0, M#"widths"#1, M#"attention"#0);
    shapes := lcasShapes(M#"widths", M#"attention", null);
    F := lcasSlices(M, o.MinorBudget, o.SamplesPerPiece);
    phi := M#"coordinate map";
    (Rweights, Vweights, Aweights, Bweights) := M#"weights";
    dX := dim implicitIdeal M;
    -- phi vanishes only where V = 0 or A = 0 (no other zeros, even complex ones): then the image M is
    -- closed and the boundary lies in it (balanced weights stay bounded over bounded images)
    baseVA := isSubset(ideal(flatten entries Vweights) * ideal(flatten entries Aweights), radical ideal Bweights);
    (Rw, wSubst, needRank) := if F#"factor route" then (
            Pf := kk[(getSymbol "v")_1 .. (getSymbol "v")_nD, (getSymbol "w")_1 .. (getSymbol "w")_nD];
            symF := flatten apply(nD, i -> apply(toList(i .. nD - 1), j -> Pf_i * Pf_(nD + j) + Pf_j * Pf_(nD + i)));
            (Pf, jacobian matrix {symF}, 2 * nD - 1))
        else if nAtt >= nD then (
            Pw := kk[(M#"va symbols")()];
            (Pw, jacobian matrix {phi (M#"va matrices") gens Pw}, dX))
        else (
            Pq := kk[lcasWeightSymbols shapes];
            (Qw, Kw, Vw2) := first first lcasLayers(shapes, gens Pq);
            (Pq, jacobian matrix {phi(Vw2, (transpose Kw) * Qw)}, dX));
    found := {}; unres := {};
    scan(toList(1 .. min(nOut, nD)), r -> (
        (Rs, Vs, As, coords, JS, cc, Act, Iused, Dphi) := F#"slice" r;
        -- the weights of the slice point, in the order of Rw's variables
        vals := if F#"factor route" then flatten entries Vs | take(gens Rs, {nD, 2*nD - 1})
            else if nAtt >= nD then flatten entries Vs | flatten entries As
            else take(gens Rs, 2*nAtt*nD) | flatten entries Vs;
        Dfull := (map(Rs, Rw, vals)) wSubst;
        if F#"too many"(Dfull, needRank) then (unres = append(unres, F#"unresolved"(r, ideal 0_Rs, "differential minors")); return);
        Cr := minors(needRank, Dfull);
        if Cr == 1 then return;
        scan(minimalPrimes Cr, P -> (
            if F#"vertex"(Rs, P, As) then return;
            found = append(found, F#"piece"(Rs, r, P, Vs, As, Act, Dphi, {}))))));
    names := apply(found, p -> p#"matches");
    complete := #unres == 0 and all(names, s -> s != "none");
    new HashTable from lcasRecordBase() | {"base_locus_V_or_A" => baseVA, "pieces" => found, "unresolved" => unres,
        "critical_image" => (if complete then idealRecord F#"union"(names, ideal vars M#"ring") else null)})

---------------------------------------------------------------------------------------------
-- a real verdict at one rational weight point
---------------------------------------------------------------------------------------------
-- At W = (Q, K, V), p = phi(W), this records:
--  * the tangent rank of I at p (p smooth or not) and, for every rational preimage orbit (fiber of p
--    in (V, A), rank A <= a, normalized by ell(V) = 1), whether it is a regular point;
--  * whether the fiber is finite, all of it rational (its degree = number of rational points) and
--    without orbits on ell(V) = 0: then every analytic branch of X at p is the image of a germ at a
--    listed preimage (phi is proper on balanced weights, |phi(V, A)| >= c |V| |A|);
--  * witness curves from the critical rational preimages: phi is bilinear in two weight blocks, so
--    for delta in the kernel of that partial differential, phi(W + i sqrt(s) delta) = p - s phi_2(delta)
--    is a real point of X; the fiber of that point is eliminated down to f(s, t) (t a random
--    linear form in (V, A), on |V|^2 = 1), written in u = t^2 when f is even in t.
-- Deciding (Sturm counts on f) is left to the caller: lightning_cas does it in exact arithmetic.
lcasMatrixCheck = (name, N, m, n) -> (
    if not instance(N, List) or #N != m or not all(N, r -> instance(r, List) and #r == n
            and all(r, x -> instance(x, ZZ) or instance(x, QQ))) then
        error("LightningCAS: " | name | " must be a " | toString m | " x " | toString n | " list of rationals"));

pointVerdict = method(Options => {Directions => 2})
pointVerdict(ImplicitModel, List, List, List) := o -> (M, pointQ, pointK, pointV) -> (
    lcasCount("Directions", o.Directions, 0);
    kk := QQ;
    (nD, nOut, nAtt) := (M#"widths"#0, M#"widths"#1, M#"attention"#0);
    lcasMatrixCheck("Q", pointQ, nAtt, nD); lcasMatrixCheck("K", pointK, nAtt, nD); lcasMatrixCheck("V", pointV, nOut, nD);
    if M#"one coordinate" then error "LightningCAS: pointVerdict needs the model of the full output (OneCoordinate => false)";
    shapes := lcasShapes(M#"widths", M#"attention", null);
    phi := M#"coordinate map";
    useVA := M#"parametrization" == 1;
    (Rweights, Vweights, Aweights, Bweights) := M#"weights";
    V0 := matrix(kk, pointV); Q0 := matrix(kk, pointQ); K0 := matrix(kk, pointK); A0 := (transpose K0) * Q0;
    p0 := phi(V0, A0);
    base := lcasRecordBase() | {"vertex" => all(p0, x -> x == 0)};
    if all(p0, x -> x == 0) then return new HashTable from base;
    I1 := implicitIdeal M;
    S1 := M#"ring";
    sSym := getSymbol "s"; tSym := getSymbol "t";
    Rf := kk[(M#"va symbols")() | {sSym, tSym}];
    nVA := nOut*nD + nD*nD;
    (Vf, Af) := (M#"va matrices") gens Rf;
    Ff := phi(Vf, Af);
    rankCond := if nAtt < nD then minors(nAtt + 1, Af) else ideal 0_Rf;
    fiberOf := q -> ideal apply(Ff, q, (f, c) -> f - c) + rankCond;
    -- rational preimages of p (one per scaling orbit with ell(V) != 0)
    ell := sum(nOut*nD, i -> random(1, 9) * Rf_i);
    Jfib := fiberOf p0 + ideal(ell - 1, Rf_nVA, Rf_(nVA + 1));
    Pre := select(minimalPrimes Jfib, P -> dim P == 0 and degree P == 1);
    -- the differential of the parametrization Rweights -> coordinates (rows: the weights of Rweights)
    JR := jacobian matrix {Bweights};
    DR := D -> lift(sub(JR, apply(gens Rweights, D, (x, c) -> x => c)), kk);
    weightsOf := (Vv, Av) -> if useVA then flatten entries Vv | flatten entries Av else (
        -- a rank factorization over QQ, padded: A = K^T Q with K^T = [C 0], Q = [Rw; 0]
        cols := if Av == 0 then {} else (
            piv := {}; scan(nD, j -> if rank Av_(append(piv, j)) > #piv then piv = append(piv, j)); piv);
        Cm := if #cols == 0 then map(kk^nD, kk^0, 0) else Av_cols;
        Rm := if #cols == 0 then map(kk^0, kk^nD, 0) else solve(Cm, Av);
        Qv := Rm || map(kk^(nAtt - #cols), kk^nD, 0);
        Kv := transpose(Cm | map(kk^nD, kk^(nAtt - #cols), 0));
        flatten entries Qv | flatten entries Kv | flatten entries Vv);
    dX := dim I1;
    -- regular: rank dim X, and (a < d) rank A = a, where (Q, K) -> K^T Q is a submersion onto rank <= a
    regular := 0; critical := {};
    scan(Pre, P -> (
        (Vv, Av) := (M#"va matrices") apply(nVA, i -> lift(Rf_i % P, kk));
        if rank DR weightsOf(Vv, Av) == dX and (useVA or rank Av == nAtt) then regular = regular + 1
        else critical = append(critical, (Vv, Av))));
    JI1 := lift(sub(jacobian I1, apply(gens S1, p0, (y, c) -> y => c)), kk);
    -- witness curves from the critical rational preimages (W itself is one of them, up to scaling)
    witnesses := {};
    scan(critical, VA -> (
        (Vv, Av) := VA;
        -- block pairs of a bilinear sub-parametrization: (V, A), or (V, K), (V, Q), (Q, K) around (Q, K) of A
        wv := weightsOf(Vv, Av);
        nq := nAtt*nD;
        blocks := if useVA then {{"V,A", toList(0 .. nVA - 1)}} else {
            {"V,K", toList(nq .. 2*nq - 1) | toList(2*nq .. 2*nq + nOut*nD - 1)},
            {"V,Q", toList(0 .. nq - 1) | toList(2*nq .. 2*nq + nOut*nD - 1)},
            {"Q,K", toList(0 .. 2*nq - 1)}};
        Dm := DR wv;
        scan(blocks, bl -> (
            Kb := gens ker transpose Dm^(bl#1);
            if numcols Kb == 0 then return;
            scan(o.Directions, j -> (
                dl := flatten entries (Kb * random(kk^(numcols Kb), kk^1, Height => 9));
                full := new MutableList from toList(#wv : 0_kk);
                scan(#(bl#1), i -> full#((bl#1)#i) = dl#i);
                -- the quadratic part phi_2(delta): phi with the two blocks replaced by delta, the third kept
                w := if useVA then phi (M#"va matrices") toList full
                     else (
                        (Qd, Kd, Vd) := first first lcasLayers(shapes, toList full);
                        (Qw0, Kw0, Vw0) := first first lcasLayers(shapes, wv);
                        (Qx, Kx, Vx) := if bl#0 == "V,K" then (Qw0, Kd, Vd) else if bl#0 == "V,Q" then (Qd, Kw0, Vd) else (Qd, Kd, Vw0);
                        phi(Vx, (transpose Kx) * Qx));
                if rank matrix {p0, w} < 2 then return;
                tl := sum(nVA, i -> random(-9, 9) * Rf_i);
                J := fiberOf(apply(p0, w, (c, x) -> c - Rf_nVA * x)) + ideal(sum(nOut*nD, i -> Rf_i^2) - 1, Rf_(nVA + 1) - tl);
                E := eliminate(take(gens Rf, nVA), J);
                f := if numgens E == 1 then E_0 else 0_Rf;
                T := Rf_(nVA + 1);
                variable := "t";
                if f != 0 and degree(T, f) >= 1 then (
                    -- (V, A) -> (-V, -A) keeps the fiber, so f is usually even in t: then pass to u = t^2
                    -- (written in the variable t), whose discriminant is far cheaper
                    (mons, cfs) := coefficients(f, Variables => {T});
                    if all(numcols mons, i -> even degree(T, mons_(0, i))) then (
                        f = sum(numcols mons, i -> cfs_(i, 0) * T^(degree(T, mons_(0, i)) // 2));
                        variable = "t^2"));
                witnesses = append(witnesses, new HashTable from {"blocks" => bl#0, "direction" => toList full,
                    "base" => {entries Vv, entries Av}, "variable" => variable,
                    "eliminant" => (if f == 0 or degree(T, f) < 1 then null else f)})))))));
    new HashTable from base | {
        "rational_preimages" => #Pre,
        "fiber_degree" => (if dim Jfib == 0 then degree Jfib else null),
        "fiber_off_chart" => fiberOf p0 + ideal(ell, Rf_nVA, Rf_(nVA + 1)) != 1,
        "regular_preimages" => regular, "critical_preimages" => #critical,
        "tangent_rank" => rank JI1, "codimension" => codim I1, "witnesses" => witnesses})

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
            (@TO parametrizationFiber@). For one layer it computes the implicit ideal
            (@TO implicitModel@, @TO implicitIdeal@), the singular locus (@TO singularStrata@),
            the critical locus of the parametrization (@TO criticalLocus@) and the data of real
            verdicts at a point (@TO pointVerdict@). Records of the computations can be printed as JSON
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
        :One-layer geometry
        ImplicitModel
        implicitModel
        implicitIdeal
        implicitRecord
        numericalDegree
        weightStrata
        (singularLocus, ImplicitModel)
        singularRecord
        singularStrata
        criticalImage
        criticalLocus
        pointVerdict
        :Records
        printRecord
        idealRecord
        :Options
        Heads
        Columns
        Generators
        WitnessTries
        OneCoordinate
        Reparametrize
        ComputeIdeal
        NumericalDegreeRuns
        MinorBudget
        SamplesPerPiece
        Directions
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
        whether a record carries the generators of the implicit ideal
    Description
        Text
            An option of @TO dimensionRecord@ (default false) and of @TO implicitRecord@ (default true).
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

doc ///
    Key
        ImplicitModel
        (net, ImplicitModel)
    Headline
        the coordinates of a one-layer neurovariety, ready for implicitization
    Description
        Text
            Made by @TO implicitModel@. A hash table with string keys; the ones meant for users are
            {\tt "widths"}, {\tt "attention"}, {\tt "tokens"}, {\tt "ring"} (the ring of the
            coordinates $y_1, \ldots, y_n$), {\tt "coordinates"} (the $y_i$ as polynomials in the
            parameters), {\tt "labels"} (per $y_i$: the output row, then the exponents of its token
            monomial), {\tt "parametrization"} (0: $(Q, K, V)$; 1: $(V, A)$ with $A$ generic; 2:
            $(V, A)$ with rank $A \le a$; 3: $(V, Z)$ with $Z$ symmetric of rank $\le 2a$),
            {\tt "parameters"} and {\tt "ambient"} ($n$). The implicit ideal and the other results
            are computed once and kept in its cache, so the functions taking a model share them.
        Example
            M = implicitModel({2,1}, {1}, 2)
            M#"coordinates"
    SeeAlso
        implicitModel
///

doc ///
    Key
        implicitModel
        (implicitModel, List, List, ZZ)
        [implicitModel, OneCoordinate]
        [implicitModel, Reparametrize]
    Headline
        the coordinates of a one-layer neurovariety
    Usage
        M = implicitModel(widths, attention, tokens)
    Inputs
        widths:List
            $\{d, d'\}$: one layer
        attention:List
            $\{a\}$
        tokens:ZZ
            the number $t$ of tokens
        OneCoordinate => Boolean
            use the first output row only (default false): a projection of the neurovariety, much
            smaller; the singular locus and the verdicts need the full output
        Reparametrize => Boolean
            eliminate from $(V, A = K^T Q)$ (or $(V, Z)$, $Z$ the symmetric part of $A$, for one
            token) instead of the weights $(Q, K, V)$ (default true); both give the same ideal,
            the reparametrization much faster
    Outputs
        M:ImplicitModel
    Description
        Text
            The layer is $\phi_W(X) = V X (X^T K^T Q X)$. Its first output token is a vector of
            cubic forms in the tokens; their coefficients are polynomials in the weights, and a
            basis $y_1, \ldots, y_n$ of the linear span of these coefficients is the set of
            coordinates of the model (an injective linear image of the neurovariety, so its
            dimension, degree and singularities are those of the neurovariety).

            The function depends on $W$ only through $V$ and $A = K^T Q$. When $a \ge d$, $A$ is a
            generic matrix; when $a < d$ it is a matrix of rank at most $a$, and the ideal is
            eliminated modulo the $(a+1)$-minors of $A$. Functions that need the differential of
            $W \mapsto \phi_W$ (critical points, verdicts, the numerical degree) keep $(Q, K, V)$
            when $a < d$.
        Example
            M = implicitModel({2,2}, {2}, 2)
            M#"parametrization"
            #(M#"coordinates")
    SeeAlso
        implicitIdeal
        implicitRecord
///

doc ///
    Key
        implicitIdeal
        (implicitIdeal, ImplicitModel)
        (implicitIdeal, List, List, ZZ)
        [implicitIdeal, OneCoordinate]
        [implicitIdeal, Reparametrize]
    Headline
        the implicit ideal of a one-layer neurovariety
    Usage
        implicitIdeal M
        implicitIdeal(widths, attention, tokens)
    Inputs
        M:ImplicitModel
        widths:List
        attention:List
        tokens:ZZ
        OneCoordinate => Boolean
            for the second form, passed to @TO implicitModel@ (default @TO null@, meaning false); a
            model already has it, so the first form refuses the option
        Reparametrize => Boolean
            for the second form, passed to @TO implicitModel@ (default @TO null@, meaning true)
    Outputs
        :Ideal
            in the coordinates $y_i$ of the model, minimally generated: the kernel of the
            coefficient ring map, exact over @TO QQ@
    Description
        Text
            The kernel is taken with the $y_i$ graded by the degree of their images, so it is a
            graded computation; the ideal is returned in the standard-graded ring, for
            @TO dim@ and @TO degree@. The result is cached in the model.
        Example
            I = implicitIdeal({2,1}, {1}, 2)
            (dim I, degree I)
    SeeAlso
        implicitRecord
        neurovarietyDimension
///

doc ///
    Key
        implicitRecord
        (implicitRecord, ImplicitModel)
        [implicitRecord, ComputeIdeal]
        [implicitRecord, Generators]
        [implicitRecord, NumericalDegreeRuns]
    Headline
        the implicit ideal and its data, as a record
    Usage
        implicitRecord M
    Inputs
        M:ImplicitModel
        ComputeIdeal => Boolean
            whether to compute the implicit ideal at all (default true); false with
            NumericalDegreeRuns > 0 gives the numerical degree of cases elimination cannot reach
        Generators => Boolean
            whether the record carries the generators of the ideal (default true)
        NumericalDegreeRuns => ZZ
            how many runs of @TO numericalDegree@ to add (default 0)
    Outputs
        :HashTable
            with string keys {\tt "parametrization"}, {\tt "parameters"}, {\tt "coefficients"}
            (the nonzero coefficients), {\tt "linear_span"} (the number of coordinates),
            {\tt "labels"}, {\tt "coordinates"}, {\tt "numerical_degree_runs"},
            {\tt "m2_version"}, {\tt "package_version"}, and with the ideal {\tt "dimension"},
            {\tt "codimension"}, {\tt "degree"}, {\tt "generator_degrees"},
            {\tt "implicit_cpu_ms"} and {\tt "generators"}
    Description
        Example
            r = implicitRecord implicitModel({2,1}, {1}, 2);
            (r#"dimension", r#"degree", r#"generator_degrees")
    SeeAlso
        printRecord
///

doc ///
    Key
        idealRecord
        (idealRecord, Ideal)
    Headline
        an ideal as a record: minimal generators, dimension, degree
    Usage
        idealRecord I
    Inputs
        I:Ideal
    Outputs
        :HashTable
            with string keys {\tt "generators"}, {\tt "dimension"} and {\tt "degree"}
    Description
        Example
            R = QQ[x,y];
            idealRecord ideal(x^2, x*y)
///

doc ///
    Key
        numericalDegree
        (numericalDegree, ImplicitModel, ZZ)
    Headline
        the degree of the neurovariety by monodromy, several times
    Usage
        numericalDegree(M, runs)
    Inputs
        M:ImplicitModel
        runs:ZZ
    Outputs
        :List
            of hash tables, one per run, with keys {\tt "degree"} (@TO null@ when the run failed)
            and {\tt "cpu_ms"}
    Description
        Text
            Each run is {\tt numericalImageDegree} of the package NumericalImplicitization on the
            parametrization by the weights, which is loaded on first use. A single run can miss
            sheets, so the caller should take the consensus of several; the result is numeric,
            not exact.
        Example
            setRandomSeed 0;
            apply(numericalDegree(implicitModel({2,1}, {1}, 1), 2), r -> r#"degree")
    SeeAlso
        implicitRecord
///

doc ///
    Key
        weightStrata
        (weightStrata, ImplicitModel)
    Headline
        the closures of the images of the special weight strata
    Usage
        weightStrata M
    Inputs
        M:ImplicitModel
    Outputs
        :HashTable
            from names to ideals in the coordinates of M: {\tt "rank11"} (rank $V$ = rank $A$ = 1),
            {\tt "parallel"} (also rowspace $V$ = colspace $A$) and, when $1 < a < d$,
            {\tt "rankA"} (rank $A < a$)
    Description
        Text
            Each closure is the image of a parametrization by rank factorizations ($V = c u^T$,
            $A = g h^T$; $V = c u^T$, $A = u h^T$; $A = G^T H$ with $a - 1$ rows). These are the
            sets the singular and critical pieces are matched to.
        Example
            applyValues(weightStrata implicitModel({2,1}, {1}, 2), dim)
    SeeAlso
        singularStrata
        criticalLocus
///

doc ///
    Key
        (singularLocus, ImplicitModel)
    Headline
        the singular locus of a one-layer neurovariety by the Jacobian criterion
    Usage
        singularLocus M
    Inputs
        M:ImplicitModel
    Outputs
        :Ideal
            $I$ plus the minors of size codim $I$ of the Jacobian matrix of $I$
    Description
        Text
            All minors when there are at most 20000 of them; otherwise the sum of the minors of
            dim $I$ + 1 random combinations of the generators, which equals the singular locus
            with high probability. Feasible for the smallest cases; @TO singularStrata@ reaches
            further.
        Example
            M = implicitModel({2,1}, {1}, 2);
            radical singularLocus M
    SeeAlso
        singularRecord
        singularStrata
///

doc ///
    Key
        singularRecord
        (singularRecord, ImplicitModel)
    Headline
        the singular locus by the whole ideal, decomposed, as a record
    Usage
        singularRecord M
    Inputs
        M:ImplicitModel
    Outputs
        :HashTable
            with string keys {\tt "singular"} (an @TO idealRecord@ of @TO (singularLocus, ImplicitModel)@),
            {\tt "randomized"} (whether random combinations were used), {\tt "components"} (one
            @TO idealRecord@ per minimal prime, with the key {\tt "strata"}: the names of the
            @TO weightStrata@ containing it)
    Description
        Example
            (singularRecord implicitModel({2,1}, {1}, 2))#"components"
///

doc ///
    Key
        singularStrata
        (singularStrata, ImplicitModel)
        [singularStrata, MinorBudget]
        [singularStrata, SamplesPerPiece]
    Headline
        the singular locus of a one-layer neurovariety on slices of the group orbits
    Usage
        singularStrata M
    Inputs
        M:ImplicitModel
        MinorBudget => ZZ
            the most minors formed at once (default 3000000); a piece needing more is reported
            unresolved
        SamplesPerPiece => ZZ
            random rational weight points per piece with linear equations (default 1)
    Outputs
        :HashTable
            with string keys {\tt "pieces"}, {\tt "unresolved"}, {\tt "singular"} (an
            @TO idealRecord@, or @TO null@ when a piece is unresolved or matches no stratum) and
            {\tt "factor_route"}; the names in {\tt "matches"} are those of @TO weightStrata@
    Description
        Text
            $G = GL(d') \times GL(d)$ acts by $(V, A) \mapsto (h V g, g^T A g)$ and $\phi$ is
            equivariant, so the singular locus is $G$-stable, and every point of the
            neurovariety is in the orbit of $\phi(V_r, A)$ with $V_r = [I_r\ 0; 0\ 0]$. On each
            slice a stable piece $P$ is singular when the Jacobian of $I$ has generic rank below
            the codimension on $P$; a smooth piece with a dense orbit meets the singular locus only
            where the orbit dimension drops, and a smooth piece without one only in the minors of
            the Jacobian; those sets are examined in turn. Every piece records {\tt "rank_V"},
            {\tt "jacobian_rank"}, {\tt "codimension"}, {\tt "image_dimension"}, {\tt "rank_A"},
            {\tt "colspace_A_in_rowspace_V"}, {\tt "matches"} (the stratum whose closure it is, or
            {\tt "none"}), {\tt "generators"} (in the slice coordinates) and {\tt "points"} (weights
            $\{Q, K, V\}$ on it). The singular locus is the intersection of the matched strata
            closures, or the vertex. With $d' = a = 1$ the test runs on the factor
            $S = sym(v \otimes k)$ of $\phi = S \otimes q$ ({\tt "factor_route"}).
        Example
            setRandomSeed 0;
            S = singularStrata implicitModel({2,2}, {1}, 2);
            apply(S#"pieces", p -> (p#"rank_V", p#"matches", p#"image_dimension"))
            (S#"singular")#"dimension"
    SeeAlso
        (singularLocus, ImplicitModel)
        weightStrata
///

doc ///
    Key
        criticalImage
        (criticalImage, ImplicitModel)
    Headline
        the image of the critical locus of the parametrization, by elimination
    Usage
        criticalImage M
    Inputs
        M:ImplicitModel
    Outputs
        :Ideal
            the kernel of the coordinate map on the weights where the differential has rank below
            the dimension (not necessarily radical)
    Description
        Text
            Feasible for the smallest cases only; @TO criticalLocus@ computes the same set on
            orbit slices.
        Example
            M = implicitModel({2,1}, {1}, 2);
            dim criticalImage M
    SeeAlso
        criticalLocus
///

doc ///
    Key
        criticalLocus
        (criticalLocus, ImplicitModel)
        [criticalLocus, MinorBudget]
        [criticalLocus, SamplesPerPiece]
    Headline
        the critical locus of the parametrization on slices of the group orbits, and its image
    Usage
        criticalLocus M
    Inputs
        M:ImplicitModel
        MinorBudget => ZZ
            the most minors formed at once (default 3000000)
        SamplesPerPiece => ZZ
            random rational weight points per piece with linear equations (default 1)
    Outputs
        :HashTable
            with string keys {\tt "pieces"} (as in @TO singularStrata@, without the Jacobian
            keys), {\tt "unresolved"}, {\tt "critical_image"} (an @TO idealRecord@ of the union
            of the matched strata closures, or @TO null@), {\tt "base_locus_V_or_A"} (whether
            $\phi$ vanishes only where $V = 0$ or $A = 0$, which makes the image closed)
    Description
        Text
            The rank of the differential is $G$-invariant, so the critical locus meets every orbit
            in a slice point, and the same slices as in @TO singularStrata@ apply. The
            parametrization is $(V, A)$ when $a \ge d$ (every real $A$ is $K^T Q$, so the real image
            is the same, with fewer critical points) and $(Q, K, V)$ otherwise.
        Example
            setRandomSeed 0;
            C = criticalLocus implicitModel({2,1}, {1}, 2);
            apply(C#"pieces", p -> p#"matches")
            (C#"critical_image")#"dimension"
    SeeAlso
        criticalImage
        pointVerdict
///

doc ///
    Key
        pointVerdict
        (pointVerdict, ImplicitModel, List, List, List)
        [pointVerdict, Directions]
    Headline
        the data of a real verdict at a rational weight point
    Usage
        pointVerdict(M, Q, K, V)
    Inputs
        M:ImplicitModel
            of the full output
        Q:List
            the rows of $Q$ ($a \times d$), rationals
        K:List
            the rows of $K$ ($a \times d$)
        V:List
            the rows of $V$ ($d' \times d$)
        Directions => ZZ
            random kernel directions tried per critical preimage and pair of weight blocks
            (default 2)
    Outputs
        :HashTable
            with string keys {\tt "vertex"} (whether $\phi_W = 0$; then nothing else) and
            otherwise {\tt "tangent_rank"} and {\tt "codimension"} ($\phi_W$ is smooth when they
            agree), {\tt "rational_preimages"}, {\tt "regular_preimages"},
            {\tt "critical_preimages"}, {\tt "fiber_degree"} (@TO null@ for a positive-dimensional
            fiber), {\tt "fiber_off_chart"} and {\tt "witnesses"}
    Description
        Text
            The fiber of $p = \phi_W$ is taken in $(V, A)$ with rank $A \le a$, one point per
            scaling orbit. $p$ is an interior point of the real image when it is smooth with a
            regular real preimage, or when the whole fiber consists of rational regular points
            (every branch is then covered). For a boundary point, $\phi$ is bilinear in two
            blocks of weights, so for $\delta$ in the kernel of that partial differential at a
            critical preimage, $p - s \phi_2(\delta)$ is a real point of the variety; each witness
            records the blocks, $\delta$, the preimage and the eliminant $f(s, t)$ of its fiber
            ({\tt "variable"} "t^2" when $f$ is written in $u = t^2$). If $f(s, \cdot)$ has no real
            root for small $s > 0$ (a Sturm count, left to the caller), $p$ is a limit of points
            outside the real image.
        Example
            setRandomSeed 0;
            r = pointVerdict(implicitModel({2,1}, {1}, 2), {{1,2}}, {{1,0}}, {{1,1}});
            (r#"tangent_rank", r#"codimension", r#"regular_preimages")
    SeeAlso
        criticalLocus
///

doc ///
    Key
        OneCoordinate
    Headline
        use the first output row only
    Description
        Text
            An option of @TO implicitModel@ and @TO implicitIdeal@ (default false).
        Example
            #((implicitModel({2,2}, {1}, 2, OneCoordinate => true))#"coordinates")
///

doc ///
    Key
        Reparametrize
    Headline
        eliminate from (V, A) instead of (Q, K, V)
    Description
        Text
            An option of @TO implicitModel@ and @TO implicitIdeal@ (default true). Both
            parametrizations have the same image closure; false is the slow route, an independent
            check.
        Example
            (implicitModel({2,1}, {2}, 2, Reparametrize => false))#"parametrization"
///

doc ///
    Key
        ComputeIdeal
    Headline
        whether implicitRecord eliminates
    Description
        Text
            An option of @TO implicitRecord@ (default true).
        Example
            keys implicitRecord(implicitModel({2,1}, {1}, 1), ComputeIdeal => false)
///

doc ///
    Key
        NumericalDegreeRuns
    Headline
        how many monodromy runs implicitRecord adds
    Description
        Text
            An option of @TO implicitRecord@ (default 0); see @TO numericalDegree@.
        Example
            options implicitRecord
///

doc ///
    Key
        MinorBudget
    Headline
        the most minors the slice computations form at once
    Description
        Text
            An option of @TO singularStrata@ and @TO criticalLocus@ (default 3000000). Pieces that
            need more are listed under {\tt "unresolved"}, and no ideal is assembled.
        Example
            S = singularStrata(implicitModel({2,2}, {1}, 2), MinorBudget => 1);
            apply(S#"unresolved", u -> u#"reason")
///

doc ///
    Key
        SamplesPerPiece
    Headline
        random weight points per slice piece
    Description
        Text
            An option of @TO singularStrata@ and @TO criticalLocus@ (default 1): rational weights
            on each piece with linear equations, moved off the slice by a random group element.
        Example
            setRandomSeed 0;
            C = criticalLocus(implicitModel({2,1}, {1}, 2), SamplesPerPiece => 2);
            #((first C#"pieces")#"points")
///

doc ///
    Key
        Directions
    Headline
        kernel directions tried per witness curve
    Description
        Text
            An option of @TO pointVerdict@ (default 2).
        Example
            options pointVerdict
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

-- the implicit ideal: dimension against the Jacobian rank, the reparametrized ideal against the
-- ideal eliminated from the weights themselves
TEST ///
setRandomSeed 0
M = implicitModel({2,1}, {1}, 2)
I = implicitIdeal M
assert(dim I == neurovarietyDimension({2,1}, {1}, 2) and degree I == 3)
assert(apply(flatten entries gens I, g -> first degree g) == {2,2,2})
-- every coordinate of phi at a random point satisfies the equations
(Rw, Vw, Aw, Bw) = M#"weights";
pt = map(QQ, Rw, apply(numgens Rw, i -> random(-9, 9)));
assert(sub(I, matrix {apply(Bw, f -> pt f)}) == 0)
I2 = implicitIdeal implicitModel({2,1}, {2}, 2)
J2 = implicitIdeal implicitModel({2,1}, {2}, 2, Reparametrize => false)
assert(sub(J2, ring I2) == I2 and dim I2 == neurovarietyDimension({2,1}, {2}, 2))
r = implicitRecord(M, Generators => false)
assert(r#"dimension" == 4 and r#"linear_span" == 6 and not r#?"generators")
///

-- the singular locus two ways, the critical image two ways
TEST ///
setRandomSeed 0
M = implicitModel({2,1}, {1}, 2)
S = singularStrata M
assert(S#"unresolved" == {} and S#"singular" =!= null)
assert(radical ideal S#"singular"#"generators" == radical singularLocus M)
C = criticalLocus M
assert(C#"base_locus_V_or_A" and C#"critical_image" =!= null)
assert(radical ideal C#"critical_image"#"generators" == radical criticalImage M)
assert(all(C#"pieces", p -> p#"matches" == "parallel"))
-- the sample points lie on their pieces: phi there satisfies the parallel stratum's equations
P = (weightStrata M)#"parallel"
scan(C#"pieces", p -> scan(p#"points", w -> (
    (Q, K, V) = toSequence apply(w, m -> matrix(QQ, m));
    assert(sub(P, matrix {(M#"coordinate map")(V, transpose K * Q)}) == 0))))
///

-- verdict data at a smooth point with regular preimages, and at the vertex; bad input refused
TEST ///
setRandomSeed 0
M = implicitModel({2,1}, {1}, 2)
r = pointVerdict(M, {{1,2}}, {{1,0}}, {{1,1}})
assert(not r#"vertex" and r#"tangent_rank" == r#"codimension" and r#"regular_preimages" >= 1)
assert((pointVerdict(M, {{0,0}}, {{1,0}}, {{1,1}}))#"vertex")
assert(try (pointVerdict(M, {{1,2,3}}, {{1,0}}, {{1,1}}); false) else true)
assert(try (implicitModel({2,2,2}, {1,1}, 2); false) else true)
assert(try (implicitModel({2,1}, {1}, 2, OneCoordinate => 1); false) else true)
assert(try (singularStrata(M, MinorBudget => 0); false) else true)
assert(try (criticalLocus implicitModel({2,1}, {1}, 2, OneCoordinate => true); false) else true)
assert(try (implicitIdeal(M, OneCoordinate => true); false) else true)
///

end--

restart
loadPackage("LightningCAS", FileName => "m2/LightningCAS.m2", Reload => true)
check "LightningCAS"
