/**
 * Tournaments: the list (`#/tournaments`) and one tournament's page (`#/tournaments/<id>`):
 * its settings and status, registering and withdrawing (a player signed in with the JWT the
 * platform gave them), the standings (counted by results or luck-adjusted, ranked by points,
 * margin or strength, as its settings say), the player's table of the round and every round's
 * tables with their results. The page asks the service again every few seconds while the
 * tournament is not over (the service has no event stream of a tournament), and at once when
 * what it waits for is due: its start by itself (`starts_at`) or its next round
 * (`next_round_at`), counted down each second by the browser's clock.
 */
import { bearer, type components } from "@ten/client";
import { answered, api, describeError, failedScreen } from "../api";
import { h, show, shown, type Child } from "../dom";
import { list, num, signed, t, tn, when } from "../i18n";
import type { MessageKey } from "../i18n/en";
import { holdSeat, savedPlayerToken, savePlayerToken, tokenSubject } from "../store";
import { hms, isolated, seatName } from "../table";

type Tournament = components["schemas"]["TournamentOut"];
type Standing = components["schemas"]["StandingOut"];
type Round = components["schemas"]["RoundOut"];
type NextTable = components["schemas"]["NextTableOut"];
type TableResult = components["schemas"]["TableResultOut"];

/** How long the page waits before asking again: a tournament in play moves faster. */
const POLL_MS = { registering: 10_000, running: 5_000, paused: 10_000 } as const;

/** `#/tournaments`, `#/tournaments/<id>`; a platform may hand its player over signed in,
 * `#/tournaments/<id>?token=<jwt>`: the token is kept and taken out of the address at once
 * (in the `#` part, it never reached a server). */
export function tournamentsRoute(root: HTMLElement, params: URLSearchParams, _route: string, id = ""): Promise<(() => void) | void> {
  const handed = params.get("token");
  if (handed !== null) {
    if (tokenSubject(handed)) savePlayerToken(handed);
    history.replaceState(null, "", `#/tournaments${id ? `/${encodeURIComponent(id)}` : ""}`);
  }
  return id ? tournamentScreen(root, id) : tournamentsScreen(root, params);
}

function statusText(status: Tournament["status"]): string {
  return t(`tour.status.${status}`);
}

function summary(tour: Tournament): string {
  return t("tour.summary", {
    format: t(`tour.format.${tour.format}`),
    deals: t(`tour.deals.${tour.deal_mode}`),
    size: num(tour.table_size),
    rounds: tn("n.round", tour.rounds),
  });
}

export async function tournamentsScreen(root: HTMLElement, params: URLSearchParams): Promise<void> {
  let page;
  try {
    const cursor = params.get("cursor");
    page = answered(await api.raw.GET("/v1/tournaments", { params: { query: { limit: 20, ...(cursor ? { cursor } : {}) } } }));
  } catch (error) {
    return failedScreen(root, error, "tournaments");
  }
  const row = (tour: Tournament) =>
    h(
      "li",
      { "data-testid": "tournament-item", "data-tournament-id": tour.id, "data-status": tour.status },
      h("a", { href: `#/tournaments/${encodeURIComponent(tour.id)}` }, isolated(tour.name)),
      " · ",
      statusText(tour.status),
      " · ",
      summary(tour),
      " · ",
      h("time", { datetime: new Date(tour.created_at * 1000).toISOString() }, t("tour.created", { date: when(new Date(tour.created_at * 1000).toISOString()) })),
    );
  show(
    root,
    h("h1", null, t("tour.heading")),
    page.tournaments.length
      ? h("ul", { class: "plain list", "data-testid": "tournaments" }, page.tournaments.map(row))
      : h("p", { class: "muted", "data-testid": "tournaments" }, t("tour.none")),
    page.next_cursor ? h("a", { href: `#/tournaments?cursor=${encodeURIComponent(page.next_cursor)}`, class: "button" }, t("common.more")) : null,
  );
  shown(root, "tournaments");
}

function botOf(tour: Tournament, entrant: string): string | null | undefined {
  return tour.entrants.find((e) => e.entrant === entrant)?.bot;
}

/** An entrant as the page names it: a bot by its number ("Bot 3"), a player by their id. */
function entrantName(tour: Tournament, entrant: string): string {
  const bot = botOf(tour, entrant);
  return bot ? seatName({ name: `Bot ${entrant.replace(/^bot:/, "")}`, bot }) : isolated(entrant);
}

/** The entrant's name and "you" for the signed-in player (every bot is of the tournament's
 * level, said once in its settings). */
function entrantEl(tour: Tournament, entrant: string, me: string | null): Child[] {
  return [entrantName(tour, entrant), entrant === me ? h("span", { class: "badge" }, t("common.you")) : null];
}

/** A wide table in a region that scrolls sideways on a narrow screen (the page itself never
 * does), reachable by keyboard; styled through the CSSOM (the page's CSP has no inline style). */
function scroller(label: string, table: HTMLTableElement): HTMLElement {
  const region = h("div", { role: "region", "aria-label": label, tabindex: "0" }, table);
  region.style.overflowX = "auto";
  return region;
}

/** A moment of the service (RFC 3339, maybe with microseconds) as the browser reads it. */
function moment(at: string): string {
  return at.replace(/(\.\d{3})\d+/, "$1");
}

/** What the tournament waits for and when: its start by itself, or its next round. */
function waiting(tour: Tournament): { kind: "start" | "round"; at: number } | null {
  if (tour.status === "registering" && tour.starts_at) return { kind: "start", at: Date.parse(moment(tour.starts_at)) };
  if ((tour.status === "running" || tour.status === "paused") && tour.next_round_at) return { kind: "round", at: Date.parse(moment(tour.next_round_at)) };
  return null;
}

/** The countdown to what the tournament waits for at `now` (ms); null when it waits for no time. */
function countdownText(tour: Tournament, now: number): string | null {
  const wait = waiting(tour);
  if (!wait) return null;
  const next = num(tour.rounds_played + 1);
  if (tour.status === "paused") return t("tour.countdown.paused", { n: next });
  const seconds = (wait.at - now) / 1000;
  if (seconds <= 0) return t("tour.countdown.due");
  if (wait.kind === "round") return t("tour.countdown.round", { n: next, time: hms(seconds) });
  if (seconds >= 86_400) return t("tour.countdown.startOn", { date: when(new Date(wait.at).toISOString()) });
  return t("tour.countdown.start", { time: hms(seconds) });
}

function clockText(clock: Tournament["clock"]): string {
  if (!clock) return t("tour.clock.none");
  if (clock.type === "bank") return t("tour.clock.bank", { initial: num(clock.initial_seconds), increment: num(clock.increment_seconds ?? 0) });
  return t("tour.clock.deadline", { hours: num(clock.hours) });
}

/** How the standings count and rank ("luck-adjusted results, ranked by margin"), with what
 * luck-adjusted, margin and strength mean when they apply. */
function countingEl(tour: Tournament): Child[] {
  const help = (key: MessageKey) => [h("br"), h("span", { class: "small muted" }, t(key))];
  return [
    h("span", { "data-testid": "tournament-counting", "data-standings-by": tour.standings_by, "data-ranked-by": tour.ranked_by }, t(`tour.counting.${tour.standings_by}.${tour.ranked_by}`)),
    tour.standings_by === "luck_adjusted" ? help("tour.counting.luck_adjusted.help") : null,
    tour.ranked_by === "margin" ? help("tour.counting.margin.help") : null,
    tour.ranked_by === "strength" ? help("tour.counting.strength.help") : null,
  ];
}

function settingsEl(tour: Tournament): HTMLElement {
  const row = (label: string, value: Child, key: string) => h("tr", { "data-setting": key }, h("th", { scope: "row" }, label), h("td", null, value));
  return h(
    "section",
    { class: "panel", "aria-labelledby": "tour-settings" },
    h("h2", { id: "tour-settings" }, t("tour.settings")),
    h(
      "table",
      { class: "figures", "data-testid": "tournament-settings" },
      h(
        "tbody",
        null,
        row(t("tour.status"), h("strong", { "data-testid": "tournament-status", "data-status": tour.status }, statusText(tour.status)), "status"),
        row(t("tour.format"), t(`tour.format.${tour.format}`), "format"),
        row(t("tour.deals"), [t(`tour.deals.${tour.deal_mode}`), h("br"), h("span", { class: "small muted" }, t(`tour.deals.${tour.deal_mode}.help`))], "deals"),
        row(t("tour.tableSize"), num(tour.table_size), "table_size"),
        row(t("tour.counting"), countingEl(tour), "standings"),
        row(t("tour.rounds"), t("tour.roundsValue", { played: num(tour.rounds_played), total: num(tour.rounds) }), "rounds"),
        row(t("tour.clock"), clockText(tour.clock), "clock"),
        row(t("tour.startsAt"), tour.starts_at ? t("tour.startsAt.value", { date: when(moment(tour.starts_at)) }) : t("tour.startsAt.none"), "starts_at"),
        row(t("tour.interval"), tour.round_interval ? t("tour.interval.value", { seconds: num(tour.round_interval) }) : t("tour.interval.none"), "round_interval"),
        row(t("tour.entry"), t(tour.invited === null ? "tour.entry.open" : "tour.entry.invited"), "entry"),
        row(t("tour.places"), t("tour.placesValue", { registered: num(tour.registered.length), places: num(tour.places) }), "places"),
        row(t("tour.bots"), t("tour.botsValue", { level: t(`bot.level.${tour.bot_level}`) }), "bots"),
        row(t("tour.ranked"), t(tour.ranked ? "tour.ranked.yes" : "tour.ranked.no"), "ranked"),
      ),
    ),
  );
}

/** What the page knows of its player: the saved token and the player id it names. */
interface Me {
  token: string;
  id: string;
}

function signedIn(): Me | null {
  const token = savedPlayerToken();
  const id = token ? tokenSubject(token) : null;
  return token && id ? { token, id } : null;
}

/** Sign-in (a JWT pasted), or who is signed in and register / withdraw while registering. */
function entryEl(tour: Tournament, jwt: boolean, changed: (tour?: Tournament) => void): HTMLElement {
  const me = signedIn();
  const message = h("p", { role: "alert", class: "error", "data-testid": "entry-error" });
  const body: Child[] = [];
  if (!jwt) body.push(h("p", { class: "muted" }, t("tour.signin.none")));
  else if (!me) body.push(signInForm(message, () => changed()));
  else {
    const registered = tour.registered.includes(me.id);
    const act = async (action: "register" | "withdraw") => {
      const call = {
        params: { path: { tournament_id: tour.id }, header: { "Idempotency-Key": crypto.randomUUID() } },
        body: {},
        headers: { Authorization: bearer(me.token) },
      };
      try {
        const done = answered(
          action === "register"
            ? await api.raw.POST("/v1/tournaments/{tournament_id}/registrations", call)
            : await api.raw.POST("/v1/tournaments/{tournament_id}/withdraw", call),
        );
        changed(done);
      } catch (error) {
        message.textContent = describeError(error);
      }
    };
    body.push(
      h("p", { "data-testid": "signed-in-as", "data-player-id": me.id }, t("tour.signin.as", { name: isolated(me.id) }), " ",
        h("button", { type: "button", id: "sign-out", onclick: () => { savePlayerToken(""); changed(); } }, t("tour.signout"))),
      h("p", { "data-testid": "registration", "data-registered": registered ? "1" : "0" }, t(registered ? "tour.isRegistered" : "tour.notRegistered")),
      tour.status === "registering"
        ? registered
          ? h("button", { type: "button", id: "tour-withdraw", "data-focus": "entry", onclick: () => void act("withdraw") }, t("tour.withdraw"))
          : h("button", { type: "button", id: "tour-register", "data-focus": "entry", class: "primary", onclick: () => void act("register") }, t("tour.register"))
        : h("p", { class: "muted" }, t("tour.closed")),
    );
  }
  return h(
    "section",
    { class: "panel", "data-testid": "tournament-entry", "aria-labelledby": "tour-entry" },
    h("h2", { id: "tour-entry" }, t("tour.signin")),
    body,
    me && tour.organiser === `player:${me.id}` ? organiserEl(tour, me, message, changed) : null,
    message,
    registeredEl(tour),
  );
}

type Decision = "start" | "pause" | "resume" | "stop";

/** What the organiser may decide now: start (bots fill the places left), pause or resume,
 * and stop (asked to confirm) until the tournament is over. */
const DECISIONS: Record<Tournament["status"], readonly Decision[]> = {
  registering: ["start", "stop"],
  running: ["pause", "stop"],
  paused: ["resume", "stop"],
  finished: [],
  stopped: [],
};

function organiserEl(tour: Tournament, me: Me, message: HTMLElement, changed: (tour?: Tournament) => void): HTMLElement | null {
  const decisions = DECISIONS[tour.status];
  if (!decisions.length) return null;
  const decide = async (decision: Decision) => {
    if (decision === "stop" && !confirm(t("tour.stop.confirm"))) return;
    const call = {
      params: { path: { tournament_id: tour.id }, header: { "Idempotency-Key": crypto.randomUUID() } },
      headers: { Authorization: bearer(me.token) },
    };
    try {
      changed(answered(await api.raw.POST(`/v1/tournaments/{tournament_id}/${decision}`, call)));
    } catch (error) {
      message.textContent = describeError(error);
    }
  };
  return h(
    "div",
    { "data-testid": "organiser" },
    h("h3", null, t("tour.organiser")),
    h(
      "div",
      { class: "row" },
      decisions.map((d) =>
        h("button", { type: "button", id: `tour-${d}`, "data-focus": "organiser", class: d === "stop" ? "danger" : d === "start" ? "primary" : undefined, onclick: () => void decide(d) }, t(`tour.${d}`)),
      ),
    ),
  );
}

function signInForm(message: HTMLElement, done: () => void): HTMLFormElement {
  const input = h("input", { id: "player-token", type: "password", required: true, autocomplete: "off", spellcheck: "false", "aria-describedby": "player-token-help" });
  return h(
    "form",
    {
      id: "sign-in",
      onsubmit: (event: Event) => {
        event.preventDefault();
        const token = input.value.trim();
        if (!tokenSubject(token)) {
          message.textContent = t("tour.signin.bad");
          return;
        }
        savePlayerToken(token);
        done();
      },
    },
    h("div", { class: "field" }, h("label", { for: "player-token" }, t("tour.signin.label")), input),
    h("p", { class: "small muted", id: "player-token-help" }, t("tour.signin.help")),
    h("button", { type: "submit", id: "sign-in-submit", class: "primary" }, t("tour.signin")),
  );
}

function registeredEl(tour: Tournament): HTMLElement {
  return h(
    "div",
    null,
    h("h3", null, t("tour.registered")),
    tour.registered.length
      ? h("ul", { class: "plain", "data-testid": "registered" }, tour.registered.map((id) => h("li", { "data-player-id": id }, isolated(id))))
      : h("p", { class: "muted", "data-testid": "registered" }, t("tour.registered.none")),
  );
}

/** A column of the standings' figures: its `data-col`, its heading and a row's cell. */
interface Figure {
  col: string;
  head: MessageKey;
  cell: (row: Standing) => Child;
}

/** The standings' figures in order, what ranks first leading (the margin or the strength
 * when it ranks, signed); in a luck-adjusted tournament each luck-adjusted figure has the
 * results' own beside it. */
function figures(tour: Tournament): Figure[] {
  const two = (n: number) => num(n, 2);
  const byResults = (own: number | null | undefined, text: (n: number) => string): Child => {
    if (tour.standings_by !== "luck_adjusted" || own === null || own === undefined) return null;
    const beside = h("span", { class: "small muted", "data-results": text(own) }, t("tour.byResults", { n: text(own) }));
    beside.style.whiteSpace = "nowrap"; // on a line of its own under the figure, never broken
    return [h("br"), beside];
  };
  const margin = tour.ranked_by === "margin";
  const strength = tour.ranked_by === "strength";
  const strong = (n: number) => signed(n, 2); // a margin per game: two decimals
  // ranked by margin (by strength), Buchholz sums the margins (the strengths) of the players met
  const buchholz = margin ? signed : strength ? strong : two;
  const all: (Figure | null)[] = [
    margin ? { col: "margin", head: "tour.col.margin", cell: (r) => [signed(r.margin), byResults(r.result_margin, signed)] } : null,
    strength ? { col: "strength", head: "tour.col.strength", cell: (r) => [r.strength == null ? "—" : strong(r.strength), byResults(r.result_strength, strong)] } : null,
    { col: "points", head: "tour.col.points", cell: (r) => [two(r.points), byResults(r.result_points, two)] },
    tour.deal_mode === "duplicate" ? { col: "matchpoints", head: "tour.col.matchpoints", cell: (r) => [two(r.matchpoints), byResults(r.result_matchpoints, two)] } : null,
    { col: "buchholz", head: "tour.col.buchholz", cell: (r) => buchholz(r.buchholz) },
    { col: "score", head: "tour.col.score", cell: (r) => num(r.score) },
  ];
  return all.filter((f): f is Figure => f !== null);
}

/** What orders the standings and, luck-adjusted, what their figures count. */
function standingsNotes(tour: Tournament): HTMLElement[] {
  const note = (key: MessageKey, testid: string) => h("p", { class: "small muted", "data-testid": testid }, t(key));
  return [
    note(tour.ranked_by === "points" ? "tour.tiebreaks" : `tour.tiebreaks.${tour.ranked_by}`, "standings-order"),
    ...(tour.standings_by === "luck_adjusted" ? [note("tour.standings.luck", "standings-luck")] : []),
  ];
}

function standingsTable(tour: Tournament, rows: readonly Standing[], me: string | null): HTMLTableElement {
  const columns = figures(tour);
  const head = (key: MessageKey, col: string) => h("th", { scope: "col", "data-col": col }, t(key));
  return h(
    "table",
    { class: "figures", "data-testid": "standings" },
    h("thead", null, h("tr", null, head("tour.col.place", "position"), head("tour.col.player", "entrant"), columns.map((f) => head(f.head, f.col)))),
    h(
      "tbody",
      null,
      rows.map((r) =>
        h(
          "tr",
          { "data-entrant": r.entrant, class: r.entrant === me ? "acting" : undefined },
          h("td", { "data-col": "position" }, num(r.position)),
          h("th", { scope: "row", "data-col": "entrant" }, entrantEl(tour, r.entrant, me)),
          columns.map((f) => h("td", { "data-col": f.col }, f.cell(r))),
        ),
      ),
    ),
  );
}

function standingsEl(tour: Tournament, rows: readonly Standing[], me: string | null): HTMLElement {
  return h(
    "section",
    { class: "panel", "aria-labelledby": "tour-standings" },
    h("h2", { id: "tour-standings" }, t("tour.standings")),
    rows.length && tour.rounds_played
      ? [scroller(t("tour.standings"), standingsTable(tour, rows, me)), standingsNotes(tour)]
      : h("p", { class: "muted", "data-testid": "standings" }, t("tour.standings.none")),
  );
}

/** The signed-in player's table of the round: its game to play (the seat held with the
 * player's JWT, so the table screen plays it), a bye, or nothing. */
function yourTableEl(status: Tournament["status"], next: NextTable | null, me: Me | null): HTMLElement | null {
  if (!me || !next || (status !== "running" && status !== "paused")) return null;
  let body: Child;
  if (next.bye) body = h("p", { "data-testid": "your-table", "data-bye": "1" }, t("tour.yourTable.bye"));
  else if (next.game_id && next.seat !== null && next.round !== null && next.table !== null) {
    holdSeat(next.game_id, { seat: next.seat, token: me.token, tournament: next.tournament_id });
    body = h(
      "p",
      { "data-testid": "your-table", "data-game-id": next.game_id, "data-seat": next.seat },
      t("tour.yourTable.where", { round: num(next.round), table: num(next.table + 1), seat: num(next.seat + 1) }),
      " ",
      h("a", { href: `#/game/${encodeURIComponent(next.game_id)}`, class: "button primary", id: "play-your-game" }, t("tour.yourTable.play")),
    );
  } else body = h("p", { class: "muted", "data-testid": "your-table" }, t("tour.yourTable.none"));
  return h("section", { class: "panel", "aria-labelledby": "tour-your-table" }, h("h2", { id: "tour-your-table" }, t("tour.yourTable")), body);
}

/** A seat's row of a round's table: its result, and in a luck-adjusted tournament the
 * luck-adjusted score and points its standings count ("—" until its game's review is in). */
function seatRow(tour: Tournament, result: TableResult | null, entrant: string, seat: number, me: string | null): HTMLElement {
  const cell = (col: string, value: number | undefined, text: (n: number) => string) =>
    h("td", { "data-col": col }, value === undefined ? "—" : text(value));
  const luck = result?.luck_adjusted;
  return h(
    "tr",
    { "data-seat": seat, "data-entrant": entrant },
    h("td", { "data-col": "seat" }, num(seat + 1)),
    h("th", { scope: "row", "data-col": "entrant" }, entrantEl(tour, entrant, me)),
    cell("rank", result?.ranks[seat], num),
    cell("score", result?.scores[seat], num),
    cell("points", result?.points[seat], (n) => num(n, 2)),
    tour.standings_by === "luck_adjusted"
      ? [cell("luck_score", luck?.scores[seat], (n) => num(n, 1)), cell("luck_points", luck?.points[seat], (n) => num(n, 2))]
      : null,
  );
}

/** A luck-adjusted tournament's word on a played table its review does not (yet) adjust:
 * counted by its results (no review), or awaiting its review. */
function luckNote(tour: Tournament, result: TableResult | null): HTMLElement | null {
  if (tour.standings_by !== "luck_adjusted" || !result || result.luck_adjusted) return null;
  const key = result.unadjusted ? "unadjusted" : "pending";
  return h("p", { class: "small muted", "data-testid": "table-luck", "data-luck": key }, t(`tour.luck.${key}`));
}

function tableEl(tour: Tournament, round: Round, table: Round["tables"][number], me: string | null): HTMLElement {
  const result = table.result;
  const head = (key: MessageKey) => h("th", { scope: "col" }, t(key));
  const luck = tour.standings_by === "luck_adjusted" ? [head("tour.col.luckScore"), head("tour.col.luckPoints")] : null;
  const link = result
    ? h("a", { href: `#/replay/${encodeURIComponent(table.game_id)}`, "data-testid": "table-replay" }, t("tour.replay"))
    : h("a", { href: `#/game/${encodeURIComponent(table.game_id)}`, "data-testid": "table-watch" }, t("tour.watch"));
  return h(
    "div",
    { "data-testid": "round-table", "data-round": round.round, "data-table": table.table, "data-game-id": table.game_id },
    scroller(`${t("tour.round", { n: num(round.round) })} · ${t("tour.table", { n: num(table.table + 1) })}`, h(
      "table",
      { class: "figures" },
      h("caption", null, t("tour.table", { n: num(table.table + 1) }), result ? null : ` · ${t("tour.playing")}`),
      h("thead", null, h("tr", null, head("tour.col.seat"), head("tour.col.player"), head("tour.col.rank"), head("tour.col.score"), head("tour.col.points"), luck)),
      h("tbody", null, table.seats.map((entrant, seat) => seatRow(tour, result, entrant, seat, me))),
    )),
    luckNote(tour, result),
    h("p", null, link),
  );
}

function roundsEl(tour: Tournament, rounds: readonly Round[], me: string | null): HTMLElement {
  return h(
    "section",
    { class: "panel", "aria-labelledby": "tour-rounds" },
    h("h2", { id: "tour-rounds" }, t("tour.roundsHeading")),
    rounds.length
      ? [...rounds].reverse().map((round) =>
          h(
            "section",
            { "data-testid": "round", "data-round": round.round, "aria-labelledby": `tour-round-${round.round}` },
            h("h3", { id: `tour-round-${round.round}` }, t("tour.round", { n: num(round.round) })),
            round.tables.map((table) => tableEl(tour, round, table, me)),
            round.byes.length ? h("p", { "data-testid": "byes" }, t("tour.byes", { names: list(round.byes.map((e) => entrantName(tour, e))) })) : null,
          ),
        )
      : h("p", { class: "muted", "data-testid": "rounds" }, t("tour.rounds.none")),
  );
}

interface Loaded {
  tour: Tournament;
  standings: readonly Standing[];
  rounds: readonly Round[];
  next: NextTable | null;
}

async function load(id: string): Promise<Loaded> {
  const path = { params: { path: { tournament_id: id } } };
  const me = signedIn();
  const [tour, standings, rounds, next] = await Promise.all([
    api.raw.GET("/v1/tournaments/{tournament_id}", path).then(answered),
    api.raw.GET("/v1/tournaments/{tournament_id}/standings", path).then(answered),
    api.raw.GET("/v1/tournaments/{tournament_id}/rounds", path).then(answered),
    me
      ? api.raw.GET("/v1/tournaments/{tournament_id}/players/{player_id}/table", { params: { path: { tournament_id: id, player_id: me.id } } }).then(answered)
      : Promise.resolve(null),
  ]);
  return { tour, standings: standings.standings, rounds: rounds.rounds, next };
}

/** Whether the service accepts players' JWTs (else only the platform registers players). */
async function acceptsPlayers(): Promise<boolean> {
  try {
    return (await api.getInfo()).auth.jwt;
  } catch {
    return true; // unknown: offer the sign-in, the service says no if it must
  }
}

/** The parts of a tournament's page. A part is drawn again only when what it shows changed
 * (a poll keeps the focus where it is); a keyboard user inside a part drawn again stays there:
 * on the same control, else on the one that took its place (`data-focus`: Register gives way
 * to Withdraw), else its first. */
class Parts {
  readonly slots = { settings: h("div"), entry: h("div"), standings: h("div"), yours: h("div"), rounds: h("div") };
  private readonly drawnText: Record<keyof Parts["slots"], string> = { settings: "", entry: "", standings: "", yours: "", rounds: "" };

  /** The parts where they stand, and a word that the page keeps itself up to date. */
  layout(): Child[] {
    const slots = this.slots;
    return [
      h("div", { class: "layout" }, h("div", { class: "col-main" }, slots.yours, slots.standings, slots.rounds), h("div", { class: "col-side" }, slots.settings, slots.entry)),
      h("p", { class: "small muted" }, t("tour.updated")),
    ];
  }

  draw(name: keyof Parts["slots"], key: unknown, draw: () => HTMLElement | null): void {
    const text = JSON.stringify(key);
    if (this.drawnText[name] === text) return;
    this.drawnText[name] = text;
    const slot = this.slots[name];
    const active = slot.contains(document.activeElement) ? (document.activeElement as HTMLElement) : null;
    show(slot, draw());
    if (!active) return;
    const same = active.id ? slot.querySelector<HTMLElement>(`#${CSS.escape(active.id)}`) : null;
    const heir = active.dataset.focus ? slot.querySelector<HTMLElement>(`[data-focus="${CSS.escape(active.dataset.focus)}"]`) : null;
    (same ?? heir ?? slot.querySelector<HTMLElement>("button, a[href], input"))?.focus();
  }
}

export async function tournamentScreen(root: HTMLElement, id: string): Promise<() => void> {
  let data: Loaded;
  let jwt: boolean;
  try {
    [data, jwt] = await Promise.all([load(id), acceptsPlayers()]);
  } catch (error) {
    failedScreen(root, error, "tournament");
    return () => undefined;
  }
  let stopped = false;
  let timer = 0;
  const parts = new Parts();
  const errorEl = h("p", { role: "alert", class: "error", "data-testid": "poll-error" });
  const countdownEl = h("p", { role: "timer", "data-testid": "tournament-countdown" });
  // redrawn each second by itself: nothing else on the page moves, the focus stays
  const drawCountdown = () => {
    const text = countdownText(data.tour, Date.now());
    countdownEl.textContent = text ?? "";
    countdownEl.hidden = text === null;
    countdownEl.dataset.waits = waiting(data.tour)?.kind ?? "";
  };
  const tick = window.setInterval(drawCountdown, 1000);
  const drawParts = () => {
    const me = signedIn();
    const { tour, standings, rounds, next } = data;
    const part = parts.draw.bind(parts);
    part("entry", [tour.status, tour.registered, me?.id, jwt], () => entryEl(tour, jwt, changed));
    part("yours", [tour.status, next, me?.id], () => yourTableEl(tour.status, next, me));
    part("standings", [tour.status, tour.rounds_played, standings, me?.id], () => standingsEl(tour, standings, me?.id ?? null));
    part("rounds", [rounds, me?.id], () => roundsEl(tour, rounds, me?.id ?? null));
    part("settings", tour, () => settingsEl(tour));
    drawCountdown();
  };
  const refresh = async () => {
    try {
      const loaded = await load(id);
      // an answer older than what the page shows (a read sent before a decision's answer
      // came back) is dropped: every change of the tournament raises its version
      if (loaded.tour.version >= data.tour.version) data = loaded;
      errorEl.textContent = "";
    } catch (error) {
      errorEl.textContent = describeError(error);
    }
    if (!stopped) drawParts();
  };
  // after a sign-in, a sign-out or an entry: drawn at once from the answer, then read again
  const changed = (tour?: Tournament) => {
    if (tour && tour.version >= data.tour.version) data = { ...data, tour };
    drawParts();
    void refresh();
  };
  const poll = () => {
    let wait: number | undefined = POLL_MS[data.tour.status as keyof typeof POLL_MS];
    if (stopped || wait === undefined) return; // finished or stopped: nothing changes any more
    const due = data.tour.status === "paused" ? null : waiting(data.tour);
    // what it waits for is due: asked again just after (then each second until it shows)
    if (due) wait = Math.min(wait, Math.max(1000, due.at - Date.now() + 500));
    timer = window.setTimeout(async () => {
      if (!document.hidden) await refresh();
      poll();
    }, wait);
  };
  show(root, h("h1", { "data-testid": "tournament-name" }, isolated(data.tour.name)), h("p", { class: "muted" }, summary(data.tour)), countdownEl, errorEl, parts.layout());
  drawParts();
  poll();
  shown(root, "tournament");
  return () => {
    stopped = true;
    window.clearTimeout(timer);
    window.clearInterval(tick);
  };
}
