/**
 * A game's fair deal as the page shows it (docs/fairness.md, the scheme `ten-fair-v1`).
 * While a table waits and while its game is played: the commitment to the secret seed
 * (shortened; the whole of it in its title, and copied by its button), and that the seed stays
 * sealed. Once the game has ended: the seed the service revealed, the commitment, and how to
 * check the deal (the documentation's page, the stand-alone verifier run over the game's
 * record). A game dealt from a deck its creator gave (`fairness` null) says it is not
 * verifiable. The page shows the seed only when the service's view holds it.
 */
import type { components } from "@ten/client";
import { copyButton, h, type Child } from "./dom";
import { t } from "./i18n";
import type { MessageKey } from "./i18n/en";

export type Fairness = components["schemas"]["FairnessOut"];

/** The documentation's page on fair deals (the site the service serves: mkdocs.yml). */
export const FAIRNESS_DOCS = "/static/site/fairness.html";
/** The stand-alone verifier, in the service's sources. */
export const VERIFIER = "clients/verifier/ten_verify.py";
/** The hex digits of a commitment a line shows (its title and its copy hold all of it). */
const SHOWN = 12;
/** What a join adds to the deal when the player keeps the browser's choice: random bytes, as hex. */
const ENTROPY_BYTES = 16;

/** `key`'s text with elements where its placeholders stand ("... {commitment} ..."). */
function sentence(key: MessageKey, parts: Record<string, Node>): Child[] {
  return t(key)
    .split(/(\{\w+\})/)
    .filter((piece) => piece !== "")
    .map((piece) => {
      const name = /^\{(\w+)\}$/.exec(piece)?.[1];
      return (name && parts[name]) || piece;
    });
}

/** A hash or a seed as code: whole, or (`short`) its first digits, the rest in its title. */
function digits(value: string, testid: string, short: boolean): HTMLElement {
  const shown = short && value.length > SHOWN ? `${value.slice(0, SHOWN)}…` : value;
  return h("code", { "data-testid": testid, title: value, translate: "no" }, shown);
}

/** Where the game's record is read (`GET /v1/archive/games/{id}/record`), on this service. */
export function recordUrl(gameId: string): string {
  return `${location.origin}/v1/archive/games/${encodeURIComponent(gameId)}/record`;
}

/** The command that checks the game's deal: its record read, handed to the verifier. */
export function verifyCommand(gameId: string): string {
  return `curl -s '${recordUrl(gameId)}' | python3 ${VERIFIER} -`;
}

/** Random entropy for a join, chosen in this browser (`crypto.getRandomValues`), as hex. */
export function randomEntropy(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(ENTROPY_BYTES));
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}

function notVerifiable(): HTMLElement {
  return h("p", { class: "small", "data-testid": "fairness", "data-state": "none" }, t("fair.none"));
}

/** A deal's line while its seed is sealed: a table waiting, a game in play. */
export function sealedLine(fair: Fairness | null | undefined): HTMLElement {
  if (!fair) return notVerifiable();
  return h(
    "p",
    { class: "small", "data-testid": "fairness", "data-state": "sealed" },
    sentence("fair.sealed", { commitment: digits(fair.commitment, "fair-commitment", true) }),
    " ",
    copyButton(fair.commitment, t("common.copy"), t("common.copied"), { "data-testid": "fair-copy" }),
  );
}

/** How to check an ended game's deal: the documentation, and the verifier over its record. */
function howToCheck(gameId: string): Child[] {
  const command = verifyCommand(gameId);
  const docs = h("a", { href: FAIRNESS_DOCS, hreflang: "en", "data-testid": "fair-docs" }, t("fair.docs"));
  const record = h("a", { href: recordUrl(gameId), "data-testid": "fair-record" }, t("fair.record"));
  const verifier = h("code", { translate: "no" }, VERIFIER);
  return [
    h("p", null, sentence("fair.check", { docs })),
    h("p", null, sentence("fair.verifier", { verifier, record })),
    h(
      "div",
      { class: "row" },
      h("input", { class: "copy-field", readonly: true, spellcheck: "false", value: command, "aria-label": t("fair.command"), "data-testid": "fair-verify" }),
      copyButton(command, t("common.copy"), t("common.copied")),
    ),
  ];
}

/** An ended game's deal: its seed (once the service reveals it), its commitment, how to check it. */
function endedPanel(gameId: string, fair: Fairness): HTMLElement {
  const seed = fair.seed;
  return h(
    "section",
    { class: "panel", "data-testid": "fairness", "data-state": seed ? "revealed" : "pending" },
    h("h2", null, t("fair.heading")),
    seed ? h("p", null, sentence("fair.seed", { seed: digits(seed, "fair-seed", false) })) : h("p", null, t("fair.pending")),
    h("p", null, sentence("fair.commitment", { commitment: digits(fair.commitment, "fair-commitment", false) })),
    seed ? howToCheck(gameId) : null,
  );
}

/** A game's fair deal: sealed while it is played, revealed with how to check it once it has ended. */
export function fairnessEl(gameId: string, fair: Fairness | null | undefined, ended: boolean): HTMLElement {
  if (!fair) return notVerifiable();
  return ended ? endedPanel(gameId, fair) : sealedLine(fair);
}
