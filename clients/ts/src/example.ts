/**
 * How the SDK is used, type-checked with the rest (`npm run check`) but never run: a game of
 * one human against three bots, each turn playing the first legal action.
 */
import { type Action, createTenClient, TenApiError, versionOf } from "./client";

export async function playAgainstBots(baseUrl: string): Promise<string> {
  const ten = createTenClient({ baseUrl, language: "es" });
  const created = await ten.createGame({
    players: [{ name: "Ana" }, { bot: "basic" }, { bot: "basic" }, { bot: "random" }],
  });
  // every seat is filled, so this is a started game, not an open table
  if (created.status !== "active") throw new Error(`unexpected ${created.status}`);
  const token = created.seats[0]?.token;
  if (token === undefined) throw new Error("no seat token");

  for (;;) {
    const { game, etag } = await ten.getGame(created.id, { token });
    if (!("phase" in game) || game.status !== "active") return game.status;
    const action: Action | undefined = game.seat_actions?.[0];
    if (action === undefined) {
      await new Promise((resolve) => setTimeout(resolve, 500)); // another seat's turn
      continue;
    }
    try {
      await ten.act(created.id, action, { token, ifMatch: versionOf(etag) ?? "*" });
    } catch (error) {
      // 412: the bots moved first; read the game again.
      if (!(error instanceof TenApiError && error.status === 412)) throw error;
    }
  }
}
