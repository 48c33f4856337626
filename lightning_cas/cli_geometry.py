"""CLI commands for geometry (registered on lightning_cas.cli.main)."""
