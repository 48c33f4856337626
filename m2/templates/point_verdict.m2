-- the data of a real verdict (interior or boundary) at one rational weight point; the Sturm counts are done in Python
printRecord pointVerdict(implicitModel(widths, attention, tokens), pointQ, pointK, pointV, Directions => numDirections)
