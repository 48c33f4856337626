-- the dimension as the rank of the coefficient Jacobian at a random point over ZZ/charP (probabilistic)
printRecord dimensionRecord(neuralNetwork(inputWidth, tokens, blocks), Strategy => "Jacobian", CoefficientRing => ZZ/charP, Columns => columns)
