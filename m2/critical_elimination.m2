-- lightning_cas: the image of the critical locus of the parametrization by elimination, and its
-- minimal primes (criticalImage in the LightningCAS package): an independent check of the slices.
-- Inputs (rendered header): widths, attention, tokens, seed, lcasPackage.
needsPackage("LightningCAS", FileName => lcasPackage);
setRandomSeed seed;
M = implicitModel(widths, attention, tokens);
C = criticalImage M;
printRecord merge(idealRecord C, new HashTable from {"m2_version" => version#"VERSION",
    "components" => apply(minimalPrimes C, idealRecord)}, (x, y) -> y);
