/**
 * Matchmaking tickets as the service's contract has them (`/v1/matchmaking/tickets`): the
 * types are written here until the SDK's generated types name them.
 */
import { request } from "./api";

export type TicketMode = "live" | "correspondence";
export type TicketStatus = "waiting" | "matched" | "cancelled" | "expired";

export interface TicketIn {
  mode: TicketMode;
  sizes: number[];
  rated: boolean;
  name: string;
  player_id?: string | null;
}

export interface Ticket {
  id: string;
  status: TicketStatus;
  mode: TicketMode;
  sizes: number[];
  rated: boolean;
  player_id: string | null;
  created_at: string;
  expires_at: string;
  /** Seconds waited so far, when the answer was written. */
  waited: number;
  rating: number | null;
  window: { low: number; high: number } | null;
  game_id: string | null;
  seat: number | null;
  seat_token: string | null;
  /** On the create answer only, to a caller without a JWT or key. */
  ticket_token?: string | null;
}

export const SIZES = [2, 3, 4, 5] as const;

/** A status after which the ticket never changes. */
export function isFinal(status: TicketStatus): boolean {
  return status !== "waiting";
}

const path = (id: string) => `/v1/matchmaking/tickets/${encodeURIComponent(id)}`;

export function createTicket(body: TicketIn, token?: string): Promise<Ticket> {
  return request<Ticket>("POST", "/v1/matchmaking/tickets", { body, token, idempotencyKey: crypto.randomUUID() });
}

export function getTicket(id: string, token: string): Promise<Ticket> {
  return request<Ticket>("GET", path(id), { token });
}

export function cancelTicket(id: string, token: string): Promise<Ticket> {
  return request<Ticket>("DELETE", path(id), { token });
}

/** The ticket's event stream (`event: ticket`, its state at once and on every change). */
export function ticketStreamUrl(id: string): string {
  return `${path(id)}/events/stream`;
}
