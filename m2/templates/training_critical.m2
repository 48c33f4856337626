-- the critical points of the squared loss of a data set on the function space (homotopy on a gauge slice)
printRecord trainingRecord(neuralNetwork(inputWidth, tokens, blocks), inputs, targets, MaxPaths => maxPaths)
