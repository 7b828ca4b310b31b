"""ragcli: local-first retrieval-augmented generation over your own notes."""

__version__ = "0.1.0"
