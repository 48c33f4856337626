"""The plumbing that touches the system: reading and writing files (bounded, atomic, private
directories), weight and input arrays, the one time limit, the progress channel and the built-in
examples. The mathematics in ``core`` imports none of it; everything above ``core`` may."""
