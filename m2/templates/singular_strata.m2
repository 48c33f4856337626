-- the singular locus of a one-layer neurovariety on G-orbit slices of the weights
printRecord geometryRecord(implicitModel(widths, attention, tokens), SingularMethod => "strata", MinorBudget => minorBudget, SamplesPerPiece => samplesPerPiece)
