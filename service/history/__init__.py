"""What stays of a game once it ended: the archive's port and records (`archive`), archiving
(`archiving`, the job `archiver`), the reads (`reads`), ranking and ratings, and the
post-game reviews (`reviews`)."""
