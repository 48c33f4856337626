-- the dimension as the rank of the coefficient Jacobian at a random point over ZZ/charP (probabilistic)
printRecord dimensionRecord(widths, attention, tokens, Heads => heads, Strategy => "Jacobian", CoefficientRing => ZZ/charP, Columns => columns)
