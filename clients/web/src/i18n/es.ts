import { en, type Messages } from "./en";

/** Placeholder until translated: English. */
export const es: Messages = { ...en };
