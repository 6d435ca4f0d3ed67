"""The players the service supplies and the analysis they share: the bot levels (`basic`:
random and basic, and the registry; `expert`, `master`), exact odds (`odds`), the win model
(`winning`, `win_table`), the post-game review (`review`), a seat played by its bot after
a timeout (`clock`), and whole games played by bots (`simulation`)."""
