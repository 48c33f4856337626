-- lightning_cas: the data of a real verdict (interior or boundary) at one rational weight point
-- (pointVerdict in the LightningCAS package; the Sturm counts are done in Python).
-- Inputs (rendered header): widths, attention, tokens, pointQ, pointK, pointV, numDirections,
-- seed, lcasPackage.
needsPackage("LightningCAS", FileName => lcasPackage);
setRandomSeed seed;
M = implicitModel(widths, attention, tokens);
printRecord pointVerdict(M, pointQ, pointK, pointV, Directions => numDirections);
