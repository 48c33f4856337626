-- the fiber {W' : phi_W' = phi_W} at W = weightPoint (the package's weight order; reduced mod charP when charP > 0), decomposed
printRecord parametrizationFiber(neuralNetwork(inputWidth, tokens, blocks), weightPoint, CoefficientRing => (if charP == 0 then QQ else ZZ/charP), Columns => columns, WitnessTries => witnessTries)
