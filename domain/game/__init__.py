"""The game: its records (`model`, `cards`), its rules (`engine`: decide and evolve; `legal`,
`payments`, `scoring`, `results`), what a player may see (`views`), the replay from the
public log (`replay`), and the seeded shuffle (`rng`)."""
