"""Many architectures at once: sweep specs, the locked result store, executors (process pool, Dask),
reports and notebooks built from a results directory."""
