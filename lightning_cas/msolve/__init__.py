"""msolve as a backend: Groebner bases, rational parametrizations and real roots of polynomial systems
over GF(p) and QQ, run as a bounded subprocess (runner), fed by the writer, read by the parser."""
