-- lightning_cas: the implicit ideal of a one-layer neurovariety, and optionally its numerical
-- degree (implicitModel and implicitRecord in the LightningCAS package).
-- Inputs (rendered header): widths, attention, tokens, oneCoord, reparam, wantIdeal,
-- emitGenerators, numDegreeRuns, seed, lcasPackage.
needsPackage("LightningCAS", FileName => lcasPackage);
setRandomSeed seed;
M = implicitModel(widths, attention, tokens, OneCoordinate => oneCoord == 1, Reparametrize => reparam == 1);
printRecord implicitRecord(M, ComputeIdeal => wantIdeal == 1, Generators => emitGenerators == 1,
    NumericalDegreeRuns => numDegreeRuns);
