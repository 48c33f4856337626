---------------------------------------------------------------------------------------------
-- a user's own polynomial map: the dimension of its image and its fibers
---------------------------------------------------------------------------------------------
-- The same two ways as for networks, on any list of polynomials in a polynomial ring over a field:
-- the rank of the Jacobian at a random point (mod a large prime over QQ), or the kernel of the ring
-- map (exact, small cases). A RingMap phi: S -> R is the list of the images of S's generators.

-- the polynomial ring of the map and the polynomials in it (integers and constants promoted)
lcasMapPolys = F -> (
    if not instance(F, List) or #F == 0 then error "LightningCAS: a map must be a nonempty list of polynomials";
    rings := unique select(apply(F, f -> if instance(f, RingElement) or instance(f, Number) then ring f),
        S -> instance(S, PolynomialRing));
    if #rings != 1 then
        error("LightningCAS: the polynomials of a map must lie in one polynomial ring, got " | toString F);
    R := first rings;
    if not isField coefficientRing R then
        error("LightningCAS: a map needs a polynomial ring over a field, got " | toString R);
    polys := apply(F, f -> try promote(f, R) else
        error("LightningCAS: " | toString f | " is not in the ring " | toString R | " of the map"));
    (R, polys))

-- the field of the random point: ZZ/p for maps over QQ (p = lcasDefaultPrime), the ring's own field
-- otherwise, or the one given (of the same characteristic, or a prime field for a map over QQ)
lcasMapField = (R, kk) -> (
    k0 := coefficientRing R;
    if kk === null then kk = if k0 === QQ then ZZ/lcasDefaultPrime else k0;
    if not instance(kk, Ring) or not isField kk then error "LightningCAS: CoefficientRing must be a field";
    if kk =!= k0 and not (k0 === QQ and (kk === QQ or char kk > 0)) then
        error("LightningCAS: CoefficientRing " | toString kk | " does not fit a map over " | toString k0);
    kk)

lcasMapJacobian = (R, polys, kk) -> (
    if kk =!= coefficientRing R and char kk > 0 then (
        p := char kk;
        bad := select(polys, f -> any(flatten entries last coefficients f, c -> denominator lift(c, QQ) % p == 0));
        if #bad > 0 then error("LightningCAS: a coefficient of " | toString first bad | " has a denominator divisible by "
            | toString p | "; choose another CoefficientRing"));
    Rk := if kk === coefficientRing R then R else kk(monoid R);
    J := jacobian matrix {apply(polys, f -> sub(f, Rk))};
    sub(J, matrix {apply(numgens Rk, i -> random kk)}));

-- the ideal of the closure of the image, in coordinates y_1..y_n (one per polynomial)
lcasMapImage = (R, polys) -> (
    y := getSymbol "y";
    S := (coefficientRing R)[y_1 .. y_(#polys)];
    graded := degreeLength R == 1 and any(polys, f -> f != 0)
        and all(polys, f -> f == 0 or (isHomogeneous f and first degree f > 0));
    if graded then lcasImage(polys, ideal 0_R, S) else ker map(R, S, polys))

mapDimension = method(Options => {Strategy => "Jacobian", CoefficientRing => null})
mapDimension List := o -> F -> (
    (R, polys) := lcasMapPolys F;
    if o.Strategy === "Jacobian" then rank lcasMapJacobian(R, polys, lcasMapField(R, o.CoefficientRing))
    else if o.Strategy === "Implicit" then (
        if o.CoefficientRing =!= null then error "LightningCAS: Strategy => \"Implicit\" works over the map's own field";
        dim lcasMapImage(R, polys))
    else error "LightningCAS: Strategy must be \"Jacobian\" or \"Implicit\"")
mapDimension RingMap := o -> phi -> mapDimension(flatten entries matrix phi, o)

mapFiber = method()
mapFiber(List, List) := (F, point) -> (
    (R, polys) := lcasMapPolys F;
    kk := coefficientRing R;
    at := map(kk, R, lcasPoint(point, numgens R, kk));
    trim ideal apply(polys, f -> f - at f))
mapFiber(RingMap, List) := (phi, point) -> mapFiber(flatten entries matrix phi, point)
