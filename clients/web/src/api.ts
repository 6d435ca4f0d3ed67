/** The one SDK instance the page calls the service through (same origin). */
import { createTenClient, TenApiError } from "../../ts/src/client";
import { language, t } from "./i18n";

export const api = createTenClient({ language: () => language() });
export { TenApiError };

/** A failure as the page tells it: the service's (translated) problem detail, else the error. */
export function describeError(error: unknown): string {
  if (error instanceof TenApiError) {
    return error.problem?.detail ?? error.problem?.title ?? error.message;
  }
  return t("common.error", { detail: error instanceof Error ? error.message : String(error) });
}
