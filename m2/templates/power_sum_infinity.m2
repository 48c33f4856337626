-- the solutions of v = S D v^(d-1): where the power sum's critical points could escape to infinity
printRecord powerSumAtInfinity(weights, exponent, metric)
