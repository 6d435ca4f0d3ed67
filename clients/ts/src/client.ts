/**
 * A small typed SDK for the TEN game service, over openapi-fetch.
 *
 * Every path, parameter, body and response type comes from `schema.d.ts`, which is generated
 * from the committed `openapi/openapi.json` (`npm run generate`): when the contract changes
 * and this file does not follow, `npm run check` fails.
 */
import createClient, { type Client, type Middleware } from "openapi-fetch";
import type { components, operations, paths } from "./schema";

export type { components, operations, paths };

type Schemas = components["schemas"];

/** A body of `act`: the union of every action, told apart by `type`. */
export type Action = operations["act"]["requestBody"]["content"]["application/json"];
export type ActionType = Action["type"];
export type CreateGameIn = Schemas["CreateGameIn"];
export type CreatedGame = Schemas["CreatedGameOut"] | Schemas["CreatedTableOut"];
export type Game = Schemas["GameOut"];
export type Table = Schemas["TableOut"];
export type ActedOut = Schemas["ActedOut"];
export type GamesPage = Schemas["GamesPage"];
export type JoinIn = Schemas["JoinIn"];
export type Joined = Schemas["JoinedOut"];
export type EventsPage = Schemas["EventsOut"];
export type Problem = Schemas["Problem"];
export type Rules = Schemas["RulesOut"];
export type Info = Schemas["InfoOut"];
export type ArchivedGamesPage = Schemas["ArchivedGamesPage"];
export type ArchivedGame = Schemas["ArchivedGame"];
export type Replay = Schemas["ReplayOut"];
export type PlayerStats = Schemas["PlayerStats"];
export type Leaderboard = Schemas["LeaderboardOut"];
export type Odds = Schemas["OddsOut"];
export type RatingHistory = Schemas["RatingHistoryOut"];
export type Review = Schemas["ReviewOut"];
export type ReviewPending = Schemas["ReviewPending"];

/** An error answer of the service: its status and its `application/problem+json` body. */
export class TenApiError extends Error {
  readonly status: number;
  readonly problem: Problem | undefined;

  constructor(response: Response, problem: Problem | undefined) {
    super(
      problem
        ? `${response.status} ${problem.code}: ${problem.detail}`
        : `${response.status} ${response.statusText}`,
    );
    this.name = "TenApiError";
    this.status = response.status;
    this.problem = problem;
  }

  /** The machine-readable `code` (stable, unlike `title`/`detail`, which are translated). */
  get code(): string | undefined {
    return this.problem?.code;
  }
}

export interface TenClientOptions {
  /** The service's origin, e.g. `http://localhost:8000`; `""` (the default) is same-origin. */
  baseUrl?: string;
  /**
   * The default bearer credential (a seat token or a player JWT), sent as
   * `Authorization: Bearer <token>` unless a call passes its own. A function is read at each
   * request, so a token kept in storage can change without a new client.
   */
  token?: string | (() => string | null | undefined);
  /** The platform's API key (`X-API-Key`); server to server only, never in a browser. */
  apiKey?: string;
  /** `Accept-Language` for the problem `title`/`detail` texts (a function is read at each request). */
  language?: string | (() => string);
  /** A `fetch` to use instead of the global one (tests, Node polyfills). */
  fetch?: (input: Request) => Promise<Response>;
}

/** Per-call options: a token for this call only, and an idempotency key for retries. */
export interface CallOptions {
  token?: string;
  idempotencyKey?: string;
}

export function bearer(token: string): string {
  return `Bearer ${token}`;
}

/** The game version an ETag names (`"7"` gives 7), for `If-Match` on the next action. */
export function versionOf(etag: string | null): number | undefined {
  const match = etag?.match(/^(?:W\/)?"?(\d+)"?$/);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

function authHeaders(token: string | undefined): Record<string, string> {
  return token === undefined ? {} : { Authorization: bearer(token) };
}

function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data === undefined) {
    throw new TenApiError(result.response, result.error as Problem | undefined);
  }
  return result.data;
}

export type TenClient = ReturnType<typeof createTenClient>;

export function createTenClient(options: TenClientOptions = {}) {
  const raw: Client<paths> = createClient<paths>({
    baseUrl: options.baseUrl ?? "",
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });

  const credentials: Middleware = {
    onRequest({ request }) {
      const token = typeof options.token === "function" ? options.token() : options.token;
      if (token && !request.headers.has("Authorization")) {
        request.headers.set("Authorization", bearer(token));
      }
      if (options.apiKey && !request.headers.has("X-API-Key")) {
        request.headers.set("X-API-Key", options.apiKey);
      }
      const language =
        typeof options.language === "function" ? options.language() : options.language;
      if (language && !request.headers.has("Accept-Language")) {
        request.headers.set("Accept-Language", language);
      }
      return request;
    },
  };
  raw.use(credentials);

  /** The token of this call, else the client's: `act` needs one. */
  function tokenFor(call: CallOptions): string {
    const token =
      call.token ?? (typeof options.token === "function" ? options.token() : options.token);
    if (!token) {
      throw new Error("this call needs a seat token or a player JWT (token)");
    }
    return token;
  }

  return {
    /** The openapi-fetch client itself, for the operations without a helper here. */
    raw,

    /** Create a game (every seat filled) or an open table (some seat `open` or reserved). */
    async createGame(body: CreateGameIn, call: CallOptions = {}): Promise<CreatedGame> {
      return unwrap(
        await raw.POST("/v1/games", {
          body,
          params: {
            header: call.idempotencyKey ? { "Idempotency-Key": call.idempotencyKey } : {},
          },
          headers: authHeaders(call.token),
        }),
      );
    },

    /** A game as the token's seat sees it (or the public view without one); with its ETag. */
    async getGame(
      gameId: string,
      call: CallOptions = {},
    ): Promise<{ game: Game | Table; etag: string | null }> {
      const result = await raw.GET("/v1/games/{game_id}", {
        params: {
          path: { game_id: gameId },
          header: call.token ? { Authorization: bearer(call.token) } : {},
        },
      });
      return { game: unwrap(result), etag: result.response.headers.get("ETag") };
    },

    /**
     * Play one action as the token's seat. `ifMatch` is the version the action was chosen on
     * (412 if the game moved on).
     */
    async act(
      gameId: string,
      action: Action,
      call: CallOptions & { ifMatch?: number | "*" } = {},
    ): Promise<{ result: ActedOut; etag: string | null }> {
      const result = await raw.POST("/v1/games/{game_id}/actions", {
        params: {
          path: { game_id: gameId },
          header: {
            Authorization: bearer(tokenFor(call)),
            ...(call.ifMatch === undefined
              ? {}
              : { "If-Match": call.ifMatch === "*" ? "*" : `"${call.ifMatch}"` }),
            ...(call.idempotencyKey ? { "Idempotency-Key": call.idempotencyKey } : {}),
          },
        },
        body: action,
      });
      return { result: unwrap(result), etag: result.response.headers.get("ETag") };
    },

    /** The games of a player (with a player JWT) or, for a platform, of `player_id`. */
    async listGames(
      query: operations["listGames"]["parameters"]["query"] = {},
      call: CallOptions = {},
    ): Promise<GamesPage> {
      return unwrap(
        await raw.GET("/v1/games", { params: { query }, headers: authHeaders(call.token) }),
      );
    },

    /** Take a seat at an open table (`invite` for a private one); the seat's token returns. */
    async joinGame(gameId: string, body: JoinIn = {}, call: CallOptions = {}): Promise<Joined> {
      return unwrap(
        await raw.POST("/v1/games/{game_id}/seats", {
          params: {
            path: { game_id: gameId },
            header: call.idempotencyKey ? { "Idempotency-Key": call.idempotencyKey } : {},
          },
          body,
          headers: authHeaders(call.token),
        }),
      );
    },

    /** Leave an open table's seat (the host or the seat's own token). */
    async leaveGame(gameId: string, seat: number, call: CallOptions = {}) {
      return unwrap(
        await raw.DELETE("/v1/games/{game_id}/seats/{seat}", {
          params: { path: { game_id: gameId, seat } },
          headers: authHeaders(call.token),
        }),
      );
    },

    /** Start an open table now (the host), filling the open seats as it says. */
    async startGame(gameId: string, call: CallOptions = {}) {
      return unwrap(
        await raw.POST("/v1/games/{game_id}/start", {
          params: { path: { game_id: gameId } },
          headers: authHeaders(call.token),
        }),
      );
    },

    /** The public event log after `after` (a sequence number). */
    async listEvents(
      gameId: string,
      query: operations["listEvents"]["parameters"]["query"] = {},
    ): Promise<EventsPage> {
      return unwrap(
        await raw.GET("/v1/games/{game_id}/events", {
          params: { path: { game_id: gameId }, query },
        }),
      );
    },

    /** The URL of the game's server-sent event stream, for an `EventSource`. */
    eventStreamUrl(gameId: string, after?: number): string {
      const base = `${options.baseUrl ?? ""}/v1/games/${encodeURIComponent(gameId)}/events/stream`;
      return after === undefined ? base : `${base}?after=${after}`;
    },

    /** The odds of the next card for the seat to act in the draw phase (`odds` null else). */
    async getOdds(gameId: string): Promise<Odds> {
      return unwrap(
        await raw.GET("/v1/games/{game_id}/odds", { params: { path: { game_id: gameId } } }),
      );
    },

    /** The rules and their options. */
    async getRules(): Promise<Rules> {
      return unwrap(await raw.GET("/v1/rules"));
    },

    /** What this service is and how it identifies callers (`auth.mode`: open or verified). */
    async getInfo(): Promise<Info> {
      return unwrap(await raw.GET("/v1/info"));
    },

    /** Archived games, newest first (`cursor` pages on). */
    async listArchivedGames(
      query: operations["listArchivedGames"]["parameters"]["query"] = {},
    ): Promise<ArchivedGamesPage> {
      return unwrap(await raw.GET("/v1/archive/games", { params: { query } }));
    },

    /** One archived game: seats, results and the deck it was dealt. */
    async getArchivedGame(gameId: string): Promise<ArchivedGame> {
      return unwrap(
        await raw.GET("/v1/archive/games/{game_id}", { params: { path: { game_id: gameId } } }),
      );
    },

    /**
     * A finished game's review (every decision valued, accuracy, skill and luck per seat).
     * While the service computes it (202), `pending` with the seconds to wait before asking
     * again; a live game is refused (409 `game_not_reviewable`), and a review the service
     * failed to compute for good throws a `TenApiError` with `problem.code` `review_failed`
     * (500, no Retry-After: stop asking until an operator requeues it).
     */
    async getReview(
      gameId: string,
    ): Promise<{ pending: false; review: Review } | { pending: true; retryAfter: number }> {
      const result = await raw.GET("/v1/games/{game_id}/review", {
        params: { path: { game_id: gameId } },
      });
      const data = unwrap(result);
      if (result.response.status === 202) {
        const pending = data as ReviewPending;
        const header = Number(result.response.headers.get("Retry-After"));
        return { pending: true, retryAfter: header > 0 ? header : pending.retry_after };
      }
      return { pending: false, review: data as Review };
    },

    /** Public states of an archived game from `from_version` (`next_version` pages on). */
    async replay(
      gameId: string,
      query: operations["replayArchivedGame"]["parameters"]["query"] = {},
    ): Promise<Replay> {
      return unwrap(
        await raw.GET("/v1/archive/games/{game_id}/replay", {
          params: { path: { game_id: gameId }, query },
        }),
      );
    },

    /** A player's figures over their archived games. */
    async playerStats(
      playerId: string,
      query: operations["getPlayerStats"]["parameters"]["query"] = {},
    ): Promise<PlayerStats> {
      return unwrap(
        await raw.GET("/v1/players/{player_id}/stats", {
          params: { path: { player_id: playerId }, query },
        }),
      );
    },

    /** How a player's rating moved, game by game, newest first (`before` pages on). */
    async ratingHistory(
      playerId: string,
      query: operations["getRatingHistory"]["parameters"]["query"] = {},
    ): Promise<RatingHistory> {
      return unwrap(
        await raw.GET("/v1/players/{player_id}/ratings", {
          params: { path: { player_id: playerId }, query },
        }),
      );
    },

    /** The leaderboard. */
    async leaderboard(
      query: operations["getLeaderboard"]["parameters"]["query"] = {},
    ): Promise<Leaderboard> {
      return unwrap(await raw.GET("/v1/leaderboard", { params: { query } }));
    },
  };
}
