-- the implicit ideal of a one-layer neurovariety, and optionally its numerical degree
printRecord implicitRecord(implicitModel(widths, attention, tokens, OneCoordinate => oneCoord == 1, Reparametrize => reparam == 1), ComputeIdeal => wantIdeal == 1, Generators => emitGenerators == 1, NumericalDegreeRuns => numDegreeRuns)
