"""Games: acting on a game and reading it (`use_cases`), the commands a client sends
(`commands`), and the bots' moves computed off the event loop (`bot_work`)."""
