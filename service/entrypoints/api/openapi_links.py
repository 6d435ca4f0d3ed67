"""The OpenAPI document's response links and request examples: links chain createGame ->
getGame -> act -> act ..., and createGame -> joinGame -> getGame / leaveGame /
reissueSeatToken, so that a client (and the stateful contract test) can play a game by
following them. `x-schemathesis.merge_body` tells Schemathesis to send a linked body as it
is; other tools ignore `x-` keys."""

from __future__ import annotations

from typing import Any

# a link's body taken as it is (not merged field by field into a generated one)
WHOLE_BODY = {"x-schemathesis": {"merge_body": False}}
GAME_ID = {"game_id": "$response.body#/id"}
SEAT0_TOKEN = {"header.Authorization": "Bearer {$response.body#/seats/0/token}"}
SAME_TOKEN = {"header.Authorization": "{$request.header.Authorization}"}
JOINED_TOKEN = {"header.Authorization": "Bearer {$response.body#/token}"}


def links_after_create() -> dict[str, Any]:
    return {
        "GetGame": {
            "operationId": "getGame",
            "parameters": GAME_ID,
            "description": "The game as everyone sees it.",
        },
        "GetGameAsSeat": {
            "operationId": "getGame",
            "parameters": {**GAME_ID, **SEAT0_TOKEN},
            "description": "The game with the legal actions of the first human seat.",
        },
        "Act": {
            "operationId": "act",
            "parameters": {**GAME_ID, **SEAT0_TOKEN},
            "requestBody": {"type": "draw"},
            "description": "Draw (every turn starts with a draw) as the first human seat, with "
            "its token from `seats`.",
            **WHOLE_BODY,
        },
        "ListEvents": {
            "operationId": "listEvents",
            "parameters": GAME_ID,
            "description": "The game's event log.",
        },
    }


REQUEST_EXAMPLES: dict[str, dict[str, Any]] = {
    "createGame": {
        "game": {
            "summary": "A game dealt at once: a human and a bot",
            "value": {"players": [{"name": "Ann"}, {"name": "Bo", "bot": "basic"}]},
        },
    },
    "joinGame": {
        "open": {"summary": "Take the first open seat", "value": {"name": "Bob"}},
        "invited": {
            "summary": "Join a private table",
            "value": {"name": "Cy", "invite": "the invite_code from createGame"},
        },
    },
}


def links_of_the_lobby() -> dict[str, Any]:
    """createGame -> joinGame (an open table) -> getGame / leaveGame / act with the seat's
    token; the host starts it (startGame) with its host token."""
    return {
        "JoinTable": {
            "operationId": "joinGame",
            "parameters": GAME_ID,
            "description": "Take a seat at the table just created (status `open`).",
        },
        "StartTable": {
            "operationId": "startGame",
            "parameters": {
                **GAME_ID,
                "header.Authorization": "Bearer {$response.body#/host_token}",
            },
            "description": "Start it now as its (anonymous) host: empty seats become bots.",
        },
    }


def links_after_join() -> dict[str, Any]:
    game_id = {"game_id": "$request.path.game_id"}
    return {
        "GetGameAsSeat": {
            "operationId": "getGame",
            "parameters": {**game_id, **JOINED_TOKEN},
            "description": "The table (or the game it started) with this seat's token.",
        },
        "LeaveTable": {
            "operationId": "leaveGame",
            "parameters": {**game_id, "seat": "$response.body#/seat", **JOINED_TOKEN},
            "description": "Give the seat back before the start.",
        },
        "ReissueToken": {
            "operationId": "reissueSeatToken",
            "parameters": {**game_id, "seat": "$response.body#/seat", **JOINED_TOKEN},
            "description": "A fresh token for this seat (the one just issued stops working).",
        },
    }


def links_after_read(op_id: str) -> dict[str, Any]:
    """From a game read with a seat token (getGame, act): play on with that token."""
    return {
        "PlayLegalAction": {
            "operationId": "act",
            "parameters": {**GAME_ID, **SAME_TOKEN, "header.If-Match": "$response.header.ETag"},
            "requestBody": "$response.body#/legal_actions/0",
            "description": "Post the first of the seat's legal actions, on the version just read.",
            **WHOLE_BODY,
        },
        **(
            {
                "GetGame": {
                    "operationId": "getGame",
                    "parameters": {**GAME_ID, **SAME_TOKEN},
                    "description": "The game after this action.",
                },
                "ListEvents": {
                    "operationId": "listEvents",
                    "parameters": GAME_ID,
                    "description": "The game's event log.",
                },
            }
            if op_id == "act"
            else {}
        ),
    }
