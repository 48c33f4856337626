-- lightning_cas: the singular locus of a one-layer neurovariety on G-orbit slices of the weights
-- (singularStrata in the LightningCAS package).
-- Inputs (rendered header): widths, attention, tokens, minorBudget, samplesPerPiece, seed, lcasPackage.
needsPackage("LightningCAS", FileName => lcasPackage);
setRandomSeed seed;
M = implicitModel(widths, attention, tokens);
printRecord merge(implicitRecord(M, Generators => false),
    new HashTable from {"singular_strata" => singularStrata(M, MinorBudget => minorBudget,
        SamplesPerPiece => samplesPerPiece)}, (x, y) -> y);
