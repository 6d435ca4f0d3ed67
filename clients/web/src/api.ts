/** The one SDK instance the page calls the service through (same origin). */
import { bearer, createTenClient, TenApiError } from "@ten/client";
import { h, show, shown } from "./dom";
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

/** A screen that could not be shown: what went wrong, and the way back to the lobby. */
export function failedScreen(root: HTMLElement, error: unknown, screen: string): void {
  show(
    root,
    h("p", { role: "alert", class: "error" }, describeError(error)),
    h("p", null, h("a", { href: "#/", class: "button", "data-testid": "to-lobby" }, t("nav.lobby"))),
  );
  shown(root, screen);
}

/** The answer of an SDK `raw` call (an operation without a helper in the SDK): its body, or
 * its problem thrown as the SDK's helpers throw it. */
export function answered<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data === undefined) {
    throw new TenApiError(result.response, result.error as ConstructorParameters<typeof TenApiError>[1]);
  }
  return result.data;
}

/**
 * A call to an operation the SDK's generated types do not name yet (matchmaking, push): the
 * same headers as the SDK's (`Accept-Language`, a bearer token, an idempotency key), its JSON
 * answer, or its problem thrown as the SDK's helpers throw it.
 */
export async function request<T>(
  method: "GET" | "POST" | "DELETE",
  path: string,
  options: { body?: unknown; token?: string | undefined; idempotencyKey?: string } = {},
): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json", "Accept-Language": language() };
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  if (options.token) headers.Authorization = bearer(options.token);
  if (options.idempotencyKey) headers["Idempotency-Key"] = options.idempotencyKey;
  const response = await fetch(path, {
    method,
    headers,
    cache: "no-store",
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  const text = await response.text();
  let data: unknown = undefined;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    /* no JSON: told by the status alone */
  }
  if (!response.ok) throw new TenApiError(response, data as ConstructorParameters<typeof TenApiError>[1]);
  return data as T;
}
