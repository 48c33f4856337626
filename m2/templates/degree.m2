-- the degree of a neurovariety: from the implicit ideal (strategyCode 0) or from a pseudo-witness set with the trace test (1)
printRecord degreeRecord(neuralNetwork(inputWidth, tokens, blocks), Strategy => {"Implicit", "Numerical"}#strategyCode, Columns => columns)
