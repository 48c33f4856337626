"""Ways of computing the same quantities: Macaulay2 (m2), exact mod p (modp), floating point (numeric)."""
