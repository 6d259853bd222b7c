// The page's addresses for code checkpoints: a file's history
// (#/file?path=ABS, file_history_view.js) and a turn of a session
// (#/s/ID/SEQ, as app.js writes them). Pure: no DOM.

const enc = encodeURIComponent;

export function fileHistoryHref(path) {
  return `#/file?${new URLSearchParams({path: String(path ?? '')})}`;
}

export function turnHref(sessionId, seq) {
  return `#/s/${enc(sessionId)}` + (seq ? `/${seq}` : '');
}
