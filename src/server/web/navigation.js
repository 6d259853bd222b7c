// Getting around without the mouse, and on a phone. Keys (not while typing
// in a field, nor with Ctrl, Alt or Meta): j and k move through the session
// list, Enter opens the session under focus (the link's own behaviour), /
// goes to the search box, Esc leaves the search box or closes the drawer.
// Below 760 px the list is a drawer: the "Sessions" button opens it, and
// opening a session (any change of address) or Esc closes it. docs/web.md
// says what it does.

import {$} from './ui.js';

const links = () => [...document.querySelectorAll('#session-list .session-link')];

function setDrawer(open) {
  document.body.classList.toggle('drawer-open', open);
  $('drawer-toggle').setAttribute('aria-expanded', String(open));
}

const drawerOpen = () => document.body.classList.contains('drawer-open');

function isTyping(target) {
  return target instanceof HTMLElement &&
         (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName));
}

// Focus on the session `step` away from the one under focus (or the open
// one), kept in view.
function moveInList(step) {
  const all = links();
  if (all.length === 0) return;
  let at = all.indexOf(document.activeElement);
  if (at < 0) at = all.findIndex((a) => a.parentElement.classList.contains('current'));
  const next = at < 0 ? (step > 0 ? 0 : all.length - 1)
                      : Math.min(all.length - 1, Math.max(0, at + step));
  if (window.matchMedia('(max-width: 760px)').matches) setDrawer(true);
  all[next].focus();
  all[next].scrollIntoView({block: 'nearest'});
}

function onKey(event) {
  if (event.ctrlKey || event.altKey || event.metaKey) return;
  if (event.key === 'Escape') {
    if (isTyping(event.target)) event.target.blur();
    else if (drawerOpen()) setDrawer(false);
    return;
  }
  if (isTyping(event.target)) return;
  if (event.key === 'j' || event.key === 'k') {
    event.preventDefault();
    moveInList(event.key === 'j' ? 1 : -1);
  } else if (event.key === '/') {
    event.preventDefault();
    if (window.matchMedia('(max-width: 760px)').matches) setDrawer(true);
    $('search-input').focus();
  }
}

export function setUpNavigation() {
  $('drawer-toggle').addEventListener('click', () => setDrawer(!drawerOpen()));
  $('drawer-backdrop').addEventListener('click', () => setDrawer(false));
  window.addEventListener('hashchange', () => setDrawer(false));
  document.addEventListener('keydown', onKey);
}
