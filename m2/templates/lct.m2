-- the log canonical threshold (complex, global) of the fiber ideal through W = weightPoint (Dmodules); a rational "p/q"
needsPackage "Dmodules"
N = neuralNetwork(inputWidth, tokens, blocks)
printRecord new HashTable from {"parameters" => N#"parameters", "lct" => toString lct fiberIdeal(N, weightPoint, Columns => columns)}
