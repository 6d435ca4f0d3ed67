/**
 * "Notify me when it's my turn": this browser's push subscription, registered with the
 * service (`/v1/push/...`, types written here until the SDK's generated types name them),
 * and the service worker (`sw.ts`) that shows the messages in the page's language.
 */
import { request } from "./api";
import { t } from "./i18n";
import { keepWords, type OpenRoute } from "./push-words";
import { playerId, savedPlayerToken, savedPushSubscription, savePushSubscription } from "./store";

export const WORKER = "/sw.js";

interface PushSubscriptionOut {
  id: string;
  player_id: string;
  endpoint: string;
  created_at: string;
}

export function pushSupported(): boolean {
  return "serviceWorker" in navigator && "PushManager" in window && "Notification" in window && "caches" in window;
}

/** The subscription is registered with the service (as far as this browser knows). */
export function notifying(): boolean {
  return !!savedPushSubscription();
}

/** The current language's words kept for the worker (when notifications are on). */
export async function keepTurnWords(): Promise<void> {
  if (!notifying() || !pushSupported()) return;
  try {
    await keepWords({
      lang: document.documentElement.lang || "en",
      title: t("push.turn.title"),
      body: t("push.turn.body"),
      deadline: t("push.turn.deadline"),
    });
  } catch {
    /* the worker falls back to English */
  }
}

/** base64url (the service's application server key) to its bytes. */
function bytes(base64url: string): Uint8Array<ArrayBuffer> {
  const base64 = base64url.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(base64url.length / 4) * 4, "=");
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
}

/**
 * Asks for permission, registers the worker, subscribes and registers the subscription with
 * the service; `open`: the service takes the player id the page names. "denied": the
 * browser (or the player) refused notifications.
 */
export async function startNotifying(open: boolean): Promise<"on" | "denied"> {
  const permission = await Notification.requestPermission();
  if (permission !== "granted") return "denied";
  await navigator.serviceWorker.register(WORKER, { scope: "/" });
  const registration = await navigator.serviceWorker.ready;
  const { public_key } = await request<{ public_key: string }>("GET", "/v1/push/key");
  const subscription =
    (await registration.pushManager.getSubscription()) ??
    (await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: bytes(public_key) }));
  const { endpoint, keys } = subscription.toJSON();
  const jwt = savedPlayerToken();
  const created = await request<PushSubscriptionOut>("POST", "/v1/push/subscriptions", {
    body: { endpoint, keys: { p256dh: keys?.p256dh ?? "", auth: keys?.auth ?? "" }, ...(open && !jwt ? { player_id: playerId() } : {}) },
    token: jwt || undefined,
    idempotencyKey: crypto.randomUUID(),
  });
  savePushSubscription(created.id);
  await keepTurnWords();
  return "on";
}

/** The subscription removed from the service and from the browser; `open`: as in `startNotifying`. */
export async function stopNotifying(open: boolean): Promise<void> {
  const id = savedPushSubscription();
  const jwt = savedPlayerToken();
  const whose = open && !jwt ? `?player_id=${encodeURIComponent(playerId())}` : "";
  if (id) await request<void>("DELETE", `/v1/push/subscriptions/${encodeURIComponent(id)}${whose}`, { token: jwt || undefined });
  savePushSubscription("");
  const registration = await navigator.serviceWorker.getRegistration("/");
  await (await registration?.pushManager.getSubscription())?.unsubscribe();
}

/** A click on a notification, with a window of the client open: that window opens the game. */
export function followWorker(): void {
  if (!("serviceWorker" in navigator)) return;
  navigator.serviceWorker.addEventListener("message", (event: MessageEvent<Partial<OpenRoute> | null>) => {
    const hash = event.data?.type === "ten.open" ? event.data.hash : undefined;
    if (typeof hash === "string" && hash.startsWith("#/")) location.hash = hash;
  });
}
