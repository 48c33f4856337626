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
