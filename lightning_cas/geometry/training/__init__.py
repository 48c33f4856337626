"""Critical points of training: the squared loss of a data set on the function space of a small network."""
