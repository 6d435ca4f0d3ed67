/** The lobby: create a table (you, open seats, bots, a clock), see open tables, resume games. */
import type { components, CreateGameIn } from "@ten/client";
import { api, describeError } from "../api";
import { h, show, shown } from "../dom";
import { list, t, tn } from "../i18n";
import { BOT_LEVELS, seatName, type BotLevel } from "../table";
import { heldSeats, holdSeat, playerId, savedName, saveName } from "../store";
import { notifyPanel } from "./notify";
import { playPanel } from "./play";
import { vacationPanel } from "./vacation";

let mode: "open" | "verified" | "unknown" = "unknown";

/** How the service identifies players: on an open service the page names its own player id. */
export function authMode(): typeof mode {
  return mode;
}

async function loadMode(): Promise<void> {
  if (mode !== "unknown") return;
  try {
    mode = (await api.getInfo()).auth.mode;
  } catch {
    /* stays unknown: the page then sends no player id */
  }
}

type SeatChoice = "open" | BotLevel;

type ClockChoice = "none" | "bank" | "deadline";

function tableBody(name: string, count: number, seats: SeatChoice[], clock: ClockChoice, isPrivate: boolean): CreateGameIn {
  const me: components["schemas"]["PlayerIn"] = { name, ...(mode === "open" ? { player_id: playerId() } : {}) };
  const others = seats.slice(0, count - 1).map((choice, i): components["schemas"]["PlayerIn"] =>
    choice === "open" ? { open: true } : { name: `Bot ${i + 2}`, bot: choice },
  );
  const body: CreateGameIn = { players: [me, ...others], private: isPrivate };
  if (clock === "bank") body.clock = { type: "bank", initial_seconds: 300, increment_seconds: 10 };
  if (clock === "deadline") body.clock = { type: "deadline", hours: 24 };
  return body;
}

/** Creates a game or table whose seat 0 is this browser's, holds that seat and opens it. */
export async function createTable(body: CreateGameIn): Promise<void> {
  const created = await api.createGame(body, { idempotencyKey: crypto.randomUUID() });
  const token = "tokens" in created ? created.tokens[0]?.token : created.seats[0]?.token;
  if (token) {
    holdSeat(created.id, {
      seat: 0,
      token,
      host: "host_token" in created ? created.host_token ?? undefined : undefined,
      invite: "invite_code" in created ? created.invite_code : null,
    });
  }
  location.hash = `#/game/${encodeURIComponent(created.id)}`;
}

/**
 * A new table with the seats of a finished game: this browser's player in seat 0, the bots
 * again (same level, same name), an open seat for each other person (who joins by the invite).
 */
export function againBody(players: readonly { seat: number; name: string; bot?: string | null; stand_in?: string | null }[], mine: number): CreateGameIn {
  const me = players.find((p) => p.seat === mine);
  const seat = (p: (typeof players)[number]): components["schemas"]["PlayerIn"] => {
    const level = p.bot && !p.stand_in ? BOT_LEVELS.find((l) => l === p.bot) : undefined;
    return level ? { name: p.name, bot: level } : { open: true };
  };
  return {
    players: [
      { name: me?.name ?? savedName(), ...(mode === "open" ? { player_id: playerId() } : {}) },
      ...players.filter((p) => p.seat !== mine).map(seat),
    ],
  };
}

function createForm(onError: (message: string) => void): HTMLFormElement {
  const name = h("input", { id: "create-name", required: true, maxlength: 40, autocomplete: "nickname", value: savedName() });
  const players = h(
    "select",
    { id: "create-players" },
    [1, 2, 3, 4, 5].map((n) => h("option", { value: String(n), selected: n === 4 }, String(n))),
  );
  const seatSelects = [1, 2, 3, 4].map((i) =>
    h(
      "select",
      { id: `create-seat-${i}` },
      (["basic", "expert", "master", "open", "random"] as const).map((v) => h("option", { value: v }, t(`lobby.seat.${v}`))),
    ),
  );
  const seatRows = seatSelects.map((select, i) =>
    h("div", { class: "field seat-row", "data-seat": i + 1 }, h("label", { for: select.id }, t("lobby.seat", { n: i + 2 })), select),
  );
  const syncSeats = () => seatRows.forEach((row, i) => (row.hidden = i + 1 >= Number(players.value)));
  players.addEventListener("change", syncSeats);
  syncSeats();
  const clock = h(
    "select",
    { id: "create-clock" },
    (["none", "bank", "deadline"] as const).map((v) => h("option", { value: v }, t(`lobby.clock.${v}`))),
  );
  const isPrivate = h("input", { id: "create-private", type: "checkbox" });
  const form = h(
    "form",
    {
      id: "create-table",
      class: "panel",
      onsubmit: async (event: Event) => {
        event.preventDefault();
        const who = name.value.trim();
        saveName(who);
        const body = tableBody(
          who,
          Number(players.value),
          seatSelects.map((s) => s.value as SeatChoice),
          clock.value as ClockChoice,
          isPrivate.checked,
        );
        try {
          await createTable(body);
        } catch (error) {
          onError(describeError(error));
        }
      },
    },
    h("h2", null, t("lobby.create")),
    h("div", { class: "field" }, h("label", { for: "create-name" }, t("lobby.name")), name),
    h("div", { class: "field" }, h("label", { for: "create-players" }, t("lobby.players")), players),
    h("p", { class: "small muted" }, t("lobby.seat", { n: 1 }), ": ", t("lobby.seat.you")),
    seatRows,
    h("div", { class: "field" }, h("label", { for: "create-clock" }, t("lobby.clock")), clock),
    h("div", { class: "field check" }, isPrivate, h("label", { for: "create-private" }, t("lobby.private"))),
    h("button", { type: "submit", id: "create-submit", class: "primary" }, t("lobby.submit")),
  );
  return form;
}

function openTablesEl(page: components["schemas"]["GamesPage"] | null): HTMLElement {
  const tables = (page?.games ?? []).filter((g) => g.status === "open");
  return h(
    "section",
    { class: "panel" },
    h("h2", null, t("lobby.open")),
    tables.length
      ? h(
          "ul",
          { class: "plain", "data-testid": "open-tables" },
          tables.map((g) => {
            const taken = g.seats.filter((s) => s.taken).length;
            return h(
              "li",
              { "data-testid": "open-table", "data-game-id": g.id },
              list(g.seats.filter((s) => s.taken && s.name).map(seatName)) || g.id,
              " · ",
              tn("lobby.open.seats", g.seats.length, { taken, total: g.seats.length }),
              " ",
              h("a", { href: `#/join/${encodeURIComponent(g.id)}`, class: "button" }, t("lobby.join")),
            );
          }),
        )
      : h("p", { class: "muted", "data-testid": "open-tables" }, t("lobby.open.none")),
  );
}

type Held = Awaited<ReturnType<typeof api.getGame>>["game"];
const MY_GAMES = 8;

/** This browser's newest seats, each game read with its seat's token (null: it is gone). */
async function loadMyGames(): Promise<[string, Held | null][]> {
  const seats = heldSeats();
  const ids = Object.keys(seats).reverse().slice(0, MY_GAMES);
  const games = await Promise.all(
    ids.map(async (id): Promise<[string, Held | null]> => {
      try {
        return [id, (await api.getGame(id, { token: seats[id]?.token ?? "" })).game];
      } catch {
        return [id, null];
      }
    }),
  );
  // the games waiting on this browser's move first (as the service lists a player's games),
  // each group newest first
  return [...games.filter(([, g]) => yourTurn(g)), ...games.filter(([, g]) => !yourTurn(g))];
}

/** The game is in play and its seat to act is the one this browser holds. */
function yourTurn(game: Held | null): boolean {
  return !!game && game.status === "active" && "to_act" in game && game.to_act !== null && game.to_act === game.seat;
}

function myGameStatus(game: Held): string {
  if (yourTurn(game)) return t("lobby.mine.turn");
  if (game.status === "open") return t("lobby.mine.open");
  if (game.status === "cancelled") return t("lobby.mine.cancelled");
  if (game.status === "active") return t("lobby.mine.active");
  return t(`archive.status.${game.status}`);
}

function myGamesEl(games: [string, Held | null][]): HTMLElement | null {
  if (!games.length) return null;
  return h(
    "section",
    { class: "panel" },
    h("h2", null, t("lobby.mine")),
    h(
      "ul",
      { class: "plain", "data-testid": "my-games" },
      games.map(([id, game]) => {
        // an ended game is not resumed: its link opens the results
        const ended = game?.status === "finished" || game?.status === "aborted" || game?.status === "abandoned";
        const link = h("a", { href: `#/game/${encodeURIComponent(id)}` }, t(ended ? "results.heading" : "lobby.resume"));
        if (!game) return h("li", { "data-game-id": id }, link, " ", h("code", null, id), " · ", t("lobby.mine.gone"));
        const seats: { name?: string | null; bot?: string | null; taken?: boolean }[] = "players" in game ? game.players : game.seats;
        const names = seats.filter((s) => s.taken !== false && s.name).map(seatName);
        return h(
          "li",
          { "data-game-id": id, "data-status": game.status, "data-your-turn": yourTurn(game) ? "1" : "0" },
          link,
          " ",
          h("strong", null, list(names)),
          " · ",
          tn("n.player", seats.length),
          " · ",
          myGameStatus(game),
        );
      }),
    ),
  );
}

export async function lobbyScreen(root: HTMLElement): Promise<() => void> {
  await loadMode();
  let page: components["schemas"]["GamesPage"] | null = null;
  let mine: [string, Held | null][] = [];
  const errorEl = h("p", { role: "alert", class: "error" });
  const play = playPanel();
  const vacation = vacationPanel();
  const draw = () => {
    show(
      root,
      h("h1", null, t("lobby.heading")),
      h("p", { class: "muted" }, t("app.tagline")),
      mode === "verified" ? h("p", { class: "notice" }, t("lobby.verified")) : null,
      errorEl,
      h(
        "div",
        { class: "layout" },
        h("div", { class: "col-main" }, play.el, createForm((m) => (errorEl.textContent = m))),
        h("div", { class: "col-side" }, openTablesEl(page), myGamesEl(mine), notifyPanel(), vacation.el),
      ),
    );
    shown(root, "lobby");
  };
  const load = async () => {
    try {
      page = await api.listGames({ limit: 20 });
    } catch (error) {
      errorEl.textContent = describeError(error);
    }
  };
  [mine] = await Promise.all([loadMyGames(), load()]);
  draw();
  const timer = window.setInterval(async () => {
    await load();
    const list = root.querySelector("[data-testid=open-tables]")?.closest("section");
    if (list) list.replaceWith(openTablesEl(page));
  }, 5000);
  return () => {
    window.clearInterval(timer);
    play.stop();
    vacation.stop();
  };
}
