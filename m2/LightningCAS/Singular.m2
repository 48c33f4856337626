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
        phi := (V0, A0) -> implicitCoordinates(M, V0, A0);
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
    (Rw, Bw) := (M#"weight ring", M#"weight coordinates");
    S1 := M#"ring";
    crit := minors(dim implicitIdeal M, jacobian matrix {Bw});
    (map(S1, S1, vars S1)) ker map(Rw / crit, S1, apply(Bw, f -> sub(f, Rw / crit))))
