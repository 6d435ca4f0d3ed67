/**
 * One game: the waiting room of an open table, then the live table, then the results. The seat
 * this browser holds (its token in localStorage) makes it a player; without one it watches.
 * Other seats' moves arrive through the event stream (`EventStream`, which reconnects by itself
 * with `Last-Event-ID`, and sends the held seat's token) and in the reply to this seat's own;
 * the table moves on from them one move at a time (`liveTable`).
 */
import { bearer, type Action, type components, type Game, type Odds, type Problem, type Table } from "../../../ts/src/client";
import { answered, api, describeError, failedScreen, TenApiError } from "../api";
import { closeConfirm, controlsEl } from "../controls";
import { h, show, shown } from "../dom";
import { describeEvent, type GameEvent } from "../events";
import { fold, tableKey } from "../fold";
import { oddsEl } from "../odds";
import { t, tn } from "../i18n";
import { choosePace, isPace, moveDelay, pace, PACES, Pacer, reducedMotion, type Move, type Pace } from "../pacing";
import { heldSeat, holdSeat, playerId, savedName, saveName } from "../store";
import { EventStream } from "../stream";
import { boardEl, botBadge, clockText, mySeat, nameOf, playersEl, resultsEl, seatName, statusLine, type View } from "../table";
import { againBody, authMode, createTable } from "./lobby";

type ActedOut = components["schemas"]["ActedOut"];

/** The tournament of a game this browser holds a seat of, if it is a tournament's. */
function tournamentOf(gameId: string): string | undefined {
  return heldSeat(gameId)?.tournament;
}

/** The table's layout has one column below this width (app.css: `.layout`). */
const ONE_COLUMN = window.matchMedia("(max-width: 899px)");

export async function gameScreen(root: HTMLElement, params: URLSearchParams, _route: string, gameId = ""): Promise<() => void> {
  let stopped = false;
  let cleanup: () => void = () => undefined;
  const stop = () => {
    stopped = true;
    cleanup();
  };
  // the waiting room may say more than once that the table started (its stream, a read of
  // its seats, a join): the last opening alone draws, the one before it is stopped first
  let opening = 0;
  const open = async (): Promise<void> => {
    const turn = ++opening;
    cleanup();
    cleanup = () => undefined;
    const held = heldSeat(gameId);
    let game: Game | Table;
    try {
      game = (await api.getGame(gameId, held ? { token: held.token } : {})).game;
    } catch (error) {
      if (turn !== opening) return;
      failedScreen(root, error, "table");
      return;
    }
    if (stopped || turn !== opening) return;
    if ("seats" in game && !("players" in game)) {
      cleanup = waitingRoom(root, game, params.get("invite"), () => void open());
    } else {
      cleanup = liveTable(root, game as Game);
    }
  };
  await open();
  return stop;
}

/** The invite link of a table: the hash route, so the invite code never reaches a server log. */
function inviteLink(gameId: string, invite: string | null | undefined): string {
  const base = `${location.origin}${location.pathname}#/join/${encodeURIComponent(gameId)}`;
  return invite ? `${base}?invite=${encodeURIComponent(invite)}` : base;
}

/** How long the waiting room goes without re-reading its seats (who joined, or left). */
const SEATS_REFRESH_MS = 10_000;

function waitingRoom(root: HTMLElement, table: Table, invite: string | null, started: () => void): () => void {
  let timer = 0;
  let current = table;
  let stream: EventStream | null = null;
  const draw = (message = "") => {
    const held = heldSeat(current.id);
    const link = inviteLink(current.id, held?.invite ?? invite);
    const copy = h("button", { type: "button", onclick: async () => {
      await navigator.clipboard?.writeText(link).catch(() => undefined);
      copy.textContent = t("common.copied");
    } }, t("common.copy"));
    show(
      root,
      h("h1", null, t("wait.heading")),
      current.status === "cancelled" ? h("p", { class: "notice" }, t("wait.cancelled")) : null,
      h(
        "section",
        { class: "panel" },
        h("label", { for: "invite-link" }, t("wait.invite")),
        h("div", { class: "row" }, h("input", { id: "invite-link", "data-testid": "invite-link", readonly: true, value: link }), copy),
        h("p", { class: "small muted" }, t("wait.invite.help")),
      ),
      h(
        "section",
        { class: "panel" },
        h("h2", null, t("wait.seats")),
        h(
          "ul",
          { class: "plain", "data-testid": "table-seats" },
          current.seats.map((seat) =>
            h(
              "li",
              { "data-seat": seat.seat },
              t("common.seat", { n: seat.seat + 1 }),
              ": ",
              seat.taken ? seatName(seat) : h("em", null, t("wait.open")),
              seat.bot ? h("span", { class: "badge" }, botBadge(seat.bot)) : null,
              held?.seat === seat.seat ? h("span", { class: "badge" }, t("common.you")) : null,
            ),
          ),
        ),
        held ? h("p", null, t("wait.seated", { n: held.seat + 1 })) : null,
        held?.host && current.status === "open"
          ? h(
              "div",
              { class: "row" },
              h("button", { type: "button", id: "start-now", class: "primary", onclick: startNow }, t("wait.start")),
              h("button", { type: "button", id: "cancel-table", class: "danger", onclick: cancel }, t("wait.cancel")),
            )
          : null,
      ),
      !held && current.status === "open" ? joinForm() : null,
      message ? h("p", { role: "alert", class: "error" }, message) : null,
    );
    shown(root, "waiting");
  };
  const joinForm = () => {
    const name = h("input", { id: "join-name", required: true, maxlength: 40, autocomplete: "nickname", value: savedName() });
    return h(
      "form",
      { class: "panel", id: "join-form", onsubmit: async (event: Event) => {
        event.preventDefault();
        saveName(name.value.trim());
        try {
          const body = { name: name.value.trim(), ...(invite ? { invite } : {}), ...(authMode() === "open" ? { player_id: playerId() } : {}) };
          const joined = await api.joinGame(current.id, body, { idempotencyKey: crypto.randomUUID() });
          holdSeat(current.id, { seat: joined.seat, token: joined.token });
          if (joined.game) started();
          else if (joined.table) { current = joined.table; draw(); }
        } catch (error) {
          draw(describeError(error));
        }
      } },
      h("h2", null, t("wait.join")),
      h("label", { for: "join-name" }, t("lobby.name")),
      name,
      h("button", { type: "submit", id: "join-submit", class: "primary" }, t("wait.join.submit")),
    );
  };
  const startNow = async () => {
    const host = heldSeat(current.id)?.host;
    try {
      await api.startGame(current.id, host ? { token: host } : {});
      started();
    } catch (error) {
      draw(describeError(error));
    }
  };
  const cancel = async () => {
    const host = heldSeat(current.id)?.host;
    if (!confirm(t("wait.cancel.confirm"))) return;
    const { data, error, response } = await api.raw.POST("/v1/games/{game_id}/cancel", {
      params: { path: { game_id: current.id } },
      headers: host ? { Authorization: bearer(host) } : {},
    });
    if (data) {
      current = data;
      stop();
      draw();
    } else draw(describeError(new TenApiError(response, error as Problem | undefined)));
  };
  const refresh = async () => {
    try {
      const { game } = await api.getGame(current.id, heldSeat(current.id) ? { token: heldSeat(current.id)?.token ?? "" } : {});
      if ("players" in game) return started();
      if (game.version !== current.version || game.status !== current.status) {
        current = game as Table;
        if (!document.activeElement || document.activeElement === document.body || !root.contains(document.activeElement)) draw();
      }
    } catch {
      /* try again on the next tick */
    }
    if (current.status === "open") timer = window.setTimeout(refresh, SEATS_REFRESH_MS);
    else stop();
  };
  // the game's first event (game_started) says the table has started: no polling for it; the
  // seats (joins make no event) are re-read now and then, and whenever the stream (re)opens
  const follow = () => {
    stream = new EventStream(api.eventStreamUrl(current.id, 0), heldSeat(current.id)?.token);
    stream.addEventListener("game_started", () => {
      stop();
      started();
    });
    stream.onopen = () => void refresh();
  };
  const stop = () => {
    window.clearTimeout(timer);
    stream?.close();
    stream = null;
  };
  draw();
  if (current.status === "open") {
    follow();
    timer = window.setTimeout(refresh, SEATS_REFRESH_MS);
  }
  return stop;
}

/** How long a view of the service may stay ahead of the events before the log is read again (and, still ahead, the view taken). */
const CATCH_UP_MS = 3000;
/** How soon a read that answered an older version than the table shown is sent again. */
const REREAD_MS = 100;
/** The sentences the live region says after one batch of moves at most (the log has them all). */
const ANNOUNCED = 8;

/**
 * The live table: draw it, follow the stream, send this seat's moves. The table moves on
 * from the events (`fold`), one move at a time (`Pacer`): those of this seat's own reply
 * (its move and every bot move after it) and those of the stream, deduplicated by `seq`.
 * The service's views (the reply, a read) give what no event says: the seat's controls and
 * the clock; at the end of a playback the table folded is checked against them.
 */
function liveTable(root: HTMLElement, first: Game): () => void {
  const gameId = first.id;
  let view: View = first;
  // the version of the last view taken from the service as it is: the events up to it are in it
  let base = first.version;
  let clockOffset = 0; // server time minus local time, seconds
  const log: GameEvent[] = [];
  let received = 0; // the seq of the last event taken, in order
  const early = new Map<number, GameEvent>(); // events that came before one in front of them
  let logLoaded = false;
  let busy = false;
  let message = "";
  let offline = false;
  let stream: EventStream | null = null;
  let ended = false; // the stream said game_finished: it closes, and that is no lost connection
  let refreshing: Promise<void> | null = null;
  let loading: Promise<void> | null = null;
  let firstDraw = true;
  let shownEnd = first.status !== "active"; // the end of the game was brought into view
  let ahead: View | null = null; // a view of the service the events have not brought the table to yet
  let aheadTimer = 0;
  let rereadTimer = 0;
  let settled = true; // the controls shown are the service's, for the version shown
  let seatActions = first.seat_actions ?? [];
  let mineMoved = false; // an event about this seat's player since its controls were read
  let broken = false; // an event did not fit the table: the next view read is taken as it is
  let mismatches = 0;

  const setView = (next: View) => {
    view = next;
    if ("clock" in next && next.clock) clockOffset = next.clock.server_time - Date.now() / 1000;
  };
  setView(first);

  // focusable: a keyboard can scroll it (axe: scrollable-region-focusable); the moves are
  // announced by the live region below, so the log itself is not one
  const logEl = h("ol", { class: "log", "data-testid": "event-log", tabindex: "0", "aria-label": t("table.log") });
  // the moves as they are shown, said by screen readers: a live region that stays in the
  // document while the table is redrawn (one put in again with each redraw may go unsaid);
  // the same words stand under the status line
  const announcer = h("div", { class: "sr-only", "data-testid": "announcer", "aria-live": "polite", "aria-atomic": "true" });
  document.body.appendChild(announcer);
  const drawLog = () => {
    const shown = log.slice(-60);
    logEl.replaceChildren(...shown.map((e) => h("li", { "data-seq": e.seq }, describeEvent(e, (s) => nameOf(view, s)))));
    logEl.scrollTop = logEl.scrollHeight;
  };

  // ---- the pace of the moves shown
  const paceSelect = h(
    "select",
    {
      id: "pace",
      onchange: () => {
        const chosen = paceSelect.value;
        if (isPace(chosen)) choosePace(chosen);
        pacer.repace();
      },
    },
    (Object.keys(PACES) as Pace[]).map((p) => h("option", { value: p, selected: p === pace() }, t(`pace.${p}`))),
  );
  const skipButton = h("button", { type: "button", id: "pace-skip", onclick: () => pacer.skip() }, t("pace.skip"));
  const paceEl = () =>
    h(
      "div",
      { class: "row small", "data-testid": "pace" },
      reducedMotion()
        ? h("span", { class: "muted" }, t("pace.reduced"))
        : [h("label", { for: "pace" }, t("pace.label")), paceSelect],
      pacer.waiting ? [skipButton, h("span", { class: "muted" }, tn("pace.waiting", pacer.waiting))] : null,
    );

  const hideControls = () => {
    settled = false;
    if ("legal_actions" in view) view = { ...view, legal_actions: [], seat_actions: [] };
  };
  const showMove = (move: Move) => {
    for (const e of move.events) {
      log.push(e);
      if (e.version <= base || broken) continue; // the view read holds it already
      try {
        view = fold(view, e);
      } catch (error) {
        broken = true;
        console.warn("ten: an event that does not fit the table", e, error);
      }
      const mine = mySeat(view);
      if (mine !== null && "seat" in e && e.seat === mine && ["timed_out", "seat_taken_over", "seat_reclaimed"].includes(e.type)) {
        mineMoved = true;
      }
    }
    if (move.version > base) hideControls();
  };
  const movesShown = (moves: Move[]) => {
    const said = moves
      .filter((m) => m.version > base)
      .flatMap((m) => m.events.map((e) => describeEvent(e, (s) => nameOf(view, s))));
    if (said.length) announcer.textContent = said.slice(-ANNOUNCED).join(" ");
    draw();
    if (view.status !== "active") stream?.close();
  };

  /** The service's view of the version shown: its controls and clock; the table must be the one folded. */
  const merge = (state: View) => {
    if (tableKey(state) !== tableKey(view)) {
      mismatches += 1;
      document.body.dataset.foldMismatches = String(mismatches);
      console.warn("ten: the table folded from the events is not the service's view", { folded: view, service: state });
    }
    take(state);
  };
  /** A view of the service shown as it is. */
  const take = (state: View) => {
    setView(state);
    base = Math.max(base, state.version);
    seatActions = ("seat_actions" in state ? state.seat_actions : null) ?? [];
    settled = true;
    mineMoved = false;
    broken = false;
    ahead = null;
    window.clearTimeout(aheadTimer);
  };
  /** A view of the service (the reply to this seat's action, or a read). */
  const consider = (state: View) => {
    if (broken || (state.status !== "active" && state.status !== "finished")) return take(state); // aborted or abandoned: no event says so
    if (state.version < view.version) return; // the events went on since
    if (state.version === view.version) {
      if (!pacer.waiting) merge(state);
      return; // else moves wait after it: it is already old
    }
    ahead = state;
    if (!pacer.waiting) catchUp();
  };
  /** A view ahead of every event received: the log is read for the missing ones, and if none came, the view is taken. */
  const catchUp = () => {
    window.clearTimeout(aheadTimer);
    aheadTimer = window.setTimeout(async () => {
      if (!ahead || pacer.waiting) return;
      await loadLog();
      if (ahead && !pacer.waiting && ahead.version > view.version) {
        take(ahead);
        draw();
      }
    }, CATCH_UP_MS);
  };
  /** Nothing waits to be shown: the controls of the version shown. */
  const settle = () => {
    if (ahead) {
      if (ahead.version === view.version) merge(ahead);
      else if (ahead.version < view.version) ahead = null;
      else return catchUp();
      draw();
    }
    if (settled || busy) return;
    const seat = mySeat(view);
    const clocked = "clock" in view && !!view.clock;
    const needed = broken || (view.status === "active" && (clocked || (seat !== null && (view.to_act === seat || mineMoved))));
    if (needed) return void refresh();
    // off turn, nothing about this seat: no decision to offer, its seat actions as they were
    if ("legal_actions" in view) view = { ...view, legal_actions: [], seat_actions: seatActions };
    settled = true;
    draw();
  };
  const pacer = new Pacer(moveDelay, showMove, movesShown, settle);

  /** Events from anywhere (the log, the stream, a reply), taken once each in seq order. */
  const receive = (events: readonly GameEvent[]) => {
    for (const e of events) if (e.seq > received) early.set(e.seq, e);
    const ready: GameEvent[] = [];
    for (let e = early.get(received + 1); e; e = early.get(received + 1)) {
      early.delete(e.seq);
      received = e.seq;
      ready.push(e);
    }
    if (early.size && logLoaded) void loadLog(); // a gap: the log has what is missing
    // what the table already shows (the view read holds it) goes to the log at once
    let old = 0;
    if (!pacer.waiting) while (old < ready.length && (ready[old]?.version ?? 0) <= base) old += 1;
    if (old) {
      log.push(...ready.slice(0, old));
      drawLog();
    }
    const moves = ready.slice(old);
    if (!moves.length) return;
    pacer.add(moves);
    if (settled) {
      // the table is about to move on: the controls shown are for a version gone
      hideControls();
      draw();
    }
  };

  // keyboard users keep their place across redraws: the control they were on, else (when it
  // is their turn again) the first of their controls
  let focusKey: string | undefined;
  const onFocus = (event: FocusEvent) => {
    const el = event.target as HTMLElement;
    focusKey = el.id || el.dataset.action || focusKey;
  };
  root.addEventListener("focusin", onFocus);
  const draw = () => {
    const active = document.activeElement;
    const ours = !active || active === document.body || root.contains(active);
    const now = Date.now() / 1000 + clockOffset;
    const finished = view.status !== "active";
    const seat = mySeat(view);
    show(
      root,
      h(
        "div",
        { class: "table-head" },
        h("h1", { "data-testid": "status" }, statusLine(view)),
        announcer.textContent ? h("p", { class: "small", "data-testid": "last-move", "aria-hidden": "true" }, announcer.textContent) : null,
        seat === null ? h("p", { class: "muted" }, t("table.spectator")) : null,
        offline ? h("p", { class: "notice", role: "status" }, t("common.offline")) : null,
        message ? h("p", { class: "error", role: "alert" }, message) : null,
      ),
      finished && view.results ? resultsEl(view, view.results) : null,
      finished && (seat !== null || view.status === "finished")
        ? h(
            "div",
            { class: "row" },
            // a tournament's game leads back to its tournament (its next round), not to a new table
            tournamentOf(gameId)
              ? h("a", { href: `#/tournaments/${encodeURIComponent(tournamentOf(gameId) ?? "")}`, class: "button primary", "data-testid": "to-tournament" }, t("tour.back"))
              : seat !== null
                ? h("button", { type: "button", id: "play-again", class: "primary", onclick: playAgain }, t("results.again"))
                : null,
            // only a finished game is reviewed (not an aborted or abandoned one)
            view.status === "finished" ? h("a", { href: `#/replay/${encodeURIComponent(gameId)}?review`, class: "button", "data-testid": "to-review" }, t("results.review")) : null,
          )
        : null,
      h(
        "div",
        { class: "layout" },
        h("div", { class: "col-main" }, boardEl(view), controlsEl(view, send, busy), oddsBox),
        h("div", { class: "col-side" }, playersEl(view, now), h("section", { class: "panel" }, h("h2", null, t("table.log")), paceEl(), logEl)),
      ),
    );
    drawLog();
    void showOdds();
    shown(root, finished ? "results" : "table");
    if (firstDraw) {
      firstDraw = false;
      performance.mark("ten:interactive");
    }
    if (finished && !shownEnd) {
      // the game just ended: the results (above the table) come into view, focused
      shownEnd = true;
      const results = root.querySelector<HTMLElement>("[data-testid=results]");
      results?.scrollIntoView({ block: "start" });
      results?.focus({ preventScroll: true });
      return;
    }
    if (ours && focusKey) {
      const again = [...root.querySelectorAll<HTMLElement>("[id], [data-action]")].find(
        (el) => (el.id === focusKey || el.dataset.action === focusKey) && !(el as HTMLButtonElement).disabled,
      );
      (again ?? root.querySelector<HTMLElement>("[data-testid=actions] button:not([disabled])"))?.focus({ preventScroll: true });
    }
  };

  // the odds of the next card, when it is this seat's turn to draw (asked once per version)
  const oddsBox = h("div", { "aria-live": "polite" });
  let oddsVersion = -1;
  const showOdds = async () => {
    const mine = settled && view.status === "active" && view.phase === "draw" && view.to_act !== null && view.to_act === mySeat(view);
    if (!mine) {
      oddsBox.replaceChildren();
      return;
    }
    if (oddsVersion === view.version) return;
    oddsVersion = view.version;
    try {
      const odds: Odds = answered(
        await api.raw.GET("/v1/games/{game_id}/odds", { params: { path: { game_id: gameId } }, headers: seatHeaders() }),
      );
      if (odds.version === view.version) oddsBox.replaceChildren(oddsEl(odds.odds) ?? "");
    } catch {
      oddsBox.replaceChildren(); // the odds are a help: the game goes on without them
    }
  };

  const held = () => heldSeat(gameId);
  // the live reads a seated player makes as one (a duplicate round's game is theirs alone while
  // its deal is still played elsewhere); the SDK's listEvents and getOdds take no token
  const seatHeaders = (): Record<string, string> => {
    const token = held()?.token;
    return token ? { Authorization: bearer(token) } : {};
  };
  const playAgain = async () => {
    const seat = mySeat(view);
    if (seat === null) return;
    try {
      await createTable(againBody(view.players, seat));
    } catch (error) {
      message = describeError(error);
      draw();
    }
  };
  /** The service's view read (for the controls and the clock, or after a failure). */
  const refresh = (): Promise<void> =>
    (refreshing ??= (async () => {
      let stale = false;
      try {
        const token = held()?.token;
        const { game } = await api.getGame(gameId, token ? { token } : {});
        if ("players" in game) {
          stale = game.version < view.version;
          consider(game as Game);
        }
      } catch (error) {
        message = describeError(error);
      } finally {
        refreshing = null;
      }
      draw();
      if (view.status !== "active") stream?.close();
      // a read may answer a version older than the events already shown (they travel
      // apart): while the controls are still wanted, read again
      else if (stale && !settled && !busy && !ahead && !pacer.waiting) rereadTimer = window.setTimeout(() => void refresh(), REREAD_MS);
    })());

  async function send(action: Action): Promise<void> {
    const token = held()?.token;
    if (!token || busy || !settled) return;
    busy = true;
    message = "";
    pacer.fresh();
    draw();
    try {
      const { result } = await api.act(gameId, action, { token, ifMatch: view.version, idempotencyKey: crypto.randomUUID() });
      const { events, ...state } = result as ActedOut;
      busy = false;
      receive(events as GameEvent[]);
      consider(state as unknown as View);
    } catch (error) {
      busy = false;
      message = describeError(error);
      if (error instanceof TenApiError && error.status !== 503) await refresh();
    } finally {
      busy = false;
      if (!settled && !pacer.waiting) settle();
      draw();
      if (view.status !== "active") stream?.close();
      else if (ONE_COLUMN.matches) {
        // on a one-column (phone) layout the move's outcome shows in the tableau, above the controls
        root.querySelector<HTMLElement>("[data-testid=tableau]")?.scrollIntoView({ block: "nearest" });
      }
    }
  }

  let failures = 0; // reconnections refused in a row
  let retryTimer = 0;
  const follow = () => {
    if (view.status !== "active") return;
    stream?.close();
    stream = new EventStream(api.eventStreamUrl(gameId, received), held()?.token);
    const onEvent = (message: MessageEvent<string>) => {
      const event = JSON.parse(message.data) as GameEvent;
      if (event.type === "game_finished") ended = true;
      if (offline) {
        offline = false;
      }
      receive([event]);
    };
    const types = [
      "game_started", "turn_started", "card_drawn", "auction_started", "bid_placed", "bid_passed",
      "auction_won", "wild_discarded", "busted", "stopped", "card_bought", "buy_declined",
      "final_buy_started", "timed_out", "seat_taken_over", "seat_reclaimed", "game_finished",
    ];
    for (const type of types) stream.addEventListener(type, onEvent as EventListener);
    // the server ends a stream it cannot serve on (its store failed, this page fell too far
    // behind) with a `reconnect` event: the stream reconnects by itself after the `retry`
    // the server set, resuming with Last-Event-ID
    stream.addEventListener("reconnect", () => {
      offline = true;
      draw();
    });
    stream.onerror = () => {
      if (ended || view.status !== "active") return stream?.close();
      offline = true;
      draw();
      // a refused reconnection (503/429: the server holds all the streams it may) makes
      // the stream give up for good: open a new one later, resuming after the last event
      if (stream?.readyState === EventStream.CLOSED) {
        failures += 1;
        window.clearTimeout(retryTimer);
        retryTimer = window.setTimeout(follow, Math.min(30_000, 1000 * 2 ** failures));
      }
    };
    stream.onopen = () => {
      failures = 0;
      if (offline) {
        offline = false;
        void refresh(); // anything missed while away comes through Last-Event-ID; the controls from a read
      }
    };
  };

  /** The game's log after the last event received (all of it at first). */
  const loadLog = (): Promise<void> =>
    (loading ??= (async () => {
      try {
        let more = true;
        while (more) {
          const page = answered(
            await api.raw.GET("/v1/games/{game_id}/events", {
              params: { path: { game_id: gameId }, query: { after: received } },
              headers: seatHeaders(),
            }),
          );
          receive(page.events as GameEvent[]);
          more = page.more && page.events.length > 0;
        }
        logLoaded = true;
      } catch (error) {
        message = describeError(error);
        draw();
      } finally {
        loading = null;
      }
    })());

  const tick = window.setInterval(() => {
    if (!("clock" in view) || !view.clock || view.status !== "active") return;
    const now = Date.now() / 1000 + clockOffset;
    for (const el of root.querySelectorAll<HTMLElement>("[data-testid=clock]")) {
      const text = clockText(view, Number(el.dataset.seat), now);
      if (text !== null) el.textContent = `◷ ${text}`;
    }
  }, 500);

  draw();
  void loadLog().then(follow);
  return () => {
    window.clearInterval(tick);
    window.clearTimeout(retryTimer);
    window.clearTimeout(aheadTimer);
    window.clearTimeout(rereadTimer);
    pacer.stop();
    announcer.remove();
    root.removeEventListener("focusin", onFocus);
    stream?.close();
    closeConfirm();
  };
}
