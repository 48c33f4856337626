-- lightning_cas: the candidates for the boundary of a one-layer neurovariety: the critical locus
-- of the parametrization and (withSingular = 1) the singular locus, both on G-orbit slices, with
-- sample points of every piece, and the strata closures the pieces are matched to (criticalLocus,
-- singularStrata and weightStrata in the LightningCAS package).
-- Inputs (rendered header): widths, attention, tokens, withSingular, minorBudget, samplesPerPiece,
-- seed, lcasPackage.
needsPackage("LightningCAS", FileName => lcasPackage);
setRandomSeed seed;
M = implicitModel(widths, attention, tokens);
printRecord merge(implicitRecord(M, Generators => false),
    new HashTable from ({"strata" => applyValues(weightStrata M, idealRecord),
        "critical" => criticalLocus(M, MinorBudget => minorBudget,
        SamplesPerPiece => samplesPerPiece)}
        | (if withSingular == 1 then {"singular_strata" => singularStrata(M,
        MinorBudget => minorBudget, SamplesPerPiece => samplesPerPiece)} else {})), (x, y) -> y);
