"""What stays of a game once it ended: the archive's port and records (`archive`), archiving
(`archiving`, the job `archiver`), the reads (`reads`), the ratings, and the
post-game reviews (`reviews`)."""
