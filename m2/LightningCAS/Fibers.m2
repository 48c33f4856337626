---------------------------------------------------------------------------------------------
-- fibers of the parametrization
---------------------------------------------------------------------------------------------

lcasPoint = (point, P, kk) -> (
    if not instance(point, List) or #point != P then
        error("LightningCAS: the point must be a list of " | toString P | " weights");
    apply(point, c -> promote(c, kk)));

fiberIdeal = method(Options => {Heads => null, CoefficientRing => QQ, Columns => 1})
fiberIdeal(NeuralNetwork, List) := o -> (N, point) -> (
    lcasColumnsCheck(o.Columns, N#"tokens");
    kk := o.CoefficientRing;
    pt := lcasPoint(point, N#"parameters", kk);
    (R, T, X) := lcasTower(N, kk);
    cols := lcasOutputColumns(N, o.Columns);
    PhiVar := (lcasForward(N, lcasBlockWeights(N, apply(numgens R, k -> R_k * 1_T)), X))_cols;
    PhiPt := (lcasForward(N, lcasBlockWeights(N, apply(pt, c -> c * 1_T)), X))_cols;
    diffs := lcasCoefficients(PhiVar - PhiPt, R);
    if #diffs == 0 then ideal(0_R) else trim ideal diffs)
fiberIdeal(List, List, ZZ, List) := o -> (widths, attention, tokens, point) ->
    fiberIdeal(neuralNetwork(widths, attention, tokens, o.Heads), point, CoefficientRing => o.CoefficientRing,
        Columns => o.Columns)

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
parametrizationFiber(NeuralNetwork, List) := o -> (N, point) -> (
    I := fiberIdeal(N, point, CoefficientRing => o.CoefficientRing, Columns => o.Columns);
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
parametrizationFiber(List, List, ZZ, List) := o -> (widths, attention, tokens, point) ->
    parametrizationFiber(neuralNetwork(widths, attention, tokens, o.Heads), point,
        CoefficientRing => o.CoefficientRing, Columns => o.Columns, WitnessTries => o.WitnessTries)

-- The dimension of the fiber at the point itself (its local dimension): the dimension of the tangent cone of
-- the fiber ideal at W, W moved to the origin first. It bounds the learning coefficient at W from above
-- ((parameters - this)/2), where the global fiber_dimension (the largest component anywhere) does not.
localFiberDimension = method(Options => {Heads => null, CoefficientRing => QQ, Columns => 1})
localFiberDimension(NeuralNetwork, List) := o -> (N, point) -> (
    I := fiberIdeal(N, point, CoefficientRing => o.CoefficientRing, Columns => o.Columns);
    R := ring I;
    pt := lcasPoint(point, numgens R, coefficientRing R);
    toOrigin := map(R, R, apply(numgens R, k -> R_k + pt#k));
    dim tangentCone toOrigin I)
localFiberDimension(List, List, ZZ, List) := o -> (widths, attention, tokens, point) ->
    localFiberDimension(neuralNetwork(widths, attention, tokens, o.Heads), point,
        CoefficientRing => o.CoefficientRing, Columns => o.Columns)
