/** The web client's shell: header, language, and the hash routes to each screen. */
import { byId, h, show } from "./dom";
import { initialLanguage, isLanguage, LANGUAGES, setLanguage, t, type Language } from "./i18n";
import { savedLanguage, saveLanguage } from "./store";
import { lobbyScreen } from "./screens/lobby";
import { gameScreen } from "./screens/game";
import { archiveScreen, replayScreen } from "./screens/replay";
import { leaderboardScreen, statsScreen } from "./screens/stats";
import { rulesScreen } from "./screens/rules";
import { tournamentsRoute } from "./screens/tournaments";
import { followWorker, keepTurnWords } from "./push";

/** A screen draws itself into `root` and returns how to stop (timers, streams). */
export type Screen = (root: HTMLElement, params: URLSearchParams, ...path: string[]) => Promise<(() => void) | void>;

const routes: Record<string, Screen> = {
  "": lobbyScreen,
  game: gameScreen,
  games: gameScreen, // the service's links to a game (a "your turn" notice's)
  join: gameScreen,
  archive: archiveScreen,
  replay: replayScreen,
  players: statsScreen,
  leaderboard: leaderboardScreen,
  rules: rulesScreen,
  tournaments: tournamentsRoute,
};

let stopCurrent: (() => void) | void = undefined;
let routing = 0;

async function route(): Promise<void> {
  const turn = ++routing;
  if (stopCurrent) stopCurrent();
  stopCurrent = undefined;
  const [pathPart = "", query = ""] = location.hash.replace(/^#\/?/, "").split("?");
  const [name = "", ...rest] = pathPart.split("/").map(decodeURIComponent);
  const screen = routes[name] ?? lobbyScreen;
  const main = byId("main");
  if (!main) return;
  document.body.dataset.ready = "0";
  // each route draws into a root of its own: a screen left before its reads came back
  // draws into a root no longer on the page, never over the screen that followed it
  const root = h("div", { class: "screen" });
  show(main, root);
  show(root, h("p", { class: "muted" }, t("common.loading")));
  const stop = await screen(root, new URLSearchParams(query), name, ...rest);
  if (turn !== routing) {
    if (stop) stop();
    return;
  }
  stopCurrent = stop;
  markCurrentNav(name);
  main.focus({ preventScroll: true });
}

function markCurrentNav(name: string): void {
  for (const link of document.querySelectorAll<HTMLAnchorElement>("a[data-nav]")) {
    const here = link.dataset.nav === (name || "lobby");
    if (here) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

function header(): HTMLElement {
  const nav = (key: string, href: string, label: Parameters<typeof t>[0]) =>
    h("a", { href, "data-nav": key }, t(label));
  const select = h(
    "select",
    {
      id: "language",
      onchange: async (event: Event) => {
        const code = (event.target as HTMLSelectElement).value;
        if (!isLanguage(code)) return;
        saveLanguage(code);
        await setLanguage(code);
        render();
        void keepTurnWords();
      },
    },
    LANGUAGES.map((l) =>
      h("option", { value: l.code, lang: l.code, selected: l.code === document.documentElement.lang }, l.name),
    ),
  );
  return h(
    "header",
    { class: "top" },
    h("a", { href: "#/", class: "brand", "aria-label": t("app.tagline") }, "TEN"),
    h(
      "nav",
      { "aria-label": t("nav.main") },
      nav("lobby", "#/", "nav.lobby"),
      nav("tournaments", "#/tournaments", "nav.tournaments"),
      nav("archive", "#/archive", "nav.archive"),
      nav("leaderboard", "#/leaderboard", "nav.leaderboard"),
      nav("players", "#/players", "nav.stats"),
      nav("rules", "#/rules", "nav.rules"),
    ),
    h("label", { class: "lang" }, h("span", { class: "sr-only" }, t("language.label")), select),
  );
}

/** Draw the whole page in the current language (on start and on a language switch). */
function render(): void {
  document.title = `${t("app.title")} · ${t("app.tagline")}`;
  const skip = document.querySelector<HTMLAnchorElement>("a.skip");
  if (skip) skip.textContent = t("nav.skip");
  const app = byId("app");
  if (!app) return;
  show(app, header(), h("main", { id: "main", tabindex: "-1" }));
  void route();
}

async function start(): Promise<void> {
  const lang: Language = initialLanguage(savedLanguage());
  await setLanguage(lang);
  render();
  window.addEventListener("hashchange", () => void route());
  followWorker();
  void keepTurnWords();
}

void start();
