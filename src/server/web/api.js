// The page's one way to the server: JSON requests to /v1 with the token,
// errors as ApiError, and the token prompt when the server answers 401.
//
// The token lives in localStorage. fetch sends it as "Authorization: Bearer";
// an EventSource, which cannot send headers, gets it as ?token=. An <img> or a
// download link cannot send it either, so with a token set, images and
// exports are fetched here and handed out as blob: URLs (mediaUrl, download).

const kTokenKey = 'sessiondb.token';
// Used when local storage refuses (private mode): the token lasts until the page closes.
let memoryToken = '';

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function token() {
  try {
    return localStorage.getItem(kTokenKey) || '';
  } catch {
    return '';
  }
}

export function setToken(value) {
  try {
    if (value) localStorage.setItem(kTokenKey, value);
    else localStorage.removeItem(kTokenKey);
  } catch {
    // Storage refused: memoryToken below keeps it.
  }
  memoryToken = value;
}

const currentToken = () => token() || memoryToken;

// askForToken(refused: bool) -> Promise<string>, set by the page. One prompt
// at a time: requests that get 401 meanwhile wait for the same answer.
let askForToken = null;
let pendingAsk = null;

export function onTokenNeeded(ask) {
  askForToken = ask;
}

async function tokenAfter401(sent) {
  if (!askForToken) return false;
  if (currentToken() && currentToken() !== sent) return true;  // another request got it already
  if (!pendingAsk) {
    pendingAsk = askForToken(Boolean(sent)).then((value) => {
      setToken(value);
      pendingAsk = null;
    });
  }
  await pendingAsk;
  return true;
}

function authHeaders() {
  const t = currentToken();
  return t ? {Authorization: `Bearer ${t}`} : {};
}

// The error a non-2xx answer carries: {"error": {"code", "message"}}, or what
// can be said without one.
async function errorFrom(res) {
  let body = null;
  try {
    body = await res.json();
  } catch {
    // Not JSON: a proxy's page, an empty body.
  }
  if (body && body.error && typeof body.error.message === 'string') {
    return new ApiError(res.status, body.error.code || 'error', body.error.message);
  }
  return new ApiError(res.status, 'http_' + res.status,
                      `the server answered ${res.status} ${res.statusText}`.trim());
}

// fetch with the token, asking for it (and trying again) on 401.
async function send(path, init = {}) {
  for (;;) {
    const sent = currentToken();
    let res;
    try {
      res = await fetch(path, {...init, headers: {...(init.headers || {}), ...authHeaders()}});
    } catch (e) {
      throw new ApiError(0, 'unreachable', `the server did not answer (${e.message})`);
    }
    if (res.status === 401 && await tokenAfter401(sent)) continue;
    if (!res.ok && res.status !== 304) throw await errorFrom(res);
    return res;
  }
}

// A JSON request. Returns the parsed answer, or null for 204.
export async function api(method, path, body) {
  const init = {method, headers: {Accept: 'application/json'}};
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await send(path, init);
  if (res.status === 204) return null;
  const text = await res.text();
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    throw new ApiError(res.status, 'bad_answer', `the server's answer to ${method} ${path} is not JSON`);
  }
}

export const enc = encodeURIComponent;

export function blobPath(sha256) {
  return `/v1/blobs/${enc(sha256)}`;
}

// A URL an <img> can load: the blob's own path without a token, else a blob:
// URL of the bytes fetched with it (kept per digest for the page's life).
const objectUrls = new Map();
export async function mediaUrl(sha256) {
  if (!currentToken()) return blobPath(sha256);
  if (!objectUrls.has(sha256)) {
    objectUrls.set(sha256, send(blobPath(sha256)).then(async (res) => URL.createObjectURL(await res.blob()))
      .catch((e) => {
        objectUrls.delete(sha256);
        throw e;
      }));
  }
  return objectUrls.get(sha256);
}

export function needsFetchedDownloads() {
  return Boolean(currentToken());
}

// Saves what `path` answers as `filename` (used when a token is set, since a
// plain link could not send it).
export async function download(path, filename) {
  const res = await send(path);
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

// The live event stream of a session after `since`, with the token in the URL.
export function eventsUrl(sessionId, since) {
  const t = currentToken();
  return `/v1/sessions/${enc(sessionId)}/events?since=${since}` + (t ? `&token=${enc(t)}` : '');
}

// The live stream of the session list's changes (GET /v1/events).
export function listEventsUrl() {
  const t = currentToken();
  return '/v1/events' + (t ? `?token=${enc(t)}` : '');
}
