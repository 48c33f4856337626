-- lightning_cas: the singular locus of a one-layer neurovariety by the Jacobian criterion on the
-- whole implicit ideal, decomposed, with the weight strata containing each component
-- (singularRecord in the LightningCAS package).
-- Inputs (rendered header): widths, attention, tokens, oneCoord, seed, lcasPackage.
needsPackage("LightningCAS", FileName => lcasPackage);
setRandomSeed seed;
M = implicitModel(widths, attention, tokens, OneCoordinate => oneCoord == 1);
printRecord merge(implicitRecord(M, Generators => false),
    new HashTable from {"singular_locus" => singularRecord M}, (x, y) -> y);
