"""The mathematics with no external process: the architecture value type, weights, the network
(symbolic, GF(p), float; lightning and softmax), closed-form theory, and bounded file I/O."""
