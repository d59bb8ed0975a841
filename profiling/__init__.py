"""attn-tui's backend: trace loading, analysis and capture. No UI code lives here."""
