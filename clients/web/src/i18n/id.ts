import { en, type Messages } from "./en";

/** Placeholder until translated: English. */
export const id: Messages = { ...en };
