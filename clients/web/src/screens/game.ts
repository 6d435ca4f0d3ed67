/**
 * One game: the waiting room of an open table (`waiting.ts`), then the live table
 * (`../live/table.ts`), then the results. The seat this browser holds (its token in
 * localStorage) makes it a player; without one it watches.
 */
import type { Game, Table } from "@ten/client";
import { api, failedScreen } from "../api";
import { liveTable } from "../live/table";
import { heldSeat } from "../store";
import { waitingRoom } from "./waiting";

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
