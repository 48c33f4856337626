-- lightning_cas: the fiber {W' : phi_W' = phi_W} of the parametrization at a given point W.
-- Inputs (rendered header): widths, attention, tokens, charP, seed, columns, point (the entries
-- of W in lcasWeightSymbols order: rationals over QQ, integers already reduced when charP > 0),
-- emitGenerators (1/0), witnessTries (attempts to find a rational point on a component that
-- does not contain W).
-- Only the first `columns` output tokens are compared: by permutation equivariance column j of
-- phi(X) is column 1 of phi(X pi) for a transposition pi, so equal first columns for every X
-- already mean equal functions.
setRandomSeed seed;
kk = if charP == 0 then QQ else ZZ/charP;
ws = lcasWeightSymbols();
R = kk[ws];
T = R[lcasTokenSymbols()];
X = matrix table(widths#0, tokens, (r, j) -> T_(r*tokens + j));
cols = toList(0 .. columns - 1);
PhiVar = (lcasNetwork(lcasLayers(apply(#ws, k -> R_k * 1_T)), X))_cols;
PhiPt = (lcasNetwork(lcasLayers(apply(point, c -> promote(c, kk) * 1_T)), X))_cols;
-- the fiber ideal: every coefficient (in the tokens) of phi_W' - phi_W
diffs = flatten entries (PhiVar - PhiPt);
I = trim ideal select(flatten apply(diffs, f -> apply(flatten entries last coefficients f, c -> lift(c, R))),
    g -> g != 0);
atPoint = map(kk, R, apply(point, c -> promote(c, kk)));
if any(flatten entries gens I, g -> atPoint g != 0) then error "lightning_cas: W is not in its own fiber";
lcasEmit("m2_version", version#"VERSION");
lcasEmit("parameters", #ws);
lcasEmit("fiber_generators", numgens I);
lcasEmit("fiber_dimension", dim I);
comps = minimalPrimes I;
lcasEmit("components", #comps);
-- A rational point on a component: fix a maximal independent set of variables at random
-- integers; the remaining zero-dimensional ideal often has a rational (degree-one) prime.
lcasRationalPoint = Pr -> (
    found := null;
    d := dim Pr;
    for attempt from 1 to witnessTries do (
        indep := if d > 0 then support first independentSets(Pr, Limit => 1) else {};
        J := Pr + ideal apply(indep, v -> v - ((random 19) - 9));
        if dim J != 0 then continue;
        lin := select(minimalPrimes J, Q -> degree Q == 1);
        if #lin > 0 then (
            Q := first lin;
            found = apply(gens R, v -> lift(v % Q, kk));
            break));
    found);
scan(#comps, n -> (
    Pr := comps#n;
    key := "component_" | toString(n + 1) | "_";
    lcasEmit(key | "dimension", dim Pr);
    lcasEmit(key | "degree", degree Pr);
    lcasEmit(key | "contains_point", if all(flatten entries gens Pr, g -> atPoint g == 0) then 1 else 0);
    if emitGenerators == 1 then lcasEmit(key | "generators", demark(" ; ", apply(flatten entries mingens Pr, toString)));
    if all(flatten entries gens Pr, g -> atPoint g == 0) then lcasEmit(key | "witness", "none")
    else (w := lcasRationalPoint Pr; lcasEmit(key | "witness", if w === null then "none" else toString w))));
