-- every complex critical point of the distance to a translated power sum, by monodromy then a parameter homotopy
printRecord powerSumCriticalPoints(weights, exponent, metric, targets, TargetCount => count)
