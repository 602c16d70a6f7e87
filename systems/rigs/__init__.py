"""Rigs of the papers built as Assemblies (physics only; runners beside the others)."""
