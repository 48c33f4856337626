-- rendered by lightning_cas from m2/dimension_implicit.m2
widths = {2, 2};
attention = {1};
tokens = 2;
heads = {1};
charP = 0;
seed = 0;
columns = 1;
emitGenerators = 0;
lcasPackage = "/work/main/m2/LightningCAS.m2";
-- lightning_cas: the implicit ideal of the neurovariety as the kernel of the coefficient ring map
-- (exact over QQ when charP = 0). The computation is dimensionRecord in the LightningCAS package.
-- Inputs (rendered header): widths, attention, tokens, heads, charP, seed, columns, emitGenerators,
-- lcasPackage.
needsPackage("LightningCAS", FileName => lcasPackage);
setRandomSeed seed;
printRecord dimensionRecord(widths, attention, tokens, Heads => heads, Strategy => "Implicit",
    CoefficientRing => (if charP == 0 then QQ else ZZ/charP), Columns => columns,
    Generators => emitGenerators == 1);
