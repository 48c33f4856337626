"""CLI commands for batch (registered on lightning_cas.cli.main)."""
