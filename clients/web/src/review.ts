/**
 * A finished game's post-game review (`GET /v1/games/{id}/review`) as the replay shows it:
 * each seat's accuracy and its margin split into skill and luck, a graph of each seat's
 * winning chances over the game (inline SVG: a title and a description say what it shows;
 * each seat its colour and its own dash, so no line is told apart by hue alone), and the
 * moments that mattered most: the biggest value lost (what was chosen, what was best, in
 * words) and the luckiest and unluckiest cards; and every decision's grade, per seat, with the
 * value it lost and what was best. The value lost is labelled neutrally ("value lost 0.6"):
 * its unit is the review's grading scheme's, not the page's to name.
 */
import type { Review } from "@ten/client";
import { api, describeError, TenApiError } from "./api";
import { cardName } from "./cards";
import { h, show } from "./dom";
import { list, num, t, tn } from "./i18n";

type Decision = Review["decisions"][number];
type Card = Review["cards"][number];
type Action = Decision["actions"][number]["action"];

export const SEAT_DASHES = ["", "8 4", "2 3", "10 3 2 3", "5 5"]; // one per seat, beside its colour

/** A share 0-1 (or a percentage, `percent`) as the page writes it: "76.5%". */
function percent(value: number, percent = false): string {
  return t("review.percent", { p: num(percent ? value : value * 100, 1) });
}

/** Points with one decimal and their sign: "+0.6 points", "-32.6 points". */
function signedPoints(value: number): string {
  const shown = Math.round(value * 10) / 10;
  const text = tn("n.point", Math.abs(shown), {}, 1);
  return shown > 0 ? `+${text}` : shown < 0 ? `-${text}` : text;
}

/** A value lost, one decimal, without a unit: "value lost 0.6". */
function valueLost(value: number): string {
  return t("review.valueLost", { v: num(Math.round(value * 10) / 10, 1) });
}

/** A decision's action in words ("Draw a card", "Bid 3", "Buy Red 4"). */
export function actionText(action: Action): string {
  switch (action.type) {
    case "draw":
      return t("action.draw");
    case "stop":
      return t(action.take === "numbers" ? "review.action.stop.numbers" : "review.action.stop.currency");
    case "bid":
      return t("review.action.bid", { amount: num(action.amount) });
    case "pass":
      return t("action.pass");
    case "buy":
      return t("action.buy", { card: cardName(action.card) });
    case "decline":
      return t("action.decline");
    default:
      return (action as { type: string }).type;
  }
}

/** The decision that lost the most (the first of equals), none when nothing was lost. */
export function biggestLoss(review: Review): Decision | null {
  let worst: Decision | null = null;
  for (const d of review.decisions) if (d.lost > (worst?.lost ?? 0)) worst = d;
  return worst;
}

/** The card drawn luckiest for its drawer (`sign` 1) or unluckiest (-1); the first of equals. */
export function extremeCard(review: Review, sign: 1 | -1): Card | null {
  let found: Card | null = null;
  const luck = (c: Card) => sign * (c.luck[c.seat] ?? 0);
  for (const c of review.cards) if (found === null || luck(c) > luck(found)) found = c;
  return found && luck(found) > 0 ? found : null;
}

export interface ReviewContext {
  nameOf: (seat: number) => string;
  stepOf: (version: number) => number; // the replay's step (0-based) of a game version
  goto: (step: number) => void; // shows that step of the replay
}

/** A text with an element where its `{name}` stands (the language decides where it goes). */
function around(template: string, placeholder: string, el: Node): (string | Node)[] {
  const [before = "", after = ""] = template.split(placeholder);
  return [before, el, after];
}

function seatsEl(review: Review, ctx: ReviewContext): HTMLElement {
  return h(
    "ul",
    { class: "plain review-seats" },
    review.seats.map((s) =>
      h(
        "li",
        { "data-testid": "review-seat", "data-seat": s.seat },
        h("span", { class: "seat-key", "aria-hidden": "true" }, swatch(s.seat)),
        h("strong", null, ctx.nameOf(s.seat)),
        ": ",
        s.accuracy === null || s.accuracy === undefined
          ? t("review.seat.none")
          : [
              around(t("review.seat.accuracy"), "{p}", h("b", { "data-testid": "accuracy" }, percent(s.accuracy, true))),
              " · ",
              s.performance === null || s.performance === undefined
                ? []
                : [
                    around(t("review.seat.performance"), "{r}", h("b", { "data-testid": "performance" }, num(Math.round(s.performance), 0))),
                    " · ",
                  ],
              tn("n.decision", s.decisions),
              " · ",
              valueLost(s.lost),
            ],
        " · ",
        t("review.seat.split", { skill: signedPoints(s.skill), others: signedPoints(s.others), luck: signedPoints(s.luck) }),
      ),
    ),
  );
}

const SVG = "http://www.w3.org/2000/svg";

function svg(tag: string, attrs: Record<string, string | number>, ...children: (Node | string)[]): SVGElement {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  el.append(...children);
  return el;
}

/** A seat's line as its key in the legend. */
function swatch(seat: number): SVGElement {
  return svg(
    "svg",
    { width: 28, height: 10, viewBox: "0 0 28 10", class: "swatch" },
    svg("line", { x1: 1, y1: 5, x2: 27, y2: 5, class: `seat-line s${seat}`, "stroke-dasharray": SEAT_DASHES[seat] ?? "" }),
  );
}

const W = 400;
const H = 180;
const PAD = { left: 40, right: 6, top: 8, bottom: 22 };

/** Each seat's winning chances over the game: a line per seat, titled and described. */
function chancesEl(review: Review, ctx: ReviewContext, id: string): HTMLElement {
  const points = review.chances;
  const seats = review.seats.map((s) => s.seat);
  const x = (i: number) => PAD.left + (points.length > 1 ? (i / (points.length - 1)) * (W - PAD.left - PAD.right) : 0);
  const y = (p: number) => PAD.top + (1 - p) * (H - PAD.top - PAD.bottom);
  const at = (i: number) => list(seats.map((s) => `${ctx.nameOf(s)} ${percent(points[i]?.chances[s] ?? 0)}`));
  const title = svg("title", { id: `${id}-title` }, t("review.chances"));
  const desc = svg("desc", { id: `${id}-desc` }, t("review.chances.desc", { start: at(0), end: at(points.length - 1) }));
  const grid = [0, 0.5, 1].map((p) =>
    svg(
      "g",
      { class: "grid" },
      svg("line", { x1: PAD.left, x2: W - PAD.right, y1: y(p), y2: y(p) }),
      svg("text", { x: PAD.left - 4, y: y(p) + 4, "text-anchor": "end" }, percent(p)),
    ),
  );
  const axis = svg("text", { x: (W + PAD.left) / 2, y: H - 4, "text-anchor": "middle", class: "axis" }, t("review.chances.move"));
  const lines = seats.map((s) =>
    svg("polyline", {
      class: `seat-line s${s}`,
      "data-seat": s,
      "stroke-dasharray": SEAT_DASHES[s] ?? "",
      points: points.map((c, i) => `${x(i).toFixed(1)},${y(c.chances[s] ?? 0).toFixed(1)}`).join(" "),
    }),
  );
  const chart = svg(
    "svg",
    { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-labelledby": `${id}-title ${id}-desc`, class: "chances-chart", "data-testid": "chances" },
    title,
    desc,
    ...grid,
    axis,
    ...lines,
  );
  return h(
    "figure",
    { class: "chances" },
    chart,
    h(
      "figcaption",
      { class: "small" },
      h("ul", { class: "legend" }, seats.map((s) => h("li", null, swatch(s), " ", ctx.nameOf(s)))),
    ),
  );
}

function stepButton(ctx: ReviewContext, step: number): HTMLElement {
  return h("button", { type: "button", class: "small", onclick: () => ctx.goto(step) }, t("review.show"));
}

function lossEl(review: Review, ctx: ReviewContext): HTMLElement {
  const d = biggestLoss(review);
  if (!d) return h("li", { "data-testid": "moment-lost" }, h("h3", null, t("review.lost")), h("p", null, t("review.lost.none")));
  const step = ctx.stepOf(d.version);
  const chosen = d.actions[d.chosen];
  const best = d.actions[d.best];
  return h(
    "li",
    { "data-testid": "moment-lost", "data-version": d.version, "data-seat": d.seat },
    h("h3", null, t("review.lost")),
    h("p", null, t("review.step", { name: ctx.nameOf(d.seat), n: num(step + 1) })),
    h("p", { "data-testid": "chosen" }, t("review.chosen", { action: chosen ? actionText(chosen.action) : "", lost: valueLost(d.lost) })),
    h("p", { "data-testid": "best" }, t("review.best", { action: best ? actionText(best.action) : "" })),
    stepButton(ctx, step),
  );
}

function cardMoment(review: Review, ctx: ReviewContext, sign: 1 | -1): HTMLElement | null {
  const c = extremeCard(review, sign);
  if (!c) return null;
  const step = ctx.stepOf(c.version);
  return h(
    "li",
    { "data-testid": sign > 0 ? "moment-lucky" : "moment-unlucky", "data-version": c.version, "data-seat": c.seat, "data-card": c.card },
    h("h3", null, t(sign > 0 ? "review.lucky" : "review.unlucky")),
    h("p", null, t("review.step", { name: ctx.nameOf(c.seat), n: num(step + 1) })),
    h("p", { "data-testid": "drew" }, t("review.drew", { card: cardName(c.card), luck: signedPoints(c.luck[c.seat] ?? 0) })),
    stepButton(ctx, step),
  );
}

/** One decision: its step (a button to it), the action chosen and its grade; unless it was
 * the best, the value lost and the best action in words. */
function decisionEl(d: Decision, ctx: ReviewContext): HTMLElement {
  const step = ctx.stepOf(d.version);
  const chosen = d.actions[d.chosen];
  const best = d.actions[d.best];
  const grade = h("b", { class: `grade grade-${d.grade}`, "data-testid": "grade" }, t(`review.grade.${d.grade}`));
  return h(
    "li",
    { "data-testid": "decision", "data-version": d.version, "data-grade": d.grade },
    h("button", { type: "button", class: "small", onclick: () => ctx.goto(step) }, t("review.decision.step", { n: num(step + 1) })),
    " ",
    around(t("review.decision", { action: chosen ? actionText(chosen.action) : "" }), "{grade}", grade),
    d.grade === "best"
      ? null
      : [
          " · ",
          h("span", { "data-testid": "lost" }, valueLost(d.lost)),
          " · ",
          h("span", { "data-testid": "best" }, t("review.decision.best", { action: best ? actionText(best.action) : "" })),
        ],
  );
}

/** Every decision's grade, a list per seat (folded: a game holds many). */
function decisionsEl(review: Review, ctx: ReviewContext): HTMLElement {
  return h(
    "div",
    { class: "review-decisions" },
    review.seats.map((s) => {
      const mine = review.decisions.filter((d) => d.seat === s.seat);
      return h(
        "details",
        { "data-testid": "review-decisions", "data-seat": s.seat },
        h("summary", null, t("review.decisions.seat", { name: ctx.nameOf(s.seat), decisions: tn("n.decision", mine.length) })),
        h("ol", { class: "plain decisions" }, mine.map((d) => decisionEl(d, ctx))),
      );
    }),
  );
}

export function reviewEl(review: Review, ctx: ReviewContext): HTMLElement[] {
  return [
    h("h3", null, t("review.accuracy")),
    seatsEl(review, ctx),
    h("p", { class: "small muted" }, t("review.help")),
    h("h3", null, t("review.chances")),
    chancesEl(review, ctx, "review-chances"),
    h("h3", null, t("review.moments")),
    h("ul", { class: "plain moments" }, lossEl(review, ctx), cardMoment(review, ctx, 1), cardMoment(review, ctx, -1)),
    h("h3", null, t("review.decisions")),
    h("p", { class: "small muted" }, t("review.decisions.help")),
    decisionsEl(review, ctx),
  ];
}

/** How long the page waits for a review being computed: the service's Retry-After, growing
 * by `GROWTH` at each ask up to `LONGEST_WAIT` seconds; after `MOST_ASKS` asks it stops and
 * offers to ask again (a service that never finishes is not polled for good). */
export const POLLING = { GROWTH: 1.5, LONGEST_WAIT: 30, MOST_ASKS: 12 };

/** The seconds to wait before the ask after `asks` asks answered 202 with `retryAfter`. */
export function nextWait(retryAfter: number, asks: number): number {
  const base = Math.max(1, retryAfter);
  return Math.min(POLLING.LONGEST_WAIT, Math.max(base, base * POLLING.GROWTH ** (asks - 1)));
}

/** The service set the review aside for good (500 `review_failed`): asking again is no use. */
function failedForGood(error: unknown): boolean {
  return error instanceof TenApiError && error.problem?.code === "review_failed";
}

/**
 * The review section of a replay: "being computed" while the service answers 202 (asked
 * again after its Retry-After, then less and less often, until `POLLING.MOST_ASKS` asks:
 * then a message and a button to ask again), then the review. A review the service failed
 * to compute (`review_failed`) is said so, and not asked for again; another failure is said
 * with the button. Returns how to stop asking.
 */
export function reviewSection(gameId: string, ctx: ReviewContext): { el: HTMLElement; stop: () => void } {
  // the status is said (a live region) while the review is computed; the review itself is read where it stands
  const status = h("p", { class: "muted", role: "status" }, t("review.pending"));
  const body = h("div");
  const el = h("section", { class: "panel review", "data-testid": "review", "data-state": "pending", "aria-labelledby": "review-heading" }, h("h2", { id: "review-heading" }, t("review.heading")), status, body);
  let timer = 0;
  let stopped = false;
  let asks = 0;
  const halt = (state: string, message: string, retry: boolean) => {
    status.hidden = true;
    const again = h("button", { type: "button", "data-testid": "review-retry", onclick: () => restart() }, t("common.retry"));
    show(body, h("p", { role: "alert", class: "error" }, message), retry ? h("p", null, again) : null);
    el.dataset.state = state;
  };
  const ask = async () => {
    asks += 1;
    try {
      const answer = await api.getReview(gameId);
      if (stopped) return;
      if (answer.pending) {
        if (asks >= POLLING.MOST_ASKS) return halt("stalled", t("review.slow"), true);
        timer = window.setTimeout(ask, nextWait(answer.retryAfter, asks) * 1000);
        return;
      }
      status.hidden = true;
      show(body, reviewEl(answer.review, ctx));
      el.dataset.state = "ready";
    } catch (error) {
      if (stopped) return;
      if (failedForGood(error)) return halt("failed", t("review.failed"), false);
      halt("error", describeError(error), true);
    }
  };
  const restart = () => {
    asks = 0;
    status.hidden = false;
    show(body);
    el.dataset.state = "pending";
    void ask();
  };
  void ask();
  return {
    el,
    stop: () => {
      stopped = true;
      window.clearTimeout(timer);
    },
  };
}
