"""CLI commands for fiber (registered on lightning_cas.cli.main)."""
