"""The size limits of a network, in one table: what every reader validates against before any work.

They keep every method's memory finite (far above what a backend can finish) and every derived number
printable. The paper's flags and a network of blocks share them.
"""

# any width, attention, value or hidden dimension: a bound that keeps every derived number printable, not a
# statement of what a route can afford; each route refuses by its own estimate of memory before any work
MAX_WIDTH = 1 << 20
MAX_TOKENS = 64
MAX_HEADS = 64
MAX_LAYERS = 8  # of the paper's network (--widths/--attention)
MAX_BLOCKS = 32  # of a network of blocks
MAX_DEGREE = 16  # of one mlp or power block
MAX_NETWORK_DEGREE = 3**8  # of the whole network in the tokens (eight attention layers)
MAX_NETWORK_BYTES = 1024 * 1024  # a network file
