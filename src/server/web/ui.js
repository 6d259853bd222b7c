// What every view of the page shares: building elements (text only, never
// HTML), times and sizes in words, the error banner, and confirmations in a
// <dialog>.
import {ApiError} from './api.js';

export const $ = (id) => document.getElementById(id);

export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

const timeFormat = new Intl.DateTimeFormat(undefined, {dateStyle: 'medium', timeStyle: 'short'});

export function timeElement(ms) {
  const node = el('time', 'time');
  if (!ms) return node;
  const date = new Date(ms);
  node.dateTime = date.toISOString();
  node.textContent = timeFormat.format(date);
  return node;
}

export function formatBytes(n) {
  if (!Number.isFinite(n) || n <= 0) return '';
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${i ? n.toFixed(1) : n} ${units[i]}`;
}

export const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

// ---- Errors -----------------------------------------------------------------

// Shows `error` (an ApiError or anything thrown) in the banner at the top.
export function showError(error) {
  console.error(error);
  const text = error instanceof ApiError
      ? `${error.message} (${error.code}${error.status ? `, HTTP ${error.status}` : ''})`
      : String((error && error.message) || error);
  $('banner-text').textContent = text;
  $('banner').hidden = false;
}

export function hideBanner() {
  $('banner').hidden = true;
  $('banner-text').textContent = '';
}

// Runs `action` and shows what it throws; returns its result or undefined.
export async function attempt(action) {
  try {
    return await action();
  } catch (e) {
    showError(e);
    return undefined;
  }
}

// Shows the <dialog> `id` (a form with method="dialog" whose confirming
// button has value="ok"); resolves to whether it was confirmed.
export function ask(id) {
  const dialog = $(id);
  dialog.returnValue = '';
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), {once: true});
    dialog.showModal();
  });
}

// The notice under the banner: what an action did, with at most one button
// that acts on it (the "Undo" of a deletion). It stays until dismissed or
// replaced, so there is no hurry to reach its button.
export function showNotice(text, action) {
  $('notice-text').textContent = text;
  const button = $('notice-action');
  button.hidden = !action;
  button.onclick = null;
  if (action) {
    button.textContent = action.label;
    button.onclick = () => {
      hideNotice();
      action.run();
    };
  }
  $('notice').hidden = false;
}

export function hideNotice() {
  $('notice').hidden = true;
  $('notice-text').textContent = '';
  $('notice-action').onclick = null;
}
