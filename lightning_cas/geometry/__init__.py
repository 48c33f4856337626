"""Questions about the variety beyond its dimension: fibers, implicit ideals and singular loci
(ideals), the real boundary with certificates (boundary), and the paper's claims checked one by one."""
