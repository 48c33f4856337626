-- lightning_cas: dimension as the rank of the Jacobian of the coefficient map at a random point
-- over ZZ/charP (probabilistic). The computation is dimensionRecord in the LightningCAS package.
-- Inputs (rendered header): widths, attention, tokens, heads, charP, seed, columns, lcasPackage.
needsPackage("LightningCAS", FileName => lcasPackage);
setRandomSeed seed;
printRecord dimensionRecord(widths, attention, tokens, Heads => heads, Strategy => "Jacobian",
    CoefficientRing => ZZ/charP, Columns => columns);
