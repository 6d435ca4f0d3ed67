"""Errors the use cases raise, each with a stable code; the HTTP layer maps codes to statuses."""

from __future__ import annotations

from typing import Final

from domain.game.errors import Text, message

SERVICE_ERROR_CODES: Final[dict[str, str]] = {
    "game_not_found": "No game with this id (it may have expired).",
    "unauthorized": "A valid seat token is needed: Authorization: Bearer <token>.",
    "forbidden": "This token does not allow acting in this game.",
    "version_mismatch": "The game is no longer at the version named in If-Match.",
    "idempotency_key_reused": "This Idempotency-Key was used with another request.",
    "custom_deck_not_allowed": "This service does not accept an explicit deck.",
    "duplicate_player_id": "One player id cannot sit in two seats of a game.",
    "archived_game_not_found": "No archived game with this id.",
    "concurrent_update": "The game changed too often while this action was applied; retry.",
    "store_unavailable": "The game store cannot be reached; retry shortly.",
    "bots_busy": "The bots cannot move now (their workers are busy or restarting); nothing "
    "was changed: retry shortly.",
    # the lobby (service.lobby.use_cases)
    "invalid_table": "A seat needs a name, a bot, a player_id (reserved) or open: true.",
    "game_not_open": "The game is not open for players: it started, ended or was cancelled.",
    "game_not_started": "The game has not started: its table is waiting for players.",
    "game_over": "The game has ended (finished, aborted, abandoned or cancelled).",
    "game_not_reviewable": "Only a finished game is reviewed: this one is still being played, "
    "or it was aborted or abandoned.",
    "review_failed": "This game's review could not be computed. The failure is logged for "
    "the service's operators: asking again will not help until they put the review back.",
    "table_full": "Every open seat of this table is taken.",
    "seat_unavailable": "This seat is taken, reserved for another player, or a bot's.",
    "seat_not_found": "The game has no such seat.",
    "already_seated": "This player already has a seat at this table.",
    "invite_required": "This table is private: join it with its invite code.",
    "not_host": "Only the table's host or the platform may do this.",
    "not_your_seat": "Only the seat's player or the platform may do this.",
    "player_id_not_yours": "A player_id can only be claimed by a player JWT with that `sub`, "
    "or by the platform.",
    "no_players": "Nobody sits at the table: it cannot start.",
    "invalid_cursor": "This cursor was not handed out by this listing.",
    "too_many_open_tables": "This caller hosts as many open tables as it may; start or "
    "cancel one, or retry later.",
    "too_many_open_tournaments": "This organiser has as many tournaments not yet ended as it "
    "may; end one, or retry later.",
    "too_many_pending_reviews": "This caller waits for as many reviews as it may; retry once "
    "one of them is ready.",
    "too_many_reviews": "The service holds as many reviews waiting to be computed as it may; "
    "retry later.",
    # tournaments (service.tournaments.use_cases)
    "tournament_not_found": "No tournament with this id.",
    "not_organiser": "Only the tournament's organiser may do this.",
    "tournament_not_registering": "The tournament no longer takes registrations: it started or ended.",
    "tournament_not_running": "The tournament is not running.",
    "tournament_not_paused": "The tournament is not paused.",
    "tournament_over": "The tournament has ended (finished or stopped).",
    "tournament_full": "Every place of this tournament is taken.",
    "not_invited": "This tournament is by invitation, and this player is not invited.",
    "invalid_tournament": "The tournament's settings are not valid.",
    "game_embargoed": "This game's deal is still being played at another table of its "
    "tournament round: it can be read once every table of that deal has finished (its "
    "players follow their own game meanwhile).",
    # text a client sends (service.core.text)
    "invalid_text": "This text cannot be used: it must be visible, without control or "
    "formatting characters, and short enough.",
    # who is calling (service.entrypoints.api.identity)
    "authentication_required": "This needs the platform's API key (X-API-Key) or a player's "
    "JWT (Authorization: Bearer <jwt>).",
    "invalid_api_key": "The X-API-Key header does not hold a valid API key.",
    "invalid_token": "The bearer token is not a valid player JWT.",
    "conflicting_credentials": "Send either an API key (X-API-Key) or a player JWT "
    "(Authorization: Bearer <jwt>), not both.",
    "identity_unavailable": "The keys that verify player JWTs cannot be fetched; retry shortly.",
    # event streams (infra.watchers): refused before they start
    "too_many_streams": "This server holds as many event streams as it may; retry later.",
    "too_many_streams_from_client": "This client holds as many event streams as it may; close one or retry later.",
    # matchmaking (service.matchmaking.use_cases)
    "ticket_not_found": "No matchmaking ticket with this id.",
    "ticket_exists": "This player already holds a waiting ticket of this mode; cancel it first.",
    "ticket_already_matched": "The ticket is matched (or its table is being made): it cannot be cancelled.",
    "not_your_ticket": "Only the ticket's holder (its player, the platform, or the bearer of its ticket token) may do this.",
    "invalid_ticket": "The ticket's settings are not valid.",
    "too_many_tickets": "This caller holds as many waiting tickets as it may; cancel one, or retry later.",
    # correspondence (service.correspondence)
    "player_id_required": "This needs a player_id: name the player (the platform, or while the service runs open), or call with that player's JWT.",
    "push_endpoint_refused": "A push endpoint must be an https URL of a push service (http only on this machine, when the operator allows it).",
    "invalid_push_keys": "A push subscription's keys must be the browser's P-256 public key (p256dh, 65 bytes) and its 16-byte auth secret, in base64url.",
    "too_many_push_subscriptions": "This player holds as many push subscriptions as they may; delete one first.",
    "push_subscription_not_found": "This player has no push subscription with this id.",
    "vacation_allowance_spent": "This player's days off for this year are spent.",
    "party_too_large": "A table size this ticket accepts cannot seat its party.",
    # bulk pairings (service.bulk.use_cases)
    "bulk_pairing_not_found": "No bulk pairing with this id.",
    "platform_only": "Only the platform (its X-API-Key) may do this.",
    "invalid_bulk_pairing": "The bulk pairing is not valid.",
    "bulk_pairing_cancelled": "The bulk pairing was cancelled.",
    "too_many_bulk_pairings": "This caller has as many bulk pairings waiting for their start "
    "as it may; retry once one has started.",
}


class ServiceError(Exception):
    """A use case's refusal: `detail` is an English template formatted with the keyword
    `params`, as for `domain.game.errors.RuleError` (`text` keeps both for translation)."""

    retry_after: int | None = None  # seconds: when a retry may succeed (the Retry-After header)
    # more members of its problem document, beside its code (e.g. which table was refused)
    members: dict[str, object] | None = None

    def __init__(self, code: str, detail: str | Text | None = None, **params: object) -> None:
        if code not in SERVICE_ERROR_CODES:
            raise ValueError(f"unknown service error code {code!r}")
        self.code = code
        self.text = message(SERVICE_ERROR_CODES[code], detail, params)
        self.detail = str(self.text)
        super().__init__(f"{code}: {self.detail}")
