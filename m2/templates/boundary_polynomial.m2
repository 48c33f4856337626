-- the decision polynomial's squarefree part and its coefficients (the prime of the exact count must reduce them faithfully)
printRecord boundaryPolynomialRecord(neuralNetwork(inputWidth, tokens, blocks), weights, readout)
