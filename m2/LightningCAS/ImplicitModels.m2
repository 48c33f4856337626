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
toString ImplicitModel := M -> ("an implicit model of widths " | toString M#"widths" | ", attention "
    | toString M#"attention" | ", " | toString M#"tokens" | " token(s), in " | toString M#"ambient" | " coordinates")
net ImplicitModel := M -> net toString M
isWellDefined ImplicitModel := M -> (
    all({"widths", "attention", "tokens", "parametrization", "ring", "coordinates",
        "labels", "weight ring", "weight coordinates", "chosen", "monomials", "rows used", "cache"}, k -> M#?k)
    and member(M#"parametrization", {0, 1, 2, 3}) and #(M#"coordinates") == M#"ambient"
    and numgens M#"ring" == M#"ambient" and #(M#"labels") == M#"ambient"
    and #(M#"weight coordinates") == M#"ambient" and all(M#"weight coordinates", f -> ring f === M#"weight ring")
    and all(M#"coordinates", isHomogeneous))

lcasBoolean = (name, x) -> if not instance(x, Boolean) then error("LightningCAS: " | name | " must be true or false");
lcasCount = (name, x, lo) -> if not instance(x, ZZ) or x < lo then
    error("LightningCAS: " | name | " must be an integer >= " | toString lo);

implicitModel = method(Options => {OneCoordinate => false, Reparametrize => true})
implicitModel(List, List, ZZ) := o -> (widths, attention, tokens) -> (
    blocks := (neuralNetwork(widths, attention, tokens))#"blocks";
    if #blocks != 1 then
        error "LightningCAS: the geometry functions handle one layer";
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
    vaSymbols := flatten table(nOut, nD, (p, q) -> vSym_(p+1, q+1)) | flatten table(nD, nD, (r, s) -> aSym_(r+1, s+1));
    vaMatrices := L -> lcasSplitVA(nOut, nD, L);
    upperPairs := flatten apply(nD, r -> apply(toList(r .. nD - 1), c -> (r, c)));
    vzSymbols := () -> flatten table(nOut, nD, (p, q) -> vSym_(p+1, q+1)) | apply(upperPairs, rc -> zSym_(rc#0 + 1, rc#1 + 1));
    vzMatrices := L -> (matrix table(nOut, nD, (p, q) -> L#(p*nD + q)),
        matrix table(nD, nD, (r, c) -> L#(nOut*nD + position(upperPairs, rc -> rc == (min(r, c), max(r, c))))));
    qkvWeights := () -> lcasQKVRing(widths, attention);
    (R, Vm, Am) := (if route == 1 or route == 2 then (Rva := kk[vaSymbols]; (Va, Aa) := vaMatrices gens Rva; (Rva, Va, Aa))
        else if route == 3 then (Rvz := kk[vzSymbols()]; (Vz, Zz) := vzMatrices gens Rvz; (Rvz, Vz, Zz))
        else qkvWeights());
    -- the ideal of the parameter variety in R: the rank condition on route 2 (on A) and 3 (on Z), else zero
    sourceIdeal := (if route == 2 then minors(nAtt + 1, Am)
        else if route == 3 and 2 * nAtt < nD then minors(2 * nAtt + 1, Am) else ideal 0_R);
    xRing := kk[lcasTokenSymbols(nD, tokens)];
    monList := flatten entries basis(3, xRing);
    rowsUsed := if o.OneCoordinate then {0} else toList(0 .. nOut - 1);
    coeffList := (V0, A0) -> lcasCoefficientList(nD, tokens, monList, rowsUsed, V0, A0);
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
        "weight ring" => Rw, "weight V" => Vw, "weight A" => Aw, "weight coordinates" => Bw,
        -- what implicitCoordinates needs to evaluate the coordinates of phi at any (V, A)
        "monomials" => monList, "rows used" => rowsUsed, "chosen" => chosen, "va symbols" => vaSymbols,
        "cache" => new MutableHashTable})

-- all coefficients (row p, monomial m) of output token 1, in a fixed order, for any (V, A) over one ring
lcasCoefficientList = (nD, tokens, monList, rowsUsed, V0, A0) -> (
    Rp := ring V0;
    Tp := Rp[lcasTokenSymbols(nD, tokens)];
    X := matrix table(nD, tokens, (r, j) -> Tp_(r*tokens + j));
    Phi := sub(V0, Tp) * X * ((transpose X) * sub(A0, Tp) * X);
    mons := matrix {apply(monList, m -> (map(Tp, ring m, gens Tp)) m)};
    flatten apply(rowsUsed, p -> apply(flatten entries last coefficients(Phi_(p, 0), Monomials => mons),
            c -> lift(c, Rp))))

-- a flat list of the entries of (V, A) as the two matrices (V: nOut x nD, A: nD x nD)
lcasSplitVA = (nOut, nD, L) -> (matrix table(nOut, nD, (p, q) -> L#(p*nD + q)),
    matrix table(nD, nD, (r, s) -> L#(nOut*nD + r*nD + s)))

-- the (Q, K, V) weight ring of one layer, with V and A = K^T Q in it
lcasQKVRing = (widths, attention) -> (
    N := neuralNetwork(widths, attention, 1);
    Rq := QQ[N#"weights"];
    (Qq, Kq, Vq) := first first lcasBlockWeights(N, gens Rq);
    (Rq, Vq, (transpose Kq) * Qq))

lcasQKVWeights = M -> lcasQKVRing(M#"widths", M#"attention")
lcasVASymbols = M -> M#"va symbols"
lcasVAMatrices = (M, L) -> lcasSplitVA(M#"widths"#1, M#"widths"#0, L)

implicitCoordinates = method()
implicitCoordinates(ImplicitModel, Matrix, Matrix) := (M, V0, A0) ->
    (lcasCoefficientList(M#"widths"#0, M#"tokens", M#"monomials", M#"rows used", V0, A0))_(M#"chosen")
implicitCoordinates(ImplicitModel, Sequence) := (M, VA) -> implicitCoordinates(M, VA#0, VA#1)

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


numericalDegree = method()
numericalDegree(ImplicitModel, ZZ) := (M, runs) -> (
    lcasCount("the number of runs", runs, 0);
    if runs == 0 then return {};
    -- NumericalImplicitization is loaded on first use only (it takes seconds)
    needsPackage "NumericalImplicitization";
    imageDegree := value "numericalImageDegree";
    RC := CC (monoid M#"weight ring");
    FC := apply(M#"weight coordinates", f -> sub(f, RC));
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
