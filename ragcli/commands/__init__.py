"""CLI commands, one module per area; importing a module registers its commands."""
