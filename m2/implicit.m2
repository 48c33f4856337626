-- lightning_cas: implicit ideal of a ONE-layer neurovariety, and optionally its singular locus,
-- the image of the critical locus of the parametrization (the algebraic boundary candidate) and
-- the closures of the weight strata that docs/mathematics.md section 5 names.
-- Inputs (rendered header): widths, attention, tokens, oneCoord, reparam, emitGenerators,
--   wantIdeal, wantSingular, wantComponents, wantBoundary, wantStrata, wantOrbits, wantCritical,
--   wantVerdict (with pointQ, pointK, pointV, numDirections), samplesPerPiece, minorBudget, numDegreeRuns, seed.
-- The numerical degree (numDegreeRuns > 0) is NumericalImplicitization's monodromy count of the
-- image, repeated because a single run can be wrong; every run is emitted, Python takes the consensus.
-- Structure used, and why:
--  * the function depends on W only through (V, A = K^T Q); when a >= d, A is a generic d x d
--    matrix, so (V, A) is a linear parametrization with far fewer variables (reparam = 1);
--    when 1 < a < d, A ranges over the d x d matrices of rank <= a, so the ideal is the kernel of
--    the same (V, A) map on the quotient by minors(a + 1, A) (a prime ideal; (Q, K) -> K^T Q is onto
--    that variety, so the image closure is the same: docs/implicit.md). Everything that needs the
--    differential of W -> phi_W (critical points, verdict, numerical degree) keeps (Q, K, V);
--  * one token (t = 1): x^T A x = x^T Z x with Z = (A + A^T)/2, and the Z of rank <= a matrices are
--    dense in the symmetric matrices of rank <= min(2a, d), so (V, Z), Z symmetric modulo its
--    (2a+1)-minors (none when 2a >= d), has the same image closure (far faster: (3,1,2) does not
--    finish in 15 min on the minors of A);
--  * only the first output token (t >= 2: the other tokens give linear copies), optionally only
--    the first output row (oneCoord = 1);
--  * a basis of the linear span of the coefficients first: an injective linear image, so
--    dimension, degree and singularities are unchanged;
--  * target variables graded by the degree of their image, so ker is a graded computation;
--    the ideal is then moved to a standard-graded ring for dimension and degree.
kk = QQ;
nD = widths#0; nOut = widths#1; nAtt = attention#0;
-- the parametrization the implicit ideal is eliminated from: 0 = (Q, K, V); 1 = (V, A), A generic
-- (a >= d); 2 = (V, A) on rank A <= a (1 < a < d, t >= 2); 3 = (V, Z), Z symmetric of rank <= 2a
-- (a < d, t = 1). For a = 1 < d, t >= 2 the ideal stays on (Q, K, V), which is fast there
idealRoute = (if reparam == 0 then 0 else if nAtt >= nD then 1
    else if tokens == 1 then 3 else if nAtt > 1 then 2 else 0);
useVA = idealRoute == 1;   -- the weights themselves are (V, A): no rank condition
vSym = getSymbol "v"; aSym = getSymbol "a"; ySym = getSymbol "y"; zSym = getSymbol "z";
-- the (V, A) weights: their variable names, and the two matrices from a flat list in that order
-- (ring variables or numbers)
vaSymbols = () -> flatten table(nOut, nD, (p, q) -> vSym_(p+1, q+1)) | flatten table(nD, nD, (r, s) -> aSym_(r+1, s+1));
vaMatrices = L -> (matrix table(nOut, nD, (p, q) -> L#(p*nD + q)), matrix table(nD, nD, (r, s) -> L#(nOut*nD + r*nD + s)));
-- the (V, Z) weights of route 3: V, then the upper triangle of the symmetric Z row by row
upperPairs = flatten apply(nD, r -> apply(toList(r .. nD - 1), c -> (r, c)));
vzSymbols = () -> flatten table(nOut, nD, (p, q) -> vSym_(p+1, q+1)) | apply(upperPairs, rc -> zSym_(rc#0 + 1, rc#1 + 1));
vzMatrices = L -> (matrix table(nOut, nD, (p, q) -> L#(p*nD + q)),
    matrix table(nD, nD, (r, c) -> L#(nOut*nD + position(upperPairs, rc -> rc == (min(r, c), max(r, c))))));
-- the rank condition on A as an ideal of A's ring: minors(a + 1, A), zero when a >= d
rankConditionIdeal = A0 -> if nAtt < nD then minors(nAtt + 1, A0) else ideal 0_(ring A0);
-- the (Q, K, V) weight ring with V and A = K^T Q in it
qkvWeights = () -> (
    Rq := kk[lcasWeightSymbols()];
    (Qq, Kq, Vq) := first lcasLayers(gens Rq);
    (Rq, Vq, (transpose Kq) * Qq));
(R, Vm, Am) = (if idealRoute == 1 or idealRoute == 2 then (Rva := kk[vaSymbols()]; (Va, Aa) := vaMatrices gens Rva; (Rva, Va, Aa))
    else if idealRoute == 3 then (Rvz := kk[vzSymbols()]; (Vz, Zz) := vzMatrices gens Rvz; (Rvz, Vz, Zz))
    else qkvWeights());
-- the ideal of the parameter variety in R: the rank condition on route 2 (on A) and 3 (on Z), else zero
sourceIdeal = (if idealRoute == 2 then rankConditionIdeal Am
    else if idealRoute == 3 and 2 * nAtt < nD then minors(2 * nAtt + 1, Am) else ideal 0_R);
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
-- closure of the image of the parameter variety {J = 0} (J homogeneous, in the ring of F) under F:
-- the kernel of the map to the quotient ring, graded (ker on R/J is far faster than eliminating from
-- the graph ideal J + (y_i - f_i) with an elimination order: 19 s against > 300 s for (3,1,2), t = 2)
imageIdealOfVariety = (F, J, S) -> (
    e := first degree first select(F, f -> f != 0);
    Sd := newRing(S, Degrees => toList(numgens S : e));
    Rs := ring first F;
    Rq := if J == 0 then Rs else Rs / J;
    Fq := apply(F, f -> if f == 0 then 0_Rq else sub(f, Rq));
    (map(S, Sd, vars S)) ker map(Rq, Sd, Fq));
imageIdealIn = (F, S) -> imageIdealOfVariety(F, ideal 0_(ring first F), S);
imageIdeal = F -> imageIdealIn(F, S1);
-- the implicit ideal of the neurovariety: the image of the parameter variety of R
implicitIdeal = () -> imageIdealOfVariety(B, sourceIdeal, S1);
-- the coordinates as polynomials in (Q, K, V), for what needs the differential of W -> phi_W: the same
-- polynomials as B when the ideal route is (Q, K, V) or (V, A) with A generic (those are the weights)
(Rweights, Vweights, Aweights, Bweights) = (if idealRoute >= 2 then (
        (Rq0, Vq0, Aq0) := qkvWeights();
        (Rq0, Vq0, Aq0, (coeffList(Vq0, Aq0))_chosen))
    else (R, Vm, Am, B));
setRandomSeed seed;
lcasEmit("m2_version", version#"VERSION");
lcasEmit("parametrization", idealRoute);
lcasEmit("parameters", numgens R);
lcasEmit("coefficients", #nonzero);
lcasEmit("linear_span", n);
lcasEmit("labels", flatten apply(chosen, i -> {i // #monList + 1} | first exponents monList#(i % #monList)));
lcasEmit("coordinates", demark(" ; ", apply(B, toString)));
-- loaded at top level so the package's symbols exist when the block below is parsed
if numDegreeRuns > 0 then needsPackage "NumericalImplicitization";
if numDegreeRuns > 0 then (
    RC = CC (monoid Rweights);
    FC = apply(Bweights, f -> sub(f, RC));
    scan(numDegreeRuns, i -> (
        t1 := cpuTime();
        got := try numericalImageDegree(FC, ideal 0_RC, Verbose => false) else -1;
        lcasEmit("numerical_degree_run_" | toString(i + 1), {got, floor(1000 * (cpuTime() - t1))}))));
if wantIdeal == 1 then (
t0 = cpuTime();
I1 = implicitIdeal();
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
    crit = minors(rD, jacobian matrix {Bweights});
    critIm = (map(S1, S1, vars S1)) ker map(Rweights / crit, S1, apply(Bweights, f -> sub(f, Rweights / crit)));
    emitIdeal("critical_image", critIm);
    critComps = emitComponents("critical_image_component", critIm));
if wantStrata == 1 then (
    -- closures of the images of the weight strata named by docs/mathematics.md section 5 (claims), each with
    -- a parametrization by rank factorizations
    strataIdeals = new MutableHashTable;
    cSym = getSymbol "c"; uSym = getSymbol "u"; gSym = getSymbol "g"; hSym = getSymbol "h";
    stratumIdeal = (name, VA) -> (
        J := ideal mingens imageIdeal((coeffList VA)_chosen);
        strataIdeals#name = J;
        lcasEmit("stratum_" | name | "_dim", dim J);
        lcasEmit("stratum_" | name | "_degree", degree J);
        lcasEmit("stratum_" | name | "_gens", demark(" ; ", apply(flatten entries gens J, toString)));
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
if wantOrbits == 1 or wantCritical == 1 then (
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
    orbitFound = {}; orbitUnresolved = {}; critFound = {}; critUnresolved = {};
    tooMany = (M, k) -> binomial(numrows M, k) * binomial(numcols M, k) > minorBudget;
    -- rank of the differential of (g, slice point) -> g.phi on the piece P: the dimension of the closure
    -- of G.phi(P) in the model's coordinates (the factor Y on the d' = a = 1 route: add d - 1 for X)
    sliceImageRank = (Rs, P, Act, Dphi) -> (
        RP := Rs / P;
        T := if P == 0 then id_(Rs^(numgens Rs)) else gens ker sub(transpose jacobian gens P, RP);
        rank (sub(Act, RP) | sub(Dphi, RP) * sub(T, RP)));
    toX = dY -> if factorRoute then dY + nD - 1 else dY;
    -- the piece in the weights: generic rank of A, and whether colspace A lies in rowspace V = span(e_1..e_r)
    weightDescription = (Rs, r, P, As) -> (
        RP := Rs / P;
        (rank sub(As, RP), if r == nD then 1 else if isSubset(ideal flatten entries As^(toList(r .. nD - 1)), P) then 1 else 0));
    matchName = f -> (
        (r, P, jr, cc, dimY, rankA, colIn) := toSequence take(toList f, 7);
        have := n -> strataIdeals#?n and dim strataIdeals#n == dimY;
        if r == 1 and rankA == 1 and colIn == 1 and have "parallel" then "parallel"
        else if r == 1 and rankA == 1 and have "rank11" then "rank11"
        else if rankA < nAtt and have "rankA" then "rankA" else "none");
    -- a random rational point of a linear piece, moved by a random element of G (so it is no longer
    -- in normal form), as weights (Q, K, V); A = K^T Q with K = [I; 0], Q = [A; 0] when a >= d
    piecePoints = (Rs, Vs, As, P) -> (
        if not all(flatten entries gens P, f -> f == 0 or first degree f == 1) then return {};
        apply(samplesPerPiece, i -> piecePoint(Rs, Vs, As, P)));
    piecePoint = (Rs, Vs, As, P) -> (
        Kp := if P == 0 then id_(kk^(numgens Rs)) else gens ker lift(transpose jacobian gens P, kk);
        pt := flatten entries (Kp * random(kk^(numcols Kp), kk^1, Height => 9));
        ev := M -> lift(sub(M, apply(numgens Rs, i -> Rs_i => pt#i)), kk);
        h := random(kk^nOut, kk^nOut, Height => 5); while det h == 0 do h = random(kk^nOut, kk^nOut, Height => 5);
        g := random(kk^nD, kk^nD, Height => 5); while det g == 0 do g = random(kk^nD, kk^nD, Height => 5);
        Vp := h * ev(Vs) * g;
        (Qp, Kp2) := if nAtt >= nD then ((transpose g) * ev(As) * g || map(kk^(nAtt - nD), kk^nD, 0), id_(kk^nD) || map(kk^(nAtt - nD), kk^nD, 0))
            else (ev(matrix table(nAtt, nD, (i, j) -> Rs_(i*nD + j))) * g, ev(matrix table(nAtt, nD, (i, j) -> Rs_(nAtt*nD + i*nD + j))) * g);
        {entries Qp, entries Kp2, entries Vp});
    if wantOrbits == 1 then scan(toList(1 .. min(nOut, nD)), r -> (
        (Rs, Vs, As) := orbitSlice r;
        (coords, JS, cc, Act, Iused) := orbitModel(Rs, Vs, As);
        Dphi := transpose jacobian matrix {coords};
        gdegs := apply(flatten entries gens Iused, g -> first degree g);
        process := P -> (
            RP := Rs / P;
            if isSubset(ideal flatten entries As, P) then return;   -- A = 0: phi = 0, the vertex
            jr := rank sub(JS, RP);
            ta := rank sub(Act, RP);
            dimY := sliceImageRank(Rs, P, Act, Dphi);
            if jr < cc then (
                (rankA, colIn) := weightDescription(Rs, r, P, As);
                orbitFound = append(orbitFound, (r, P, jr, cc, toX dimY, rankA, colIn, piecePoints(Rs, Vs, As, P)));
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
    if wantOrbits == 1 then (
    lcasEmit("orbit_components_count", #orbitFound);
    matched = apply(orbitFound, matchName);
    scan(#orbitFound, i -> (
        (r, P, jr, cc, dimY, rankA, colIn, pts) := orbitFound#i;
        key := "orbit_component_" | toString(i + 1);
        lcasEmit(key, {r, jr, cc, dimY, rankA, colIn});
        scan(#pts, j -> lcasEmit(key | "_point_" | toString(j + 1), pts#j));
        lcasEmit(key | "_matches", matched#i);
        lcasEmit(key | "_gens", demark(" ; ", apply(flatten entries mingens P, toString)))));
    lcasEmit("orbit_unresolved_count", #orbitUnresolved);
    scan(#orbitUnresolved, i -> (
        key := "orbit_unresolved_" | toString(i + 1);
        lcasEmit(key, {orbitUnresolved#i#0});
        lcasEmit(key | "_reason", orbitUnresolved#i#2);
        lcasEmit(key | "_gens", demark(" ; ", apply(flatten entries mingens orbitUnresolved#i#1, toString)))));
    -- the singular locus as an ideal: the strata closures it matched (each irreducible, of the same
    -- dimension and containing the piece, hence equal to its closure), or the vertex alone; nothing
    -- when X is the whole coordinate space (codim 0: a linear space, smooth at 0 too)
    if #orbitUnresolved == 0 and all(matched, m -> m != "none") then (
        singIdeal := if #matched == 0 and cI == 0 then ideal 1_S1 else if #matched == 0 then ideal vars S1 else intersect apply(unique matched, m -> strataIdeals#m);
        emitIdeal("orbit_singular", singIdeal)));
    -- Critical points of the parametrization, by the same slices: the rank of the differential is
    -- G-invariant, so the critical locus is G-stable and meets every orbit in a slice point (V_r, A).
    -- The parametrization is (V, A) when a >= d (every real A is K^T Q, so it has the same real image as
    -- (Q, K, V) and fewer critical points), else (Q, K, V); on the d' = a = 1 route it is (v, k) -> S,
    -- whose critical points are those of phi = S (x) q off the vertex (rank d phi = rank dS + d - 1).
    if wantCritical == 1 then (
        -- phi vanishes only where V = 0 or A = 0 (B has no other zeros, even complex ones): then M is
        -- closed and the boundary lies in M (balanced weights stay bounded over bounded images)
        lcasEmit("base_locus_V_or_A", if isSubset(ideal(flatten entries Vweights) * ideal(flatten entries Aweights), radical ideal Bweights)
            then 1 else 0);
        (Rw, wSubst, needRank) := if factorRoute then (
                Pf := kk[(getSymbol "v")_1 .. (getSymbol "v")_nD, (getSymbol "w")_1 .. (getSymbol "w")_nD];
                symF := flatten apply(nD, i -> apply(toList(i .. nD - 1), j -> Pf_i * Pf_(nD + j) + Pf_j * Pf_(nD + i)));
                (Pf, jacobian matrix {symF}, 2 * nD - 1))
            else if nAtt >= nD then (
                Pw := kk[vaSymbols()];
                (Pw, jacobian matrix {(coeffList vaMatrices gens Pw)_chosen}, dim I1))
            else (Pw = kk[lcasWeightSymbols()];
                (Qw, Kw, Vw2) := first lcasLayers(gens Pw);
                (Pw, jacobian matrix {(coeffList(Vw2, (transpose Kw) * Qw))_chosen}, dim I1));
        scan(toList(1 .. min(nOut, nD)), r -> (
            (Rs, Vs, As) := orbitSlice r;
            (coords, JS, cc, Act, Iused) := orbitModel(Rs, Vs, As);
            Dphi := transpose jacobian matrix {coords};
            -- the weights of the slice point, in the order of Rw's variables
            vals := if factorRoute then flatten entries Vs | take(gens Rs, {nD, 2*nD - 1})
                else if nAtt >= nD then flatten entries Vs | flatten entries As
                else take(gens Rs, 2*nAtt*nD) | flatten entries Vs;
            Dfull := (map(Rs, Rw, vals)) wSubst;
            if tooMany(Dfull, needRank) then (critUnresolved = append(critUnresolved, (r, ideal 0_Rs, "differential minors")); return);
            Cr := minors(needRank, Dfull);
            if Cr == 1 then return;
            scan(minimalPrimes Cr, P -> (
                if isSubset(ideal flatten entries As, P) then return;   -- the vertex
                (rankA, colIn) := weightDescription(Rs, r, P, As);
                critFound = append(critFound, (r, P, 0, 0, toX sliceImageRank(Rs, P, Act, Dphi), rankA, colIn,
                        piecePoints(Rs, Vs, As, P)))))));
        critMatched = apply(critFound, matchName);
        lcasEmit("orbit_critical_count", #critFound);
        scan(#critFound, i -> (
            (r, P, jr, cc, dimY, rankA, colIn, pts) := critFound#i;
            key := "orbit_critical_" | toString(i + 1);
            lcasEmit(key, {r, dimY, rankA, colIn});
            lcasEmit(key | "_matches", critMatched#i);
            scan(#pts, j -> lcasEmit(key | "_point_" | toString(j + 1), pts#j));
            lcasEmit(key | "_gens", demark(" ; ", apply(flatten entries mingens P, toString)))));
        lcasEmit("orbit_critical_unresolved_count", #critUnresolved);
        if #critUnresolved == 0 and all(critMatched, m -> m != "none") then (
            critIdeal := if #critMatched == 0 then ideal vars S1 else intersect apply(unique critMatched, m -> strataIdeals#m);
            emitIdeal("orbit_critical_image", critIdeal))));
if wantVerdict == 1 then (
    -- Real verdict at one rational weight point W = (pointQ, pointK, pointV), p = phi(W); the
    -- arguments are in the docstring of lightning_cas/geometry/boundary.py. Emitted here:
    --  * the tangent rank of I at p (p smooth or not) and, for every rational preimage orbit (fiber of p
    --    in (V, A), rank A <= a, normalized by ell(V) = 1), whether it is a regular point;
    --  * whether the fiber is finite, all of it rational (its degree = number of rational points) and
    --    without orbits on ell(V) = 0: then every analytic branch of X at p is the image of a germ at a
    --    listed preimage (phi is proper on balanced weights, |phi(V, A)| >= c |V| |A|);
    --  * witness curves from the critical rational preimages, as eliminants f(s, t) (or in u = t^2).
    V0 = matrix(kk, pointV); Q0 = matrix(kk, pointQ); K0 = matrix(kk, pointK); A0 = (transpose K0) * Q0;
    p0 = (coeffList(V0, A0))_chosen;
    lcasEmit("verdict_vertex", if all(p0, x -> x == 0) then 1 else 0);
    if any(p0, x -> x != 0) then (
        sSym = getSymbol "s"; tSym = getSymbol "t";
        Rf = kk[vaSymbols() | {sSym, tSym}];
        nVA = nOut*nD + nD*nD;
        (Vf, Af) = vaMatrices gens Rf;
        Ff = (coeffList(Vf, Af))_chosen;
        rankCond = if nAtt < nD then minors(nAtt + 1, Af) else ideal 0_Rf;
        fiberOf = q -> ideal apply(Ff, q, (f, c) -> f - c) + rankCond;
        -- rational preimages of p (one per scaling orbit with ell(V) != 0)
        ell = sum(nOut*nD, i -> random(1, 9) * Rf_i);
        Jfib = fiberOf p0 + ideal(ell - 1, Rf_nVA, Rf_(nVA + 1));
        Pre = select(minimalPrimes Jfib, P -> dim P == 0 and degree P == 1);
        lcasEmit("verdict_rational_preimages", #Pre);
        lcasEmit("verdict_fiber_degree", if dim Jfib == 0 then degree Jfib else -1);
        lcasEmit("verdict_fiber_off_chart", if fiberOf p0 + ideal(ell, Rf_nVA, Rf_(nVA + 1)) == 1 then 0 else 1);
        -- the differential of the parametrization Rweights -> coordinates (rows: the weights of Rweights)
        JR = jacobian matrix {Bweights};
        DR = D -> lift(sub(JR, apply(gens Rweights, D, (x, c) -> x => c)), kk);
        weightsOf = (Vv, Av) -> if useVA then flatten entries Vv | flatten entries Av else (
            -- a rank factorization over QQ, padded: A = K^T Q with K^T = [C 0], Q = [Rw; 0]
            cols := if Av == 0 then {} else (
                piv := {}; scan(nD, j -> if rank Av_(append(piv, j)) > #piv then piv = append(piv, j)); piv);
            Cm := if #cols == 0 then map(kk^nD, kk^0, 0) else Av_cols;
            Rm := if #cols == 0 then map(kk^0, kk^nD, 0) else solve(Cm, Av);
            Qv := Rm || map(kk^(nAtt - #cols), kk^nD, 0);
            Kv := transpose(Cm | map(kk^nD, kk^(nAtt - #cols), 0));
            flatten entries Qv | flatten entries Kv | flatten entries Vv);
        DX = dim I1;
        -- regular: rank dim X, and (a < d) rank A = a, where (Q, K) -> K^T Q is a submersion onto rank <= a
        regularPre = 0; criticalPre = {};
        scan(Pre, P -> (
            (Vv, Av) := vaMatrices apply(nVA, i -> lift(Rf_i % P, kk));
            if rank DR weightsOf(Vv, Av) == DX and (useVA or rank Av == nAtt) then regularPre = regularPre + 1
            else criticalPre = append(criticalPre, (Vv, Av))));
        lcasEmit("verdict_regular_preimages", regularPre);
        lcasEmit("verdict_critical_preimages", #criticalPre);
        JI1 = lift(sub(jacobian I1, apply(gens S1, p0, (y, c) -> y => c)), kk);
        lcasEmit("verdict_tangent_rank", rank JI1);
        lcasEmit("verdict_codimension", cI);
        -- witness curves from the critical rational preimages (W itself is one of them, up to scaling)
        wCount = 0;
        scan(criticalPre, VA -> (
            (Vv, Av) := VA;
            -- block pairs of a bilinear sub-parametrization: (V, A), or (V, K), (V, Q), (Q, K) around (Q, K) of A
            wv := weightsOf(Vv, Av);
            blocks := if useVA then {{"V,A", toList(0 .. nVA - 1)}} else (
                nq := nAtt*nD; {{"V,K", toList(nq .. 2*nq - 1) | toList(2*nq .. 2*nq + nOut*nD - 1)},
                                {"V,Q", toList(0 .. nq - 1) | toList(2*nq .. 2*nq + nOut*nD - 1)},
                                {"Q,K", toList(0 .. 2*nq - 1)}});
            Dm := DR wv;
            scan(blocks, bl -> (
                Kb := gens ker transpose Dm^(bl#1);
                if numcols Kb == 0 then return;
                scan(numDirections, j -> (
                    dl := flatten entries (Kb * random(kk^(numcols Kb), kk^1, Height => 9));
                    full := new MutableList from toList(#wv : 0_kk);
                    scan(#(bl#1), i -> full#((bl#1)#i) = dl#i);
                    -- the quadratic part phi_2(delta): phi with the two blocks replaced by delta, the third kept
                    w := if useVA then (coeffList vaMatrices toList full)_chosen
                         else (
                            (Qd, Kd, Vd) := first lcasLayers toList full;
                            (Qw0, Kw0, Vw0) := first lcasLayers wv;
                            (Qx, Kx, Vx) := if bl#0 == "V,K" then (Qw0, Kd, Vd) else if bl#0 == "V,Q" then (Qd, Kw0, Vd) else (Qd, Kd, Vw0);
                            (coeffList(Vx, (transpose Kx) * Qx))_chosen);
                    if rank matrix {p0, w} < 2 then return;
                    tl := sum(nVA, i -> random(-9, 9) * Rf_i);
                    J := fiberOf(apply(p0, w, (c, x) -> c - Rf_nVA * x)) + ideal(sum(nOut*nD, i -> Rf_i^2) - 1, Rf_(nVA + 1) - tl);
                    E := eliminate(take(gens Rf, nVA), J);
                    wCount = wCount + 1;
                    key := "verdict_witness_" | toString wCount;
                    lcasEmit(key | "_blocks", bl#0);
                    lcasEmit(key | "_direction", toList full);
                    lcasEmit(key | "_base", {entries Vv, entries Av});
                    f := if numgens E == 1 then E_0 else 0_Rf;
                    T := Rf_(nVA + 1);
                    if f == 0 or degree(T, f) < 1 then (lcasEmit(key | "_eliminant", "none"); return);
                    -- (V, A) -> (-V, -A) keeps the fiber, so f is usually even in t: then pass to u = t^2
                    -- (written in the variable t), whose discriminant is far cheaper (Python takes it)
                    (mons, cfs) := coefficients(f, Variables => {T});
                    evenT := all(numcols mons, i -> even degree(T, mons_(0, i)));
                    if evenT then f = sum(numcols mons, i -> cfs_(i, 0) * T^(degree(T, mons_(0, i)) // 2));
                    lcasEmit(key | "_variable", if evenT then "t^2" else "t");
                    lcasEmit(key | "_eliminant", toString f)))))));
        lcasEmit("verdict_witness_count", wCount)));
lcasEmit("total_cpu_s", floor(1000 * cpuTime()));
