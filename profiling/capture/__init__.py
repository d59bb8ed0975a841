"""Attention variants and the torch.profiler runner (the only place torch is imported)."""
