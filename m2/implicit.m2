-- lightning_cas: implicit ideal of a ONE-layer neurovariety, and optionally its singular locus,
-- the image of the critical locus of the parametrization (the algebraic boundary candidate) and
-- the closures of the weight strata that MATH.md section 5 names.
-- Inputs (rendered header): widths, attention, tokens, oneCoord, reparam, emitGenerators,
--   wantIdeal, wantSingular, wantComponents, wantBoundary, wantStrata, wantOrbits, minorBudget,
--   numDegreeRuns, seed.
-- The numerical degree (numDegreeRuns > 0) is NumericalImplicitization's monodromy count of the
-- image, repeated because a single run can be wrong; every run is emitted, Python takes the consensus.
-- Structure used, and why:
--  * the function depends on W only through (V, A = K^T Q); when a >= d, A is a generic d x d
--    matrix, so (V, A) is a linear parametrization with far fewer variables (reparam = 1);
--  * only the first output token (t >= 2: the other tokens give linear copies), optionally only
--    the first output row (oneCoord = 1);
--  * a basis of the linear span of the coefficients first: an injective linear image, so
--    dimension, degree and singularities are unchanged;
--  * target variables graded by the degree of their image, so ker is a graded computation;
--    the ideal is then moved to a standard-graded ring for dimension and degree.
kk = QQ;
nD = widths#0; nOut = widths#1; nAtt = attention#0;
useVA = reparam == 1 and nAtt >= nD;
vSym = getSymbol "v"; aSym = getSymbol "a"; ySym = getSymbol "y";
if useVA then (
    R = kk[flatten table(nOut, nD, (p, q) -> vSym_(p+1, q+1)) | flatten table(nD, nD, (r, s) -> aSym_(r+1, s+1))];
    Vm = matrix table(nOut, nD, (p, q) -> R_(p*nD + q));
    Am = matrix table(nD, nD, (r, s) -> R_(nOut*nD + r*nD + s));
) else (
    R = kk[lcasWeightSymbols()];
    (Qm, Km, Vm) = first lcasLayers(gens R);
    Am = (transpose Km) * Qm;
);
xRing = kk[lcasTokenSymbols()];
monList = flatten entries basis(3, xRing);
rowsUsed = if oneCoord == 1 then {0} else toList(0 .. nOut - 1);
-- all coefficients (row p, monomial m) of output token 1, in a fixed order, for any (V, A)
coeffList = (V0, A0) -> (
    Rp := ring V0;
    Tp := Rp[lcasTokenSymbols()];
    X := matrix table(nD, tokens, (r, j) -> Tp_(r*tokens + j));
    Phi := sub(V0, Tp) * X * ((transpose X) * sub(A0, Tp) * X);
    mons := matrix {apply(monList, m -> (map(Tp, xRing, gens Tp)) m)};
    flatten apply(rowsUsed, p -> apply(flatten entries last coefficients(Phi_(p, 0), Monomials => mons),
            c -> lift(c, Rp))));
allCoeffs = coeffList(Vm, Am);
nonzero = select(toList(0 .. #allCoeffs - 1), i -> allCoeffs#i != 0);
-- greedy basis of the linear span of the (non-zero) coefficient polynomials
C = lift(last coefficients matrix {allCoeffs_nonzero}, kk);
chosenPos = {}; rk = 0;
scan(#nonzero, j -> (s := rank C_(append(chosenPos, j)); if s > rk then (chosenPos = append(chosenPos, j); rk = s)));
chosen = nonzero_chosenPos;
B = allCoeffs_chosen;
if not all(B, isHomogeneous) then error "lightning_cas: coefficient polynomials are not homogeneous";
n = #B;
S1 = kk[ySym_1 .. ySym_n];
-- closure of the image of a list of homogeneous polynomials of one common degree (zeros allowed), as
-- an ideal of the standard-graded ring S (one variable per polynomial); S1 unless said otherwise
imageIdealIn = (F, S) -> (
    e := first degree first select(F, f -> f != 0);
    Sd := newRing(S, Degrees => toList(numgens S : e));
    F = apply(F, f -> if f == 0 then 0_(ring first F) else f);
    (map(S, Sd, vars S)) ker map(ring first F, Sd, F));
imageIdeal = F -> imageIdealIn(F, S1);
setRandomSeed seed;
lcasEmit("m2_version", version#"VERSION");
lcasEmit("parametrization", if useVA then 1 else 0);
lcasEmit("parameters", numgens R);
lcasEmit("coefficients", #nonzero);
lcasEmit("linear_span", n);
lcasEmit("labels", flatten apply(chosen, i -> {i // #monList + 1} | first exponents monList#(i % #monList)));
lcasEmit("coordinates", demark(" ; ", apply(B, toString)));
-- loaded at top level so the package's symbols exist when the block below is parsed
if numDegreeRuns > 0 then needsPackage "NumericalImplicitization";
if numDegreeRuns > 0 then (
    RC = CC (monoid R);
    FC = apply(B, f -> sub(f, RC));
    scan(numDegreeRuns, i -> (
        t1 := cpuTime();
        got := try numericalImageDegree(FC, ideal 0_RC, Verbose => false) else -1;
        lcasEmit("numerical_degree_run_" | toString(i + 1), {got, floor(1000 * (cpuTime() - t1))}))));
if wantIdeal == 1 then (
t0 = cpuTime();
I1 = imageIdeal B;
G = mingens I1;
I1 = ideal G;
cI = codim I1;
lcasEmit("dimension", dim I1);
lcasEmit("codimension", cI);
lcasEmit("degree", degree I1);
lcasEmit("generator_degrees", apply(flatten entries G, g -> first degree g));
lcasEmit("implicit_cpu_s", floor(1000 * (cpuTime() - t0)));
if emitGenerators == 1 then lcasEmit("generators", demark(" ; ", apply(flatten entries G, toString))));
emitIdeal = (key, J) -> (
    J = ideal mingens J;
    lcasEmit(key | "_dim", dim J);
    lcasEmit(key | "_degree", degree J);
    lcasEmit(key | "_gens", demark(" ; ", apply(flatten entries gens J, toString))));
emitComponents = (key, J) -> (
    P := minimalPrimes J;
    lcasEmit(key | "_count", #P);
    scan(#P, i -> emitIdeal(key | "_" | toString(i + 1), P#i));
    P);
if wantSingular == 1 then (
    -- all maximal minors when there are few; otherwise the sum over dim I1 + 1 random combinations of the
    -- generators. Each J*R gives Sing plus a divisor of V (where a random c-space of combinations meets
    -- the kernel of the Jacobian); k random divisors leave a set of dim <= dim V - k off Sing, so
    -- k = dim V + 1 is needed for "equal with high probability" (3 was too few when dim V > 3)
    JI = jacobian I1;
    fullMinors = binomial(numcols JI, cI) * binomial(numrows JI, cI);
    Jsing = if fullMinors <= 20000 or cI == 0 then I1 + minors(cI, JI) else (
        I1 + sum apply(dim I1 + 1, i -> minors(cI, JI * random(kk^(numcols JI), kk^cI, Height => 100))));
    lcasEmit("singular_method", if fullMinors <= 20000 or cI == 0 then 0 else 1);
    emitIdeal("singular", Jsing);
    singComps = if wantComponents == 1 then emitComponents("singular_component", Jsing) else {});
if wantBoundary == 1 then (
    -- critical points of W -> phi_W (differential rank below the dimension) and their image
    rD = dim I1;
    crit = minors(rD, jacobian matrix {B});
    critIm = (map(S1, S1, vars S1)) ker map(R / crit, S1, apply(B, f -> sub(f, R / crit)));
    emitIdeal("critical_image", critIm);
    critComps = emitComponents("critical_image_component", critIm));
if wantStrata == 1 then (
    -- closures of the images of the weight strata named by MATH.md section 5 (claims), each with
    -- a parametrization by rank factorizations
    strataIdeals = new MutableHashTable;
    cSym = getSymbol "c"; uSym = getSymbol "u"; gSym = getSymbol "g"; hSym = getSymbol "h";
    stratumIdeal = (name, VA) -> (
        J := imageIdeal((coeffList VA)_chosen);
        strataIdeals#name = J;
        lcasEmit("stratum_" | name | "_dim", dim J);
        if wantSingular == 1 then (
            lcasEmit("stratum_" | name | "_in_singular", if isSubset(Jsing, J) then 1 else 0);
            if wantComponents == 1 then lcasEmit("stratum_" | name | "_contains_singular_components",
                apply(#singComps, i -> if isSubset(J, singComps#i) then 1 else 0)));
        if wantBoundary == 1 then (
            lcasEmit("stratum_" | name | "_in_critical_image", if isSubset(critIm, J) then 1 else 0);
            lcasEmit("stratum_" | name | "_equals_critical_component",
                apply(#critComps, i -> if J == critComps#i then 1 else 0)));
        J);
    -- rank V = rank A = 1: V = c u^T, A = g h^T
    P1 = kk[cSym_1 .. cSym_nOut, uSym_1 .. uSym_nD, gSym_1 .. gSym_nD, hSym_1 .. hSym_nD];
    stratumIdeal("rank11", (transpose matrix {toList(P1_0 .. P1_(nOut-1))} * matrix {toList(P1_nOut .. P1_(nOut+nD-1))},
        transpose matrix {toList(P1_(nOut+nD) .. P1_(nOut+2*nD-1))} * matrix {toList(P1_(nOut+2*nD) .. P1_(nOut+3*nD-1))}));
    -- rowspace V = colspace A (rank one): V = c u^T, A = u h^T
    P2 = kk[cSym_1 .. cSym_nOut, uSym_1 .. uSym_nD, hSym_1 .. hSym_nD];
    uu = matrix {toList(P2_nOut .. P2_(nOut+nD-1))};
    stratumIdeal("parallel", (transpose matrix {toList(P2_0 .. P2_(nOut-1))} * uu,
        transpose uu * matrix {toList(P2_(nOut+nD) .. P2_(nOut+2*nD-1))}));
    -- rank A < a (only meaningful when 1 < a < d): A = G^T H with a - 1 rows
    if nAtt > 1 and nAtt < nD then (
        m = nAtt - 1;
        P3 = kk[flatten table(nOut, nD, (p, q) -> vSym_(p+1, q+1)) | flatten table(m, nD, (r, s) -> gSym_(r+1, s+1))
            | flatten table(m, nD, (r, s) -> hSym_(r+1, s+1))];
        V3 = matrix table(nOut, nD, (p, q) -> P3_(p*nD + q));
        G3 = matrix table(m, nD, (r, s) -> P3_(nOut*nD + r*nD + s));
        H3 = matrix table(m, nD, (r, s) -> P3_(nOut*nD + m*nD + r*nD + s));
        stratumIdeal("rankA", (V3, (transpose G3) * H3))));
if wantOrbits == 1 then (
    -- Singular locus by G-orbit strata, G = GL(d') x GL(d) acting by (V, A) -> (h V g, g^T A g): phi is
    -- equivariant, so Sing(X) is a union of G-stable sets and every point of X = image(phi) (the map has
    -- no base points, so its image is closed) lies in G.phi(V_r, A) with V_r = [I_r 0; 0 0], r = rank V.
    -- On each slice {(V_r, A)} a stable piece P (a prime in the slice coordinates) is
    --   singular     when the Jacobian of I at phi has generic rank < codim on P (exact rank over frac(R/P));
    --   smooth but with a dense G-orbit: then Sing meets it only where the orbit dimension drops
    --                (minors of the infinitesimal action), and those pieces are examined in turn;
    --   smooth without a dense orbit: Sing meets it in P + the codim-minors of the Jacobian (of the
    --                generators up to the first degree whose Jacobian has full rank, a G-stable set).
    -- Minors beyond minorBudget are not formed: that piece is reported unresolved.
    -- With d' = a = 1, phi = S (x) gamma with S = sym(v (x) k): off the vertex, X is locally Y x C^(d-1)
    -- (Y = closure of the S), so Sing(X) = Sing(Y) (x) C^d and the test runs on the factor Y, which is
    -- far smaller (the full Jacobian of X has codim 11 for d = 3).
    factorRoute = nOut == 1 and nAtt == 1 and nD > 1;
    orbitSlice = r -> (
        Rs := if nAtt >= nD then kk[flatten table(nD, nD, (i, j) -> (getSymbol "b")_(i+1, j+1))]
            else kk[flatten table(nAtt, nD, (i, j) -> (getSymbol "q")_(i+1, j+1))
                    | flatten table(nAtt, nD, (i, j) -> (getSymbol "k")_(i+1, j+1))];
        As := if nAtt >= nD then matrix table(nD, nD, (i, j) -> Rs_(i*nD + j))
            else transpose matrix table(nAtt, nD, (i, j) -> Rs_(nAtt*nD + i*nD + j))
                * matrix table(nAtt, nD, (i, j) -> Rs_(i*nD + j));
        Vs := matrix table(nOut, nD, (i, j) -> if i == j and i < r then 1_Rs else 0_Rs);
        (Rs, Vs, As));
    unitMat = (m, n, i, j, Rs) -> map(Rs^m, Rs^n, {(i, j) => 1_Rs});
    asColumn = L -> transpose matrix {L};
    -- the model the test runs on: coordinates (polynomials in the slice ring), Jacobian of the ideal
    -- composed with them, codimension, and the infinitesimal G-action on the coordinates
    orbitModel = (Rs, Vs, As) -> (
        if factorRoute then (
            -- S = sym(e1 (x) k) with k the column of A (A = k^T q): gamma = q is a free factor
            kcol := transpose matrix {toList(Rs_(nD) .. Rs_(2*nD - 1))};
            symS := (v, k) -> flatten apply(nD, i -> apply(toList(i .. nD - 1), j -> v_(0, i) * k_(j, 0) + v_(0, j) * k_(i, 0)));
            coords := symS(Vs, kcol);
            nY := #coords;
            PY := kk[(getSymbol "v")_1 .. (getSymbol "v")_nD, (getSymbol "w")_1 .. (getSymbol "w")_nD];
            SY := kk[(getSymbol "s")_1 .. (getSymbol "s")_nY];
            IY := imageIdealIn(symS(matrix {toList(PY_0 .. PY_(nD-1))}, transpose matrix {toList(PY_nD .. PY_(2*nD-1))}), SY);
            JY := (map(Rs, SY, coords)) jacobian IY;
            actF := apply(flatten table(nD, nD, (p, q) -> (p, q)), pq -> (E := unitMat(nD, nD, pq#0, pq#1, Rs);
                asColumn(symS(Vs * E, kcol) + symS(Vs, transpose(E) * kcol))));
            (coords, JY, codim IY, fold((a, b) -> a | b, actF), IY))
        else (
            phis := (coeffList(Vs, As))_chosen;
            actX := apply(flatten table(nOut, nOut, (p, q) -> (p, q)), pq ->
                    asColumn (coeffList(unitMat(nOut, nOut, pq#0, pq#1, Rs) * Vs, As))_chosen)
                | apply(flatten table(nD, nD, (p, q) -> (p, q)), pq -> (E := unitMat(nD, nD, pq#0, pq#1, Rs);
                    asColumn((coeffList(Vs * E, As))_chosen + (coeffList(Vs, transpose(E) * As + As * E))_chosen)));
            (phis, (map(Rs, S1, phis)) jacobian I1, cI, fold((a, b) -> a | b, actX), I1)));
    orbitFound = {}; orbitUnresolved = {};
    tooMany = (M, k) -> binomial(numrows M, k) * binomial(numcols M, k) > minorBudget;
    scan(toList(1 .. min(nOut, nD)), r -> (
        (Rs, Vs, As) := orbitSlice r;
        (coords, JS, cc, Act, Iused) := orbitModel(Rs, Vs, As);
        Dphi := transpose jacobian matrix {coords};
        gdegs := apply(flatten entries gens Iused, g -> first degree g);
        process := P -> (
            RP := Rs / P;
            if isSubset(ideal flatten entries As, P) then return;   -- A = 0: phi = 0, the vertex
            jr := rank sub(JS, RP);
            ta := rank sub(Act, RP);
            T := if P == 0 then id_(Rs^(numgens Rs)) else gens ker sub(transpose jacobian gens P, RP);
            dimY := rank (sub(Act, RP) | sub(Dphi, RP) * sub(T, RP));
            if jr < cc then (
                rankA := rank sub(As, RP);
                colIn := if r == nD then 1 else if isSubset(ideal flatten entries As^(toList(r .. nD - 1)), P) then 1 else 0;
                orbitFound = append(orbitFound, (r, P, jr, cc, if factorRoute then dimY + nD - 1 else dimY, rankA, colIn));
                return);
            if ta == dimY then (
                if tooMany(Act, ta) then (orbitUnresolved = append(orbitUnresolved, (r, P, "orbit-dimension minors")); return);
                scan(minimalPrimes(P + minors(ta, Act)), Q -> process Q))
            else (
                e := min gdegs;
                while rank sub(JS_(positions(gdegs, x -> x <= e)), RP) < cc do e = e + 1;
                J1 := JS_(positions(gdegs, x -> x <= e));
                if tooMany(J1, cc) then (orbitUnresolved = append(orbitUnresolved, (r, P, "Jacobian minors")); return);
                scan(minimalPrimes(P + minors(cc, J1)), Q -> if Q != P then process Q)));
        process ideal 0_Rs));
    lcasEmit("orbit_route", if factorRoute then 1 else 0);
    lcasEmit("orbit_components_count", #orbitFound);
    matchName = f -> (
        (r, P, jr, cc, dimY, rankA, colIn) := f;
        have := n -> strataIdeals#?n and dim strataIdeals#n == dimY;
        if r == 1 and rankA == 1 and colIn == 1 and have "parallel" then "parallel"
        else if r == 1 and rankA == 1 and have "rank11" then "rank11"
        else if rankA < nAtt and have "rankA" then "rankA" else "none");
    matched = apply(orbitFound, matchName);
    scan(#orbitFound, i -> (
        (r, P, jr, cc, dimY, rankA, colIn) := orbitFound#i;
        key := "orbit_component_" | toString(i + 1);
        lcasEmit(key, {r, jr, cc, dimY, rankA, colIn});
        lcasEmit(key | "_matches", matched#i);
        lcasEmit(key | "_gens", demark(" ; ", apply(flatten entries mingens P, toString)))));
    lcasEmit("orbit_unresolved_count", #orbitUnresolved);
    scan(#orbitUnresolved, i -> (
        key := "orbit_unresolved_" | toString(i + 1);
        lcasEmit(key, {orbitUnresolved#i#0});
        lcasEmit(key | "_reason", orbitUnresolved#i#2);
        lcasEmit(key | "_gens", demark(" ; ", apply(flatten entries mingens orbitUnresolved#i#1, toString)))));
    -- the singular locus as an ideal: the strata closures it matched (each irreducible, of the same
    -- dimension and containing the piece, hence equal to its closure), or the vertex alone
    if #orbitUnresolved == 0 and all(matched, m -> m != "none") then (
        singIdeal := if #matched == 0 then ideal vars S1 else intersect apply(unique matched, m -> strataIdeals#m);
        emitIdeal("orbit_singular", singIdeal)));
lcasEmit("total_cpu_s", floor(1000 * cpuTime()));
