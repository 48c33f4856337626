-- the critical image of a one-layer parametrization by elimination, with its minimal primes
printRecord criticalImageRecord implicitModel(widths, attention, tokens)
