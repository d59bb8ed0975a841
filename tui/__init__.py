"""attn-tui's front end: the command line and the Textual app. Never imports torch."""
