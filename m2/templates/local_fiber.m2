-- the dimension of the fiber {W' : phi_W' = phi_W} at W = weightPoint itself (the tangent cone of the fiber ideal at W)
N = neuralNetwork(inputWidth, tokens, blocks)
printRecord new HashTable from {"parameters" => N#"parameters", "local_fiber_dimension" => localFiberDimension(N, weightPoint, Columns => columns)}
