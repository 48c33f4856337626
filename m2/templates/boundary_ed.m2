-- the ED degree of a decision boundary (exact mod p and by homotopy) and, with a point, its real critical points
printRecord boundaryEDRecord(neuralNetwork(inputWidth, tokens, blocks), weights, readout, center, Modulus => modulus, NumericalRuns => numericalRuns)
