-- the fiber {W' : phi_W' = phi_W} at W = point (the package's weight order; reduced mod charP when charP > 0), decomposed
printRecord parametrizationFiber(widths, attention, tokens, point, Heads => heads, CoefficientRing => (if charP == 0 then QQ else ZZ/charP), Columns => columns, WitnessTries => witnessTries)
