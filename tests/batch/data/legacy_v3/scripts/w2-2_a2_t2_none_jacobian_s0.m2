-- rendered by lightning_cas from m2/dimension_jacobian.m2
widths = {2, 2};
attention = {2};
tokens = 2;
heads = {1};
charP = 2147483629;
seed = 0;
columns = 1;
lcasPackage = "/work/main/m2/LightningCAS.m2";
-- lightning_cas: dimension as the rank of the Jacobian of the coefficient map at a random point
-- over ZZ/charP (probabilistic). The computation is dimensionRecord in the LightningCAS package.
-- Inputs (rendered header): widths, attention, tokens, heads, charP, seed, columns, lcasPackage.
needsPackage("LightningCAS", FileName => lcasPackage);
setRandomSeed seed;
printRecord dimensionRecord(widths, attention, tokens, Heads => heads, Strategy => "Jacobian",
    CoefficientRing => ZZ/charP, Columns => columns);
