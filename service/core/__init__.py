"""What every capability shares: the ports (`ports`), the unit of work (`unit_of_work`), the
records (`model`), errors, callers, idempotency, quotas, which games are ranked
(`ranking`), the text and number policies, cancellation, and the settings."""
