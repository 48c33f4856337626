-- The Newton polyhedron of the fiber ideal at W = weightPoint, W moved to the origin: the distance tau of the
-- diagonal, the codimension of the face it meets, and for every compact face whether its face system has no zero
-- on the real torus (a face part that is a sum of even monomials of one sign, or a saturation by the product of
-- the variables that gives the unit ideal, which excludes complex torus zeros too). The first face that neither
-- test clears is reported, and the Newton route is then silent (degenerate in these coordinates, or undecided).
-- The coordinates listed in `fixed` are held at W's values: a linear slice transversal to the symmetry group's
-- orbit, on which K has the same threshold and order (K is constant along the orbit).
needsPackage "Polyhedra"
N = neuralNetwork(inputWidth, tokens, blocks)
I = fiberIdeal(N, weightPoint, Columns => columns)
R = ring I
n = numgens R
free = select(toList(0 .. n - 1), k -> not member(k, fixed))
S = QQ[apply(free, k -> (getSymbol "s")_k)]
toSlice = map(S, R, apply(n, k -> if member(k, fixed) then (weightPoint#k) * 1_S else S_(position(free, j -> j == k)) + (weightPoint#k) * 1_S))
G = select(flatten entries gens toSlice I, g -> g != 0)
R = S
n = numgens S
signedEven = p -> (
    lf := listForm p;
    all(lf, t -> all(t#0, even)) and (all(lf, t -> t#1 > 0) or all(lf, t -> t#1 < 0)))
newtonRecord = G -> (
    E := unique flatten apply(G, exponents);
    P := convexHull(transpose matrix E, id_(ZZ^n));
    (M, v) := facets P;
    rows := apply(numRows M, i -> (apply(flatten entries M^{i}, a -> -a), -(v_(i, 0))));
    ratio := r -> (r#1) / (sum r#0);
    tau := max apply(rows, ratio);
    tight := select(rows, r -> ratio r == tau);
    -- a compact face is the intersection of the facets through its vertices: its exponents are those on all of them
    onFacet := apply(rows, r -> set select(#E, j -> sum(r#0, E#j, times) == r#1));
    V := vertices P;
    vertexAt := apply(numColumns V, j -> position(E, e -> e == apply(flatten entries V_{j}, x -> lift(x, ZZ))));
    compact := flatten apply(toList(1 .. n), k -> select(faces(k, P), f -> #(f#1) == 0));
    (bySign, bySaturation, bad) := (0, 0, null);
    torus := product gens R;
    for f in compact do (
        vs := set apply(f#0, j -> vertexAt#j);
        onFace := fold((a, b) -> a * b, select(onFacet, F -> isSubset(vs, F)));
        exps := set apply(toList onFace, j -> E#j);
        parts := select(apply(G, g -> sum(select(terms g, t -> exps#?(first exponents t)))), p -> p != 0);
        if any(parts, signedEven) then bySign = bySign + 1
        else if saturate(ideal parts, torus) == ideal 1_R then bySaturation = bySaturation + 1
        else (bad = apply(toList vs, j -> E#j); break));
    new HashTable from {
        "generators" => #G, "exponents" => #E, "exponent_list" => E,
        "distance" => toString tau, "codimension" => rank matrix apply(tight, r -> r#0),
        "facets" => apply(rows, r -> append(r#0, r#1)), "tight" => apply(tight, r -> append(r#0, r#1)),
        "compact_faces" => #compact, "by_sign" => bySign, "by_saturation" => bySaturation,
        "nondegenerate" => bad === null, "degenerate_face" => bad})
-- Where the slice is degenerate, a second chart: the independent linear parts of the generators become
-- coordinates (the rows of their echelon form replace the identity at the pivots), the kernel of J(W) the rest.
adapted = G -> (
    L := matrix apply(G, g -> apply(gens R, x -> coefficient(x, g)));
    E := reducedRowEchelonForm L;
    rows := select(entries E, row -> any(row, c -> c != 0));
    if #rows == 0 then return null;
    T := mutableMatrix id_(QQ^n);
    scan(rows, row -> (p := position(row, c -> c != 0); scan(n, j -> T_(p, j) = row#j)));
    T = matrix T;
    back := map(R, R, flatten entries (inverse T * transpose vars R));
    (T, select(apply(G, g -> back g), g -> g != 0)))
choose = G -> (
    one := newtonRecord G;
    if one#"nondegenerate" then return merge(one, new HashTable from {"coordinates" => "slice"}, (a, b) -> b);
    TG := adapted G;
    if TG === null then return merge(one, new HashTable from {"coordinates" => "slice"}, (a, b) -> b);
    second := merge(newtonRecord TG#1, new HashTable from {"change" => apply(entries TG#0, r -> apply(r, toString))},
        (a, b) -> b);
    better := if second#"nondegenerate" or value second#"distance" > value one#"distance" then second else one;
    merge(better, new HashTable from {"coordinates" => (if better === second then "adapted" else "slice")}, (a, b) -> b))
printRecord merge(if #G == 0 then new HashTable from {"generators" => 0} else choose G,
    new HashTable from {"parameters" => N#"parameters", "slice" => n}, (a, b) -> b)
