/**
 * The web client's service worker (served at `/sw.js`, scope `/`): it shows the service's
 * "your turn" push messages in the page's language (`push-words.ts`; English until the page
 * kept its words) and a click on one brings the game up: an open window of the client is
 * focused and told to open it, else a new one opens at the message's URL. It handles no
 * fetch: the page loads as it would without it.
 */
/// <reference lib="webworker" />
import { en } from "./i18n/en";
import { moment } from "./i18n/moments";
import { keptWords, yourTurn, type OpenRoute, type TurnWords } from "./push-words";

declare const self: ServiceWorkerGlobalScope;

const ENGLISH: TurnWords = { lang: "en", title: en["push.turn.title"], body: en["push.turn.body"], deadline: en["push.turn.deadline"] };

/** The game's URL on this origin: the message's, unless it points elsewhere. */
function gameUrl(url: string, gameId: string): string {
  const fallback = new URL(`/app/#/games/${encodeURIComponent(gameId)}`, self.location.origin);
  try {
    const target = new URL(url, self.location.origin);
    return target.origin === self.location.origin ? target.href : fallback.href;
  } catch {
    return fallback.href;
  }
}

async function showTurn(data: PushMessageData | null): Promise<void> {
  let payload: unknown = null;
  try {
    payload = data?.json();
  } catch {
    /* not JSON: not ours */
  }
  const turn = yourTurn(payload);
  if (!turn) return;
  const words = (await keptWords()) ?? ENGLISH;
  const body = turn.deadline ? words.deadline.replace("{deadline}", moment(words.lang, turn.deadline)) : words.body;
  await self.registration.showNotification(words.title, {
    body,
    lang: words.lang,
    tag: `turn-${turn.game_id}`, // one notice per game: a newer one replaces it
    data: { url: gameUrl(turn.url, turn.game_id), game_id: turn.game_id },
  });
}

async function openGame(url: string): Promise<void> {
  const target = new URL(url, self.location.origin);
  const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  const open = windows.find((w) => new URL(w.url).origin === target.origin);
  if (open) {
    const message: OpenRoute = { type: "ten.open", hash: target.hash || "#/" };
    open.postMessage(message);
    await open.focus();
    return;
  }
  await self.clients.openWindow(target.href);
}

self.addEventListener("install", () => void self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));
self.addEventListener("push", (event) => event.waitUntil(showTurn(event.data)));
self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const url = (event.notification.data as { url?: unknown } | null)?.url;
  if (typeof url === "string") event.waitUntil(openGame(url));
});
