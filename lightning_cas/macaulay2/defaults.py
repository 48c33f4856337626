"""The limits every Macaulay2 run starts from, apart from the runner so that a connection (and a
command that never runs Macaulay2) can name them without loading the process machinery."""

DEFAULT_TIMEOUT = 600.0
DEFAULT_HEAP = "8G"
