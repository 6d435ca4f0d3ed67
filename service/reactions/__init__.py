"""The reactions to a saved change: the relay that runs them (`relay`), the platform's
webhooks (`webhooks`), and the deadlines' poller (`deadlines`)."""
