-- hand checks: one layer of width one, one and two heads
TEST ///
F = lightningNetwork({1,1}, {1}, 2)
R = ring F
(qq, kk, vv, x1, x2) = toSequence gens R;
assert(entries F == {{qq*kk*vv*(x1^2 + x2^2)*x1, qq*kk*vv*(x1^2 + x2^2)*x2}})
///

TEST ///
assert(apply(lightningWeights({1,1}, {1}, Heads => {2}), toString)
    == {"q_(1,1,1,1)", "k_(1,1,1,1)", "v_(1,1,1,1)", "q_(1,2,1,1)", "k_(1,2,1,1)", "v_(1,2,1,1)"})
F = lightningNetwork({1,1}, {1}, 2, Heads => {2})
R = ring F
(q1, k1, v1, q2, k2, v2, x1, x2) = toSequence gens R;
assert(entries F == {{(q1*k1*v1 + q2*k2*v2)*(x1^2 + x2^2)*x1, (q1*k1*v1 + q2*k2*v2)*(x1^2 + x2^2)*x2}})
///

TEST ///
-- two layers of width one, heads {2,1}, one token: layer 1 gives c x^3 with c = sum_h q_h k_h v_h,
-- layer 2 gives q k v (c x^3)^3
assert(apply(lightningWeights({1,1,1}, {1,1}, Heads => {2,1}), toString) == {"q_(1,1,1,1)", "k_(1,1,1,1)",
    "v_(1,1,1,1)", "q_(1,2,1,1)", "k_(1,2,1,1)", "v_(1,2,1,1)", "q_(2,1,1)", "k_(2,1,1)", "v_(2,1,1)"})
F = lightningNetwork({1,1,1}, {1,1}, 1, Heads => {2,1})
R = ring F
w = gens R;
c = w#0*w#1*w#2 + w#3*w#4*w#5;
assert(entries F == {{w#6*w#7*w#8 * c^3 * w#9^9}})
///

TEST ///
-- a 1x1 attention layer on one width-2 token: (v.x)(k.x)(q.x), one column per weight ordering
F = lightningNetwork({2,1}, {1}, 1)
R = ring F
(q1, q2, k1, k2, v1, v2, x1, x2) = toSequence gens R;
assert(entries F == {{(v1*x1 + v2*x2)*(k1*x1 + k2*x2)*(q1*x1 + q2*x2)}})
///

TEST ///
-- the dimension from the Jacobian and from the implicit ideal agree, with one and two heads
setRandomSeed 1
assert(neurovarietyDimension({2,1}, {1}, 2) == 4)
assert(neurovarietyDimension({2,1}, {1}, 2, Strategy => "Implicit") == 4)
assert(neurovarietyDimension({2,2}, {1}, 2) == neurovarietyDimension({2,2}, {1}, 2, Strategy => "Implicit"))
-- first output column: (q.x_1) S(x_1, x_2) with S = sum_l (v.x_l)(k.x_l), a linear form times a
-- quadratic form from a rank-one matrix v k^T: dimension 2 + 3 - 1 = 4 with one head; two heads
-- give every element of (linear forms) (x) (the 3-dimensional span of such S): 2 * 3 = 6
assert(neurovarietyDimension({2,1}, {1}, 2, Heads => {2}) == 6)
assert(neurovarietyDimension({2,1}, {1}, 2, Heads => {2}, Strategy => "Implicit") == 6)
-- products of three linear forms in three variables: 9 parameters, 2 scalings
assert(neurovarietyDimension({3,1}, {1}, 1) == 7)
///

TEST ///
setRandomSeed 0
assert(neurovarietyDimension({3,3,3}, {2,2}, 2) == 23)
r = dimensionRecord({3,3,3}, {2,2}, 2, CoefficientRing => ZZ/32003)
assert(r#"prime" == 32003 and r#"rank" == 23 and r#"parameters" == 42)
///

TEST ///
-- the fiber through a point of a 2 -> 1 layer on two tokens
setRandomSeed 0
F = parametrizationFiber({2,1}, {1}, 2, {1,2,3,-1,1,1})
assert(F#"parameters" == 6)
assert(any(F#"components", c -> c#"contains_point"))
assert(F#"fiber_dimension" == 6 - neurovarietyDimension({2,1}, {1}, 2))
I = fiberIdeal({2,1}, {1}, 2, {1,2,3,-1,1,1})
assert(sub(I, matrix {{1,2,3,-1,1,1}}) == 0)
///

TEST ///
-- the fiber at the point: generic points have the generic fiber; the zero function a larger one
assert(localFiberDimension({2,1}, {1}, 2, {1,2,3,-1,1,1}) == 6 - neurovarietyDimension({2,1}, {1}, 2))
assert(localFiberDimension({2,1}, {1}, 2, {0,0,0,0,0,0}) == 4)
///

TEST ///
-- bad input is refused
assert(try (lightningNetwork({2,0}, {1}, 1); false) else true)
assert(try (neurovarietyDimension({2,2}, {1,1}, 1); false) else true)
assert(try (neurovarietyDimension({2,2}, {1}, 2, Columns => 3); false) else true)
assert(try (neurovarietyDimension({2,2}, {1}, 2, Strategy => "nope"); false) else true)
assert(try (lightningNetwork({2,2}, {1}, 1, Heads => {1,1}); false) else true)
assert(try (fiberIdeal({2,1}, {1}, 2, {1,2}); false) else true)
///

-- the implicit ideal: dimension against the Jacobian rank, the reparametrized ideal against the
-- ideal eliminated from the weights themselves
TEST ///
setRandomSeed 0
M = implicitModel({2,1}, {1}, 2)
I = implicitIdeal M
assert(dim I == neurovarietyDimension({2,1}, {1}, 2) and degree I == 3)
assert(apply(flatten entries gens I, g -> first degree g) == {2,2,2})
-- every coordinate of phi at a random point satisfies the equations
Rw = M#"weight ring";
pt = map(QQ, Rw, apply(numgens Rw, i -> random(-9, 9)));
assert(sub(I, matrix {apply(M#"weight coordinates", f -> pt f)}) == 0)
assert(isWellDefined M)
I2 = implicitIdeal implicitModel({2,1}, {2}, 2)
J2 = implicitIdeal implicitModel({2,1}, {2}, 2, Reparametrize => false)
assert(sub(J2, ring I2) == I2 and dim I2 == neurovarietyDimension({2,1}, {2}, 2))
r = implicitRecord(M, Generators => false)
assert(r#"dimension" == 4 and r#"linear_span" == 6 and not r#?"generators")
///

-- the singular locus two ways, the critical image two ways
TEST ///
setRandomSeed 0
M = implicitModel({2,1}, {1}, 2)
S = singularStrata M
assert(S#"unresolved" == {} and S#"singular" =!= null)
assert(radical ideal S#"singular"#"generators" == radical singularLocus M)
C = criticalLocus M
assert(C#"base_locus_V_or_A" and C#"critical_image" =!= null)
assert(radical ideal C#"critical_image"#"generators" == radical criticalImage M)
assert(all(C#"pieces", p -> p#"matches" == "parallel"))
-- the sample points lie on their pieces: phi there satisfies the parallel stratum's equations
P = (weightStrata M)#"parallel"
scan(C#"pieces", p -> scan(p#"points", w -> (
    (Q, K, V) = toSequence apply(w, m -> matrix(QQ, m));
    assert(sub(P, matrix {implicitCoordinates(M, V, transpose K * Q)}) == 0))))
///

-- verdict data at a smooth point with regular preimages, and at the vertex; bad input refused
TEST ///
setRandomSeed 0
M = implicitModel({2,1}, {1}, 2)
r = pointVerdict(M, {{1,2}}, {{1,0}}, {{1,1}})
assert(not r#"vertex" and r#"tangent_rank" == r#"codimension" and r#"regular_preimages" >= 1)
assert((pointVerdict(M, {{0,0}}, {{1,0}}, {{1,1}}))#"vertex")
assert(try (pointVerdict(M, {{1,2,3}}, {{1,0}}, {{1,1}}); false) else true)
assert(try (implicitModel({2,2,2}, {1,1}, 2); false) else true)
assert(try (implicitModel({2,1}, {1}, 2, OneCoordinate => 1); false) else true)
assert(try (singularStrata(M, MinorBudget => 0); false) else true)
assert(try (criticalLocus implicitModel({2,1}, {1}, 2, OneCoordinate => true); false) else true)
assert(try (implicitIdeal(M, OneCoordinate => true); false) else true)
///

-- networks of blocks: hand checks of each kind on width one
TEST ///
-- an mlp of degree 2 and width 1 is u^2 d x^2
N = neuralNetwork(1, 1, {mlpBlock 1})
F = lightningNetwork N
(u, d, x) = toSequence gens ring F;
assert(entries F == {{u^2 * d * x^2}})
assert(apply(lightningWeights N, toString) == {"u_(1,1,1)", "d_(1,1,1)"})
-- a linear block then a cube: (p x)^3
F = lightningNetwork neuralNetwork(1, 1, {linearBlock 1, powerBlock 3})
(p, x) = toSequence gens ring F;
assert(entries F == {{p^3 * x^3}})
-- factored value (V = O W) on two tokens: q k w o (x_1^2 + x_2^2) x_j, weights in the order q, k, w, o
N = neuralNetwork(1, 2, {attentionBlock(1, Value => 1)})
assert(apply(lightningWeights N, toString) == {"q_(1,1,1)", "k_(1,1,1)", "w_(1,1,1)", "o_(1,1,1)"})
F = lightningNetwork N
(q, k, w, o, x1, x2) = toSequence gens ring F;
assert(entries F == {{q*k*w*o*(x1^2 + x2^2)*x1, q*k*w*o*(x1^2 + x2^2)*x2}})
///

TEST ///
-- causal: token j sees the keys i <= j; residual: Y + block(Y)
F = lightningNetwork neuralNetwork(1, 2, {attentionBlock(1, Causal => true)})
(q, k, v, x1, x2) = toSequence gens ring F;
assert(entries F == {{q*k*v*x1^3, q*k*v*(x1^2 + x2^2)*x2}})
F = lightningNetwork neuralNetwork(1, 2, {attentionBlock(1, Residual => true)})
(q, k, v, x1, x2) = toSequence gens ring F;
assert(entries F == {{x1 + q*k*v*(x1^2 + x2^2)*x1, x2 + q*k*v*(x1^2 + x2^2)*x2}})
F = lightningNetwork neuralNetwork(1, 1, {mlpBlock(1, Degree => 3, Residual => true)})
(u, d, x) = toSequence gens ring F;
assert(entries F == {{x + u^3 * d * x^3}})
-- several heads keep the old names q_(i,h,r,c)
assert(apply(lightningWeights neuralNetwork(1, 2, {attentionBlock(1, Heads => 2)}), toString)
    == apply(lightningWeights({1,1}, {1}, Heads => {2}), toString))
///

TEST ///
-- dimensions of block networks against counts by hand
setRandomSeed 0
-- W Y: every out x d matrix, so out * d, for out below, equal to and above d
assert(neurovarietyDimension neuralNetwork(3, 2, {linearBlock 2}) == 6)
assert(neurovarietyDimension neuralNetwork(2, 2, {linearBlock 3}) == 6)
-- P_2 P_1 through width 1: the 3 x 3 matrices of rank <= 1, dimension 1 * (3 + 3 - 1)
assert(neurovarietyDimension neuralNetwork(3, 1, {linearBlock 1, linearBlock 3}) == 5)
-- sums of two squares of linear forms in 3 variables: symmetric 3 x 3 of rank <= 2, dimension 5,
-- as linear-power-linear and as an mlp; in 2 variables every binary quadric, dimension 3
assert(neurovarietyDimension neuralNetwork(3, 1, {linearBlock 2, powerBlock 2, linearBlock 1}) == 5)
assert(neurovarietyDimension neuralNetwork(3, 1, {mlpBlock(2, Out => 1)}) == 5)
assert(neurovarietyDimension neuralNetwork(2, 1, {mlpBlock(2, Out => 1)}) == 3)
assert(neurovarietyDimension(neuralNetwork(2, 1, {mlpBlock(2, Out => 1)}), Strategy => "Implicit") == 3)
-- one layer with V = O W of rank <= 1 (d = d' = a = 3): 5 for V, 9 for A, minus the scaling
assert(neurovarietyDimension neuralNetwork(3, 2, {attentionBlock(3, Value => 1)}) == 13)
-- the old arguments are the stack of plain attention blocks
assert(neurovarietyDimension neuralNetwork({3,3,3}, {2,2}, 2) == 23)
N = neuralNetwork(2, 2, {{0, 1, 1, 0, 2, 0, 0}, {1, 2, 2, 1, 0}})
assert(N === neuralNetwork(2, 2, {attentionBlock 1, mlpBlock(2, Out => 1)}) and isWellDefined N)
///

TEST ///
-- the fiber of a block network, and bad blocks refused
setRandomSeed 0
N = neuralNetwork(2, 1, {linearBlock 1})
F = parametrizationFiber(N, {1, 2})
assert(F#"fiber_dimension" == 0 and F#"parameters" == 2)
assert(try (attentionBlock(1, Normalization => "softmax"); false) else true)
assert(try (neuralNetwork(2, 2, {attentionBlock(1, Out => 1, Residual => true)}); false) else true)
assert(try (neuralNetwork(2, 2, {{5, 1}}); false) else true) -- 5: no such kind (4 is the position block)
assert(try (neuralNetwork(2, 2, {{0, 1, 1, 0, 2, 2, 0}}); false) else true)
assert(try (neuralNetwork(2, 2, {powerBlock 2}); false) else true)
assert(try (mlpBlock(0); false) else true)
-- residual groups: Residual => n on the last block; overlapping, too long or width-changing groups refused
N = neuralNetwork(1, 1, {linearBlock 1, linearBlock(1, Residual => 2), powerBlock(2, Residual => 1)})
assert(toString N#"blocks"#1 == "linear(out 1, residual 2)")
F = lightningNetwork N
(p1, p2, x1) = toSequence gens ring F;
assert(F - matrix {{(x1 + p2 * p1 * x1) + (x1 + p2 * p1 * x1)^2}} == 0)
assert(try (neuralNetwork(1, 1, {{2, 1}, {2, 1, 0, 2}, {2, 1, 0, 2}}); false) else true)
assert(try (neuralNetwork(1, 1, {{2, 1}, {2, 1, 0, 3}}); false) else true)
assert(try (neuralNetwork(1, 1, {{2, 2}, {2, 2, 0, 2}}); false) else true)
///

TEST ///
-- every type of the package shows as a short description through net, toString and print (the
-- hash tables behind them are not for reading)
N = neuralNetwork(2, 2, {attentionBlock(1, Causal => true), mlpBlock(2), linearBlock 1, powerBlock 2})
B = first N#"blocks"
M = implicitModel({1,1}, {1}, 1)
assert(toString B == "attention(heads 1, attention 1, out 2, causal)")
assert(toString N == "a network on 2 token(s) of width 2: attention(heads 1, attention 1, out 2, causal) -> "
    | "mlp(hidden 2, degree 2, out 2) -> linear(out 1) -> power(degree 2, out 1) (18 weights)")
assert(toString M == "an implicit model of widths {1, 1}, attention {1}, 1 token(s), in 1 coordinates")
for x in {N, B, M} do (assert(net x == net toString x); print x)
///

TEST ///
-- degree: exact and numerical agree on the Segre cone (one layer d = 2, d' = 1, a = 1): degree 3
setRandomSeed 0
assert(neurovarietyDegree({2,1}, {1}, 2) == 3)
W = degreeRecord({2,1}, {1}, 2, Strategy => "Numerical")
assert(W#"degree" == 3 and W#"trace_test_passed" and W#"dimension" == 4)
-- ED degree: Eckart-Young (2 for the Frobenius form of 2 x 3 matrices), 10 for a generic form, and the
-- neurovariety, the same variety in other coordinates, gives 10 too
S = ZZ/32003[a..f]; I = minors(2, genericMatrix(S, 2, 3))
assert(edDegree(I, Metric => "standard") == 2 and edDegree I == 10)
assert(edDegree({2,1}, {1}, 2) == 10)
-- one input: the data form is degenerate, the projection fills the plane, one critical point
R = edDegreeRecord({2,1}, {1}, 2, Metric => {{{1,2},{3,-1}}})
assert(R#"ed_degree" == 1 and R#"coordinates" == 2 and R#"span" == 6)
assert(try (edDegreeRecord({2,1}, {1}, 2, Metric => "euclid"); false) else true)
assert(try (degreeRecord({2,1}, {1}, 2, Strategy => "Guess"); false) else true)
///

TEST ///
-- biases: an affine map K^2 -> K^3 has 9 free coefficients; one lightning head with biases loses only the
-- GL(1) and the scaling (12 - 2); c (u y + b)^2 is one square of a linear form in three variables (y, 1)
assert(neurovarietyDimension neuralNetwork(2, 1, {linearBlock(3, Bias => true)}) == 9)
assert(neurovarietyDimension neuralNetwork(2, 2, {attentionBlock(1, Bias => true)}) == 10)
M = neuralNetwork(2, 1, {linearBlock(1, Bias => true), powerBlock 2, linearBlock 1})
assert(neurovarietyDimension M == 3 and neurovarietyDimension(M, Strategy => "Implicit") == 3)
-- the integer list with a last 1 is the biased block; bias entries are named letter_(i,r) (per head: (i,h,r))
N = neuralNetwork(2, 3, {{0, 2, 1, 1, 2, 1, 0, 1}, {2, 1, 1}})
assert(N === neuralNetwork(2, 3, {attentionBlock(1, Heads => 2, Value => 1, Out => 2, Causal => true, Bias => true),
    linearBlock(1, Bias => true)}))
assert(N#"parameters" == 27 and member((getSymbol "bo")_(1, 2), N#"weights") and member((getSymbol "bq")_(1, 2, 1), N#"weights"))
-- a causal network with biases uses every output column (zero tokens do not stay zero): 15 = 27 - 12
assert(neurovarietyDimension N == 15)
///

TEST ///
-- decision boundaries: two lines (ED degree 2, both methods), a generic cubic cone in three variables
-- (3 (1 + 2) = 9), the radius from (2, 1/2) to x^2 = y^2 is 1.5/sqrt 2
setRandomSeed 0
N = neuralNetwork(2, 1, {linearBlock 2, powerBlock 2, linearBlock 1})
g = decisionBoundary(N, {1,0,0,1,1,-1}, {{1}})
assert(boundaryEDDegree g == 2 and #boundaryCriticalPoints g == 2)
R = QQ[a,b,c]
h = a^3 + 2*b^3 - c^3 + a*b*c + a^2*c
assert(boundaryEDDegree h == 9 and #boundaryCriticalPoints h == 9)
r = robustnessRadius(g, {2, 1/2})
assert(r#"exact_count" == 2)
d = min apply(r#"numeric_points", p -> value p#"distance")
assert(abs(d - 1.5 / sqrt 2) < 1e-10)
assert(all(r#"numeric_points", p -> p#"certified" and p#"certified_real"))
///

TEST ///
-- training a linear network 3 -> 1 -> 2 on e_1, e_2, e_3: Eckart-Young, two critical functions
setRandomSeed 0
T = trainingCriticalPoints(neuralNetwork(3, 1, {linearBlock 1, linearBlock 2}),
    {{{1},{0},{0}}, {{0},{1},{0}}, {{0},{0},{1}}}, {{{3},{1}}, {{1},{2}}, {{0},{-1}}})
assert(T#"rank" == 4 and #(T#"points") >= 2)
///

TEST ///
-- a user's own map: the twisted cubic is a curve, the Segre map P^1 x P^1 -> P^3 a cone of dimension 3,
-- both ways and as a RingMap; a fiber of the Segre map is the orbit a -> s a, c -> c / s (dimension 1)
setRandomSeed 0
R = QQ[t]
assert(mapDimension {t, t^2, t^3} == 1 and mapDimension({t, t^2, t^3}, Strategy => "Implicit") == 1)
S = QQ[a,b,c,d]
segre = {a*c, a*d, b*c, b*d}
assert(mapDimension segre == 3 and mapDimension({a*c, a*d, b*c, b*d}, Strategy => "Implicit") == 3)
assert(mapDimension map(S, QQ[z_1..z_4], segre) == 3)
I = mapFiber(segre, {1, 2, 3, 4})
assert(dim I == 1 and dim I == numgens S - mapDimension segre and isPrime I)
assert(mapFiber(map(S, QQ[z_1..z_4], segre), {1, 2, 3, 4}) == I)
-- constants and rationals are fine; a point mod 101 and a map over a prime field too
assert(mapDimension({1/2*a, 3, a^2 + b}, CoefficientRing => ZZ/101) == 2)
T = ZZ/101[u,v]
assert(mapDimension {u^2, u*v, v^2} == 2 and mapDimension({u^2, u*v, v^2}, Strategy => "Implicit") == 2)
-- refused: no polynomial, two rings, a ring over ZZ, a denominator divisible by the prime, a wrong point
assert(try (mapDimension {}; false) else true)
assert(try (mapDimension {t, a}; false) else true)
assert(try (mapDimension {(ZZ[x])_0}; false) else true)
assert(try (mapDimension({1/7*a}, CoefficientRing => ZZ/7); false) else true)
assert(try (mapFiber(segre, {1, 2}); false) else true)
assert(try (mapDimension(segre, Strategy => "Guess"); false) else true)
///

TEST ///
-- a neurovariety as one object: the numbers of neurovarietyDimension and dimensionRecord, the ideal when exact
setRandomSeed 0
R = neurovariety({3,3,3}, {2,2}, 2)
assert(instance(R, NeurovarietyResult) and isWellDefined R)
assert(R#"dimension" == 23 and R#"parameters" == 42 and R#"fiber_dimension" == 19 and R#"method" === "Jacobian")
assert(R#"ideal" === null and R#"degree" === null and R#"prime" == 2147483629)
E = neurovariety({2,1}, {1}, 2, Strategy => "Implicit")
r = dimensionRecord({2,1}, {1}, 2, Strategy => "Implicit")
assert(isWellDefined E and E#"dimension" == 4 and E#"degree" == 3 and E#"fiber_dimension" == 2)
assert(E#"ambient" == r#"coefficients" and E#"linear_span" == r#"linear_span" and dim E#"ideal" == 4)
assert((neurovariety(neuralNetwork(2, 1, {linearBlock 1, powerBlock 2}), Strategy => "Implicit"))#"degree" == 2)
assert((neurovariety({2,1}, {1}, 2, Heads => {2}))#"dimension" == 6)
assert(toString E == "a neurovariety of dimension 4 in 10 coefficients (6 weights, Implicit)")
assert(net E == stack {"neurovariety of " | toString E#"network", "  dimension        4", "  parameters       6",
    "  fiber dimension  2", "  ambient          10", "  degree           3", "  linear span      6",
    "  method           implicit ideal over QQ"})
assert(not isWellDefined new NeurovarietyResult from merge(E, new HashTable from {"dimension" => 5}, (x, y) -> y))
assert(try (neurovariety({2,1}, {1}, 2, Strategy => "Guess"); false) else true)
///
