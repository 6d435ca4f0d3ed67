"""Correspondence play that calls the player back: who watches a game (presence), the
notices of a turn to a player who does not (a webhook and Web Push), the players' push
subscriptions and their vacations (deadlines that stand still)."""
