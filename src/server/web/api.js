// Calls to the server's /v1 API. Sends the token when one is known (kept in
// localStorage after the user typed it once); on 401 asks for it and retries.
// Errors come back as ApiError with the server's code and message.

const TOKEN_KEY = 'sessiondb.token';

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

let askToken = null;  // set by the page: () => Promise<string>

export function onTokenNeeded(fn) { askToken = fn; }
export function token() { return localStorage.getItem(TOKEN_KEY) || ''; }

async function request(method, path, body, raw) {
  for (let attempt = 0; attempt < 3; attempt++) {
    const headers = {};
    if (token()) headers['Authorization'] = 'Bearer ' + token();
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(path, {method, headers, body: body === undefined ? undefined : JSON.stringify(body)});
    if (res.status === 401 && askToken) {
      localStorage.setItem(TOKEN_KEY, await askToken());
      continue;
    }
    if (!res.ok) {
      let code = 'http_' + res.status, message = res.statusText;
      try {
        const e = (await res.json()).error;
        code = e.code;
        message = e.message;
      } catch (_) { /* not our JSON: keep the status line */ }
      throw new ApiError(res.status, code, message);
    }
    if (raw) return res;
    return res.status === 204 ? null : res.json();
  }
  throw new ApiError(401, 'unauthenticated', 'the token was not accepted');
}

export const api = {
  get: (path) => request('GET', path),
  post: (path, body) => request('POST', path, body ?? {}),
  patch: (path, body) => request('PATCH', path, body),
  // The response itself (for blobs and downloads).
  raw: (path) => request('GET', path, undefined, true),
};

// The URL of the live event stream (EventSource cannot send headers).
export function eventsUrl(sessionId, since) {
  let url = `/v1/sessions/${encodeURIComponent(sessionId)}/events?since=${since}`;
  if (token()) url += '&token=' + encodeURIComponent(token());
  return url;
}

// An object URL for a blob, fetched with the token (an <img src> could not
// send it). Cached per digest: a blob never changes.
const blobUrls = new Map();
export async function blobUrl(sha256) {
  if (!blobUrls.has(sha256)) {
    const res = await api.raw('/v1/blobs/' + sha256);
    blobUrls.set(sha256, URL.createObjectURL(await res.blob()));
  }
  return blobUrls.get(sha256);
}
