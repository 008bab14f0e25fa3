"""Turning ranked candidates into what a caller reads: hits, their addresses, the token budget."""
