-- lightning_cas: the implicit ideal of the neurovariety as the kernel of the coefficient ring map
-- (exact over QQ when charP = 0). Tiny architectures only.
-- Inputs (rendered header): widths, attention, tokens, charP, seed, columns, emitGenerators.
-- Structure used: (1) only the first `columns` output tokens (permutation equivariance makes the
-- rest linear copies); (2) the linear span of the coefficients first: a basis of it is an
-- injective linear image of the variety, so dimension and degree are unchanged; (3) the target
-- variables get the degree of their image, so ker works with a graded map.
setRandomSeed seed;
kk = if charP == 0 then QQ else ZZ/charP;
ws = lcasWeightSymbols();
R = kk[ws];
T = R[lcasTokenSymbols()];
X = matrix table(widths#0, tokens, (r, j) -> T_(r*tokens + j));
Phi = lcasNetwork(lcasLayers(apply(#ws, k -> R_k * 1_T)), X);
cols = toList(0 .. columns - 1);
coeffPolys = flatten apply(flatten entries Phi_cols, f -> apply(flatten entries last coefficients f, c -> lift(c, R)));
coeffPolys = select(coeffPolys, f -> f != 0);
-- greedy basis of the linear span of the coefficient polynomials
C = last coefficients matrix {coeffPolys};
C = lift(C, kk);
chosen = {}; r = 0;
scan(#coeffPolys, j -> (
    s := rank C_(append(chosen, j));
    if s > r then (chosen = append(chosen, j); r = s)));
basisPolys = coeffPolys_chosen;
if not all(basisPolys, isHomogeneous) then error "lightning_cas: coefficient polynomials are not homogeneous";
S = kk[y_1 .. y_(#basisPolys), Degrees => apply(basisPolys, f -> first degree f)];
I = ker map(R, S, basisPolys);
S1 = kk[y_1 .. y_(#basisPolys)];
I1 = (map(S1, S, vars S1)) I;
G = mingens I1;
lcasEmit("m2_version", version#"VERSION");
lcasEmit("parameters", #ws);
lcasEmit("coefficients", #coeffPolys);
lcasEmit("linear_span", #basisPolys);
lcasEmit("dimension", dim I1);
lcasEmit("degree", degree I1);
lcasEmit("generator_degrees", apply(flatten entries G, g -> first degree g));
if emitGenerators == 1 then lcasEmit("generators", demark(" ; ", apply(flatten entries G, toString)));
