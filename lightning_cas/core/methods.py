"""The methods each verb accepts, as plain data: the command line names them in its options without
loading the options machinery (and with it Macaulay2's connection) just to print --help."""

DIMENSION_METHODS = ("auto", "modp", "blackbox", "jacobian", "implicit", "numeric")
FIBER_METHODS = ("auto", "m2", "modp")
SINGULAR_METHODS = ("strata", "whole-ideal")
DEGREE_METHODS = ("auto", "implicit", "numerical", "msolve")
ED_METHODS = ("auto", "lagrange", "monodromy", "msolve")
ED_METRICS = ("generic", "standard", "data")
# "jacobian" is the old spelling of the singular locus' "whole-ideal"
METHOD_ALIASES = {"singular_locus": {"jacobian": "whole-ideal"}}
SINGULAR_METHOD_SPELLINGS = SINGULAR_METHODS + tuple(METHOD_ALIASES["singular_locus"])  # what the command accepts
