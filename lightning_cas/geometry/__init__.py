"""Questions about the variety beyond its dimension, one package per question: the degree and the ED
degree (degree), the decision boundary and the robustness radius (decision), critical points of training
(training), the learning coefficient (learning), fibers (fibers), and for one layer the implicit ideal,
its singular locus, strata, points and real boundary (one_layer). Every route to a question is declared in
solvers, ``auto`` is decided in planner; formats writes results as Macaulay2 and LaTeX."""
