-- the singular locus of a one-layer neurovariety by the Jacobian criterion on the whole ideal, decomposed
printRecord geometryRecord(implicitModel(widths, attention, tokens, OneCoordinate => oneCoord == 1), SingularMethod => "whole")
