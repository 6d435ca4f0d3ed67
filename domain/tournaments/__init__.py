"""The tournament rules: entrants, pairing (Swiss, round robin), deals, and standings."""
