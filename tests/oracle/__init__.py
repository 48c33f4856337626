"""An independent oracle for the rank at given weights: its own forward pass (mpmath, high precision),
a Jacobian by central differences and a rank from singular values with a clear gap. It shares no
arithmetic with lightning_cas (it reads only the network's layout), so a bug in the certifier cannot
hide in the oracle too."""
