-- lightning_cas: dimension as the rank of the Jacobian of the coefficient map at a random point
-- over ZZ/charP (probabilistic: the rank at a random point is the generic rank with high probability).
-- Inputs (rendered header): widths, attention, tokens, charP, seed, columns.
-- Only the first `columns` output tokens are used: by permutation equivariance the other
-- columns' coefficients are copies of the first column's, so the rank is the same.
setRandomSeed seed;
kk = ZZ/charP;
P = #(lcasWeightSymbols());
T = kk[lcasTokenSymbols()];
pt = apply(P, k -> random kk);
(F, dF) = lcasNetworkTangents(pt, T, columns);
-- one row block per output entry: coefficients of every token monomial, one column per weight
entryRows = transpose apply(dF, M -> flatten entries M);
J = fold((A, B) -> A || B, apply(entryRows, r -> lift(last coefficients matrix {r}, kk)));
lcasEmit("m2_version", version#"VERSION");
lcasEmit("prime", charP);
lcasEmit("parameters", P);
lcasEmit("rows", numrows J);
lcasEmit("rank", rank J);
