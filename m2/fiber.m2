-- lightning_cas: the fiber {W' : phi_W' = phi_W} of the parametrization at a given point W,
-- decomposed. The computation is parametrizationFiber in the LightningCAS package.
-- Inputs (rendered header): widths, attention, tokens, heads, charP, seed, columns, point (the
-- entries of W in the package's weight order: rationals over QQ, integers already reduced when
-- charP > 0), witnessTries, lcasPackage.
needsPackage("LightningCAS", FileName => lcasPackage);
setRandomSeed seed;
printRecord parametrizationFiber(widths, attention, tokens, point, Heads => heads,
    CoefficientRing => (if charP == 0 then QQ else ZZ/charP), Columns => columns, WitnessTries => witnessTries);
