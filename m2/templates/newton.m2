-- The Newton polyhedron of the fiber ideal at W = weightPoint, W moved to the origin: the distance tau of the
-- diagonal, the codimension of the face it meets, and for every compact face whether its face system has no zero
-- on the real torus (a face part that is a sum of even monomials of one sign, or a saturation by the product of
-- the variables that gives the unit ideal, which excludes complex torus zeros too). The first face that neither
-- test clears is reported, and the Newton route is then silent (degenerate in these coordinates, or undecided).
needsPackage "Polyhedra"
N = neuralNetwork(inputWidth, tokens, blocks)
I = fiberIdeal(N, weightPoint, Columns => columns)
R = ring I
n = numgens R
toOrigin = map(R, R, apply(n, k -> R_k + (weightPoint#k) * 1_R))
G = select(flatten entries gens toOrigin I, g -> g != 0)
signedEven = p -> (
    lf := listForm p;
    all(lf, t -> all(t#0, even)) and (all(lf, t -> t#1 > 0) or all(lf, t -> t#1 < 0)))
newtonRecord = () -> (
    E := unique flatten apply(G, exponents);
    P := convexHull(transpose matrix E, id_(ZZ^n));
    (M, v) := facets P;
    rows := apply(numRows M, i -> (apply(flatten entries M^{i}, a -> -a), -(v_(i, 0))));
    ratio := r -> (r#1) / (sum r#0);
    tau := max apply(rows, ratio);
    tight := select(rows, r -> ratio r == tau);
    V := vertices P;
    compact := flatten apply(toList(1 .. n), k -> select(faces(k, P), f -> #(f#1) == 0));
    (bySign, bySaturation, bad) := (0, 0, null);
    torus := product gens R;
    for f in compact do (
        F := convexHull V_(f#0);
        parts := select(apply(G, g -> sum(select(terms g, t -> contains(F, transpose matrix exponents t)))), p -> p != 0);
        if any(parts, signedEven) then bySign = bySign + 1
        else if saturate(ideal parts, torus) == ideal 1_R then bySaturation = bySaturation + 1
        else (bad = apply(f#0, j -> apply(flatten entries V_{j}, x -> lift(x, ZZ))); break));
    new HashTable from {
        "parameters" => n, "generators" => #G, "exponents" => #E,
        "distance" => toString tau, "codimension" => rank matrix apply(tight, r -> r#0),
        "facets" => apply(rows, r -> append(r#0, r#1)), "tight" => apply(tight, r -> append(r#0, r#1)),
        "compact_faces" => #compact, "by_sign" => bySign, "by_saturation" => bySaturation,
        "nondegenerate" => bad === null, "degenerate_face" => bad})
printRecord (if #G == 0 then new HashTable from {"parameters" => n, "generators" => 0} else newtonRecord())
