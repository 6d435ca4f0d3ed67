/**
 * The words of a "your turn" notification, shared by the page and the service worker. The
 * worker cannot read the page's language (localStorage is the page's alone), so the page
 * keeps the texts of its language in the origin's Cache storage, which both can read; the
 * worker fills in the game's deadline. The push message itself carries no text.
 */
export interface TurnWords {
  lang: string;
  title: string;
  body: string;
  /** With `{deadline}`: the body of a game whose move has a deadline. */
  deadline: string;
}

const CACHE = "ten-push-words";
const KEY = "/sw/words";

export async function keepWords(words: TurnWords): Promise<void> {
  const cache = await caches.open(CACHE);
  await cache.put(KEY, new Response(JSON.stringify(words), { headers: { "Content-Type": "application/json" } }));
}

/** The kept words, or null (none kept, or no Cache storage). */
export async function keptWords(): Promise<TurnWords | null> {
  try {
    const kept = await (await caches.open(CACHE)).match(KEY);
    const words = kept ? ((await kept.json()) as Partial<TurnWords>) : null;
    if (!words) return null;
    const { lang, title, body, deadline } = words;
    return typeof lang === "string" && typeof title === "string" && typeof body === "string" && typeof deadline === "string"
      ? { lang, title, body, deadline }
      : null;
  } catch {
    return null;
  }
}

/** A "your turn" push message as the service sends it (the fields the worker uses). */
export interface YourTurn {
  type: "your_turn";
  game_id: string;
  seat: number;
  deadline: string | null;
  url: string;
}

export function yourTurn(payload: unknown): YourTurn | null {
  if (!payload || typeof payload !== "object") return null;
  const p = payload as Record<string, unknown>;
  if (p.type !== "your_turn" || typeof p.game_id !== "string" || !p.game_id) return null;
  return {
    type: "your_turn",
    game_id: p.game_id,
    seat: typeof p.seat === "number" ? p.seat : 0,
    deadline: typeof p.deadline === "string" ? p.deadline : null,
    url: typeof p.url === "string" ? p.url : "",
  };
}

/** What a window of the client is told to open: a route of its own (`#/...`). */
export interface OpenRoute {
  type: "ten.open";
  hash: string;
}
