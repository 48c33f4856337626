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
-- The slices of one model, with what the slice functions share: the model, the minor budget, the
-- sample points per piece, the strata closures and whether the d' = a = 1 factor route applies.
OrbitSlices = new Type of HashTable
OrbitSlices.synonym = "family of orbit slices"
toString OrbitSlices := S -> ("the orbit slices of " | toString S#"model"#"widths" | ", attention "
    | toString S#"model"#"attention" | (if S#"factor route" then ", on the factor route" else ""))
net OrbitSlices := S -> net toString S
isWellDefined OrbitSlices := S -> (
    instance(S#"model", ImplicitModel) and instance(S#"budget", ZZ) and S#"budget" >= 1
    and instance(S#"samples", ZZ) and S#"samples" >= 0 and instance(S#"factor route", Boolean)
    and instance(S#"strata", HashTable))

-- One slice r of a model: the slice ring and its V = [I_r 0; 0 0], A; the coordinates the test runs
-- on (polynomials in the slice ring), the Jacobian of the ideal composed with them, its codimension,
-- the infinitesimal G-action on the coordinates, the ideal used and the differential of phi there.
OrbitSlice = new Type of HashTable
OrbitSlice.synonym = "orbit slice"
toString OrbitSlice := s -> ("the orbit slice rank V = " | toString s#"rank V" | " in "
    | toString numgens s#"ring" | " variables, codimension " | toString s#"codimension")
net OrbitSlice := s -> net toString s
isWellDefined OrbitSlice := s -> (
    Rs := s#"ring";
    instance(Rs, PolynomialRing) and all({"V", "A", "jacobian", "action", "differential"},
        k -> instance(s#k, Matrix) and ring s#k === Rs)
    and instance(s#"codimension", ZZ) and instance(s#"ideal", Ideal) and instance(s#"coordinates", List))

lcasOrbitSlices = (M, budget, samples) -> (
    (nD, nOut, nAtt) := (M#"widths"#0, M#"widths"#1, M#"attention"#0);
    new OrbitSlices from {"model" => M, "budget" => budget, "samples" => samples,
        "factor route" => nOut == 1 and nAtt == 1 and nD > 1, "strata" => weightStrata M})

lcasSliceShape = S -> (S#"model"#"widths"#0, S#"model"#"widths"#1, S#"model"#"attention"#0)

lcasUnitMatrix = (m, n, i, j, Rs) -> map(Rs^m, Rs^n, {(i, j) => 1_Rs})
lcasColumn = L -> transpose matrix {L}

-- the slice ring with V_r and A (A generic when a >= d, else A = K^T Q)
lcasSliceWeights = (S, r) -> (
    kk := QQ;
    (nD, nOut, nAtt) := lcasSliceShape S;
    Rs := if nAtt >= nD then kk[flatten table(nD, nD, (i, j) -> (getSymbol "b")_(i+1, j+1))]
        else kk[flatten table(nAtt, nD, (i, j) -> (getSymbol "q")_(i+1, j+1))
                | flatten table(nAtt, nD, (i, j) -> (getSymbol "k")_(i+1, j+1))];
    As := if nAtt >= nD then matrix table(nD, nD, (i, j) -> Rs_(i*nD + j))
        else transpose matrix table(nAtt, nD, (i, j) -> Rs_(nAtt*nD + i*nD + j))
            * matrix table(nAtt, nD, (i, j) -> Rs_(i*nD + j));
    Vs := matrix table(nOut, nD, (i, j) -> if i == j and i < r then 1_Rs else 0_Rs);
    (Rs, Vs, As))

-- S = sym(v (x) k) as the list of its upper entries (the d' = a = 1 factor)
lcasSymmetricFactor = (v, k, nD) ->
    flatten apply(nD, i -> apply(toList(i .. nD - 1), j -> v_(0, i) * k_(j, 0) + v_(0, j) * k_(i, 0)))

-- the model a slice test runs on: (coordinates, Jacobian of the ideal at them, codimension, action, ideal)
lcasSliceModel = (S, Rs, Vs, As) -> (
    kk := QQ;
    M := S#"model";
    (nD, nOut, nAtt) := lcasSliceShape S;
    if S#"factor route" then (
        -- S = sym(e1 (x) k) with k the column of A (A = k^T q): gamma = q is a free factor
        kcol := transpose matrix {toList(Rs_(nD) .. Rs_(2*nD - 1))};
        coords := lcasSymmetricFactor(Vs, kcol, nD);
        nY := #coords;
        PY := kk[(getSymbol "v")_1 .. (getSymbol "v")_nD, (getSymbol "w")_1 .. (getSymbol "w")_nD];
        SY := kk[(getSymbol "s")_1 .. (getSymbol "s")_nY];
        IY := lcasImage(lcasSymmetricFactor(matrix {toList(PY_0 .. PY_(nD-1))},
                transpose matrix {toList(PY_nD .. PY_(2*nD-1))}, nD), ideal 0_PY, SY);
        JY := (map(Rs, SY, coords)) jacobian IY;
        actF := apply(flatten table(nD, nD, (p, q) -> (p, q)), pq -> (E := lcasUnitMatrix(nD, nD, pq#0, pq#1, Rs);
            lcasColumn(lcasSymmetricFactor(Vs * E, kcol, nD) + lcasSymmetricFactor(Vs, transpose(E) * kcol, nD))));
        (coords, JY, codim IY, fold((a, b) -> a | b, actF), IY))
    else (
        I1 := implicitIdeal M;
        phis := implicitCoordinates(M, Vs, As);
        actX := apply(flatten table(nOut, nOut, (p, q) -> (p, q)), pq ->
                lcasColumn implicitCoordinates(M, lcasUnitMatrix(nOut, nOut, pq#0, pq#1, Rs) * Vs, As))
            | apply(flatten table(nD, nD, (p, q) -> (p, q)), pq -> (E := lcasUnitMatrix(nD, nD, pq#0, pq#1, Rs);
                lcasColumn(implicitCoordinates(M, Vs * E, As) + implicitCoordinates(M, Vs, transpose(E) * As + As * E))));
        (phis, (map(Rs, M#"ring", phis)) jacobian I1, codim I1, fold((a, b) -> a | b, actX), I1)))

-- slice r with its model and the differential of phi there, built once per model (singularStrata and
-- criticalLocus both walk the same slices)
lcasSlice = (S, r) -> lcasCached(S#"model", "slice " | toString r, () -> (
        (Rs, Vs, As) := lcasSliceWeights(S, r);
        (coords, JS, cc, Act, Iused) := lcasSliceModel(S, Rs, Vs, As);
        new OrbitSlice from {"rank V" => r, "ring" => Rs, "V" => Vs, "A" => As, "coordinates" => coords,
            "jacobian" => JS, "codimension" => cc, "action" => Act, "ideal" => Iused,
            "differential" => transpose jacobian matrix {coords}}))

-- N over RP (the slice ring modulo a piece, or the slice ring itself) without its zero rows and columns:
-- the same k-minors, formed on far smaller matrices (the slice Jacobians are mostly zero: 12 x 15 with
-- 8 x 6 nonzero for widths {2,2}, attention {2})
lcasNonzeroPart = (N, RP) -> (
    Nb := sub(N, RP);
    Nb^(select(numrows Nb, i -> Nb^{i} != 0))_(select(numcols Nb, j -> Nb_{j} != 0)))

lcasTooMany = (S, N, k) -> binomial(numrows N, k) * binomial(numcols N, k) > S#"budget"

-- P + the k-minors of N, N from lcasNonzeroPart(-, ring of P / P): the minors are formed modulo P and lifted back
-- (by cofactors: twice as fast as Bareiss on these matrices of linear and quadratic forms)
lcasMinorsOn = (N, k, P) -> P + ideal lift(gens minors(k, N, Strategy => Cofactor), ring P)

-- rank of the differential of (g, slice point) -> g.phi on the piece P: the dimension of the closure
-- of G.phi(P) in the model's coordinates (the factor Y on the d' = a = 1 route: add d - 1 for X)
lcasSliceImageRank = (sl, P) -> (
    Rs := sl#"ring";
    RP := Rs / P;
    T := if P == 0 then id_(Rs^(numgens Rs)) else gens ker sub(transpose jacobian gens P, RP);
    rank (sub(sl#"action", RP) | sub(sl#"differential", RP) * sub(T, RP)))

-- A = 0 on the piece: phi = 0 there, the vertex
lcasIsVertex = (sl, P) -> isSubset(ideal flatten entries sl#"A", P)

-- the piece in the weights: generic rank of A, and whether colspace A lies in rowspace V = span(e_1..e_r)
lcasWeightDescription = (S, sl, P) -> (
    nD := first lcasSliceShape S;
    r := sl#"rank V";
    RP := sl#"ring" / P;
    (rank sub(sl#"A", RP), r == nD or isSubset(ideal flatten entries (sl#"A")^(toList(r .. nD - 1)), P)))

-- the stratum closure a piece is (same dimension and contains it), or "none"
lcasMatchName = (S, r, dimY, rankA, colIn) -> (
    strata := S#"strata";
    nAtt := last lcasSliceShape S;
    have := s -> strata#?s and dim strata#s == dimY;
    if r == 1 and rankA == 1 and colIn and have "parallel" then "parallel"
    else if r == 1 and rankA == 1 and have "rank11" then "rank11"
    else if rankA < nAtt and have "rankA" then "rankA" else "none")

-- a random rational point of a linear piece, moved by a random element of G (so it is no longer
-- in normal form), as weights {Q, K, V}; A = K^T Q with K = [I; 0], Q = [A; 0] when a >= d
lcasPiecePoint = (S, sl, P) -> (
    kk := QQ;
    (nD, nOut, nAtt) := lcasSliceShape S;
    (Rs, Vs, As) := (sl#"ring", sl#"V", sl#"A");
    Kp := if P == 0 then id_(kk^(numgens Rs)) else gens ker lift(transpose jacobian gens P, kk);
    pt := flatten entries (Kp * random(kk^(numcols Kp), kk^1, Height => 9));
    ev := N -> lift(sub(N, apply(numgens Rs, i -> Rs_i => pt#i)), kk);
    h := random(kk^nOut, kk^nOut, Height => 5); while det h == 0 do h = random(kk^nOut, kk^nOut, Height => 5);
    g := random(kk^nD, kk^nD, Height => 5); while det g == 0 do g = random(kk^nD, kk^nD, Height => 5);
    Vp := h * ev(Vs) * g;
    (Qp, Kp2) := if nAtt >= nD then ((transpose g) * ev(As) * g || map(kk^(nAtt - nD), kk^nD, 0), id_(kk^nD) || map(kk^(nAtt - nD), kk^nD, 0))
        else (ev(matrix table(nAtt, nD, (i, j) -> Rs_(i*nD + j))) * g, ev(matrix table(nAtt, nD, (i, j) -> Rs_(nAtt*nD + i*nD + j))) * g);
    {entries Qp, entries Kp2, entries Vp})

lcasPiecePoints = (S, sl, P) -> (
    if not all(flatten entries gens P, f -> f == 0 or first degree f == 1) then return {};
    apply(S#"samples", i -> lcasPiecePoint(S, sl, P)))

-- one found piece as a record
lcasPiece = (S, sl, P, extra) -> (
    r := sl#"rank V";
    (rankA, colIn) := lcasWeightDescription(S, sl, P);
    dimY := lcasSliceImageRank(sl, P);
    if S#"factor route" then dimY = dimY + (first lcasSliceShape S) - 1;
    new HashTable from {"rank_V" => r, "image_dimension" => dimY, "rank_A" => rankA,
        "colspace_A_in_rowspace_V" => colIn, "matches" => lcasMatchName(S, r, dimY, rankA, colIn),
        "generators" => flatten entries mingens P, "points" => lcasPiecePoints(S, sl, P)} | extra)

lcasUnresolved = (r, P, reason) -> new HashTable from {"rank_V" => r, "reason" => reason,
    "generators" => flatten entries mingens P}

-- the ideal of a union of matched strata closures (the vertex alone when nothing matched)
lcasUnion = (S, names, vertex) -> if #names == 0 then vertex else intersect apply(unique names, s -> S#"strata"#s)

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
    S := lcasOrbitSlices(M, o.MinorBudget, o.SamplesPerPiece);
    found := {}; unres := {};
    scan(toList(1 .. min(nOut, nD)), r -> (
        sl := lcasSlice(S, r);
        (Rs, JS, cc, Act) := (sl#"ring", sl#"jacobian", sl#"codimension", sl#"action");
        gdegs := apply(flatten entries gens sl#"ideal", g -> first degree g);
        local process;
        process = P -> (
            RP := Rs / P;
            if lcasIsVertex(sl, P) then return;   -- A = 0: phi = 0, the vertex
            jr := rank sub(JS, RP);
            if jr < cc then (
                found = append(found, lcasPiece(S, sl, P, {"jacobian_rank" => jr, "codimension" => cc}));
                return);
            ta := rank sub(Act, RP);
            if ta == lcasSliceImageRank(sl, P) then (
                ActP := lcasNonzeroPart(Act, RP);
                if lcasTooMany(S, ActP, ta) then (unres = append(unres, lcasUnresolved(r, P, "orbit-dimension minors")); return);
                scan(minimalPrimes lcasMinorsOn(ActP, ta, P), Q -> process Q))
            else (
                e := min gdegs;
                while rank sub(JS_(positions(gdegs, x -> x <= e)), RP) < cc do e = e + 1;
                J1 := lcasNonzeroPart(JS_(positions(gdegs, x -> x <= e)), RP);
                if lcasTooMany(S, J1, cc) then (unres = append(unres, lcasUnresolved(r, P, "Jacobian minors")); return);
                scan(minimalPrimes lcasMinorsOn(J1, cc, P), Q -> if Q != P then process Q)));
        process ideal 0_Rs));
    -- the singular locus as an ideal: the strata closures it matched (each irreducible, of the same
    -- dimension and containing the piece, hence equal to its closure), or the vertex alone; the unit
    -- ideal when X is the whole coordinate space (codim 0: a linear space, smooth at 0 too)
    names := apply(found, p -> p#"matches");
    S1 := M#"ring";
    complete := #unres == 0 and all(names, s -> s != "none");
    new HashTable from lcasRecordBase() | {"factor_route" => S#"factor route", "pieces" => found, "unresolved" => unres,
        "singular" => (if not complete then null
            else idealRecord lcasUnion(S, names, if codim implicitIdeal M == 0 then ideal 1_S1 else ideal vars S1))})

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
    S := lcasOrbitSlices(M, o.MinorBudget, o.SamplesPerPiece);
    dX := dim implicitIdeal M;
    -- phi vanishes only where V = 0 or A = 0 (no other zeros, even complex ones): then the image M is
    -- closed and the boundary lies in it (balanced weights stay bounded over bounded images)
    baseVA := isSubset(ideal(flatten entries M#"weight V") * ideal(flatten entries M#"weight A"),
        radical ideal M#"weight coordinates");
    (Rw, wSubst, needRank) := if S#"factor route" then (
            Pf := kk[(getSymbol "v")_1 .. (getSymbol "v")_nD, (getSymbol "w")_1 .. (getSymbol "w")_nD];
            symF := flatten apply(nD, i -> apply(toList(i .. nD - 1), j -> Pf_i * Pf_(nD + j) + Pf_j * Pf_(nD + i)));
            (Pf, jacobian matrix {symF}, 2 * nD - 1))
        else if nAtt >= nD then (
            Pw := kk[lcasVASymbols M];
            (Pw, jacobian matrix {implicitCoordinates(M, lcasVAMatrices(M, gens Pw))}, dX))
        else (
            (Pq, Vq, Aq) := lcasQKVWeights M;
            (Pq, jacobian matrix {implicitCoordinates(M, Vq, Aq)}, dX));
    found := {}; unres := {};
    scan(toList(1 .. min(nOut, nD)), r -> (
        sl := lcasSlice(S, r);
        (Rs, Vs, As) := (sl#"ring", sl#"V", sl#"A");
        -- the weights of the slice point, in the order of Rw's variables
        vals := if S#"factor route" then flatten entries Vs | take(gens Rs, {nD, 2*nD - 1})
            else if nAtt >= nD then flatten entries Vs | flatten entries As
            else take(gens Rs, 2*nAtt*nD) | flatten entries Vs;
        Dfull := lcasNonzeroPart((map(Rs, Rw, vals)) wSubst, Rs);
        if lcasTooMany(S, Dfull, needRank) then (unres = append(unres, lcasUnresolved(r, ideal 0_Rs, "differential minors")); return);
        Cr := lcasMinorsOn(Dfull, needRank, ideal 0_Rs);
        if Cr == 1 then return;
        scan(minimalPrimes Cr, P -> (
            if lcasIsVertex(sl, P) then return;
            found = append(found, lcasPiece(S, sl, P, {}))))));
    names := apply(found, p -> p#"matches");
    complete := #unres == 0 and all(names, s -> s != "none");
    new HashTable from lcasRecordBase() | {"base_locus_V_or_A" => baseVA, "pieces" => found, "unresolved" => unres,
        "critical_image" => (if complete then idealRecord lcasUnion(S, names, ideal vars M#"ring") else null)})
