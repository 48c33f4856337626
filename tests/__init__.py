"""The suite mirrors the package: tests/<folder> tests lightning_cas/<folder> (core, results, system,
macaulay2, msolve, backends, geometry, batch, cli, torch_bridge). Four folders cut across the layers on
purpose: adversarial (hostile input at every door), oracle (independent computations that certificates are
checked against), docs (every example in docs/ runs as written) and bench (the benchmark harness)."""
