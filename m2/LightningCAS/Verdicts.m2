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
    phi := (V0, A0) -> implicitCoordinates(M, V0, A0);
    useVA := M#"parametrization" == 1;
    (Rweights, Bweights) := (M#"weight ring", M#"weight coordinates");
    V0 := matrix(kk, pointV); Q0 := matrix(kk, pointQ); K0 := matrix(kk, pointK); A0 := (transpose K0) * Q0;
    p0 := phi(V0, A0);
    base := lcasRecordBase() | {"vertex" => all(p0, x -> x == 0)};
    if all(p0, x -> x == 0) then return new HashTable from base;
    I1 := implicitIdeal M;
    S1 := M#"ring";
    sSym := getSymbol "s"; tSym := getSymbol "t";
    Rf := kk[lcasVASymbols M | {sSym, tSym}];
    nVA := nOut*nD + nD*nD;
    (Vf, Af) := lcasVAMatrices(M, gens Rf);
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
        (Vv, Av) := lcasVAMatrices(M, apply(nVA, i -> lift(Rf_i % P, kk)));
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
                w := if useVA then phi lcasVAMatrices(M, toList full)
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
