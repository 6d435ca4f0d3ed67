import { en, type Messages } from "./en";

/** Placeholder until translated: English. */
export const gu: Messages = { ...en };
