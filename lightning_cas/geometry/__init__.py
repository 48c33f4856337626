"""Questions about the variety beyond its dimension, one package per question: the degree and the ED
degree (degree), the decision boundary and the robustness radius (decision), critical points of training
(training), the learning coefficient (learning), fibers (fibers), and for one layer the implicit ideal,
its singular locus, strata, points and real boundary (one_layer); the Macaulay2 and LaTeX forms of the
results (formats)."""
