-- the implicit ideal as the kernel of the coefficient ring map (exact over QQ when charP = 0)
printRecord dimensionRecord(widths, attention, tokens, Heads => heads, Strategy => "Implicit", CoefficientRing => (if charP == 0 then QQ else ZZ/charP), Columns => columns, Generators => emitGenerators == 1)
