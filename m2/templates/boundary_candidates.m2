-- the boundary candidates of a one-layer neurovariety: critical locus, strata closures and (withSingular = 1) the singular locus, with sample points
printRecord geometryRecord(implicitModel(widths, attention, tokens), SingularMethod => (if withSingular == 1 then "strata"), CriticalLocus => true, StrataClosures => true, MinorBudget => minorBudget, SamplesPerPiece => samplesPerPiece)
