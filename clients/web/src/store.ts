/** What this browser remembers: its language, name, player id and the seats it holds. */
export interface HeldSeat {
  seat: number;
  token: string;
  host?: string | undefined;
  invite?: string | null | undefined;
  /** The tournament whose game this is (its results lead back to it). */
  tournament?: string | undefined;
}

function read<T>(key: string, fallback: T): T {
  try {
    const raw = localStorage.getItem(key);
    return raw === null ? fallback : (JSON.parse(raw) as T);
  } catch {
    return fallback;
  }
}

function write(key: string, value: unknown): void {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch {
    /* private mode or full storage: the page still works, it just forgets */
  }
}

export function heldSeats(): Record<string, HeldSeat> {
  return read<Record<string, HeldSeat>>("ten.seats", {});
}

export function heldSeat(gameId: string): HeldSeat | undefined {
  return heldSeats()[gameId];
}

export function holdSeat(gameId: string, seat: HeldSeat): void {
  const seats = heldSeats();
  seats[gameId] = seat;
  // keep the 50 newest games
  const ids = Object.keys(seats);
  for (const id of ids.slice(0, Math.max(0, ids.length - 50))) delete seats[id];
  write("ten.seats", seats);
}

export function savedName(): string {
  return read<string>("ten.name", "");
}

export function saveName(name: string): void {
  write("ten.name", name);
}

export function savedLanguage(): string | null {
  try {
    return localStorage.getItem("ten.lang");
  } catch {
    return null;
  }
}

export function saveLanguage(lang: string): void {
  try {
    localStorage.setItem("ten.lang", lang);
  } catch {
    /* not remembered, still switched */
  }
}

/** A player id for this browser (open services take any; it lets stats find your games). */
export function playerId(): string {
  let id = read<string>("ten.player", "");
  if (!/^web-[a-z0-9]{8,}$/.test(id)) {
    const bytes = crypto.getRandomValues(new Uint8Array(6));
    id = "web-" + Array.from(bytes, (b) => b.toString(36).padStart(2, "0")).join("").slice(0, 10);
    write("ten.player", id);
  }
  return id;
}

/** The pace the other seats' moves are shown at ("normal", "fast", "instant"). */
export function savedPace(): string | null {
  return read<string | null>("ten.pace", null);
}

export function savePace(pace: string): void {
  write("ten.pace", pace);
}

/** The player's own token (a JWT the platform signed): the tournaments' sign-in. */
export function savedPlayerToken(): string {
  return read<string>("ten.playerToken", "");
}

export function savePlayerToken(token: string): void {
  if (token) write("ten.playerToken", token);
  else {
    try {
      localStorage.removeItem("ten.playerToken");
    } catch {
      /* nothing kept anyway */
    }
  }
}

/** The player id a JWT names (its `sub`), read without checking it (the service checks it);
 * null when the text is no JWT. */
export function tokenSubject(token: string): string | null {
  const part = token.split(".")[1];
  if (!part || token.split(".").length !== 3) return null;
  try {
    const base64 = part.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(part.length / 4) * 4, "=");
    const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
    const claims = JSON.parse(new TextDecoder().decode(bytes)) as { sub?: unknown };
    return typeof claims.sub === "string" && claims.sub ? claims.sub : null;
  } catch {
    return null;
  }
}

/** A matchmaking ticket this browser waits on: kept, so a page opened again resumes the wait. */
export interface HeldTicket {
  id: string;
  mode: string;
  /** What reads and cancels it: the ticket's own token (open services) or the player's JWT. */
  token: string;
}

export function heldTicket(): HeldTicket | null {
  const ticket = read<HeldTicket | null>("ten.ticket", null);
  return ticket && typeof ticket.id === "string" && typeof ticket.token === "string" ? ticket : null;
}

export function holdTicket(ticket: HeldTicket | null): void {
  if (ticket) write("ten.ticket", ticket);
  else {
    try {
      localStorage.removeItem("ten.ticket");
    } catch {
      /* nothing kept anyway */
    }
  }
}

/** The push subscription this browser registered with the service (its id), if any. */
export function savedPushSubscription(): string {
  return read<string>("ten.push", "");
}

export function savePushSubscription(id: string): void {
  write("ten.push", id);
}
