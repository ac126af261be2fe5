import { endpoint } from "@tessera/endpoint";
import type { UserJsonBody } from "../repositories/push-deliveries.js";

/** A request ready for `fetch`. */
export interface PushRequest {
  url: string;
  init: RequestInit;
}

/**
 * `PUT {push_base}/users/{uid}` with the user's `/user.json` body for that
 * application (S13), built with `@tessera/endpoint`.
 */
export function userUpdateRequest(pushBase: string, token: string, body: UserJsonBody): PushRequest {
  return toFetch(
    endpoint("PUT /users/{uid}", {
      baseUrl: pushBase,
      uid: body.user.uid,
      headers: { authorization: `Bearer ${token}`, accept: "application/json" },
      data: body,
    }),
  );
}

/** `POST {push_base}/users/{uid}/reauth` with body `{}` (S13), built with `@tessera/endpoint`. */
export function reauthRequest(pushBase: string, token: string, uid: string): PushRequest {
  return toFetch(
    endpoint("POST /users/{uid}/reauth", {
      baseUrl: pushBase,
      uid,
      headers: { authorization: `Bearer ${token}`, accept: "application/json" },
      data: {},
    }),
  );
}

function toFetch(options: { method: string; url: string; headers: Record<string, string | number | undefined>; body?: unknown }): PushRequest {
  const headers: Record<string, string> = { "content-type": "application/json; charset=utf-8" };
  for (const [name, value] of Object.entries(options.headers)) {
    if (value !== undefined) headers[name] = String(value);
  }
  return { url: options.url, init: { method: options.method, headers, body: JSON.stringify(options.body ?? {}) } };
}
