// DOM helpers. Every value from the service, a sandbox or a client is put on the page as text
// (text nodes, textContent, attribute values), never parsed as HTML: the page's policy
// requires Trusted Types with no policy at all, so an HTML sink would throw even by mistake.

const nonceMeta = document.querySelector('meta[name="sandboxd-style-nonce"]');
/** This answer's style nonce: the page's policy admits <style> elements that carry it. */
export const styleNonce = nonceMeta ? nonceMeta.content : '';

// The terminal library adds <style> elements of its own; the page's policy admits them only
// with this answer's nonce. Style attributes stay forbidden (CSSOM properties are used).
if (styleNonce) {
  const createElement = Document.prototype.createElement;
  Document.prototype.createElement = function (tagName, options) {
    const element = createElement.call(this, tagName, options);
    if (typeof tagName === 'string' && tagName.toLowerCase() === 'style') {
      element.nonce = styleNonce;
    }
    return element;
  };
}

/**
 * Builds an element: h('td', {class: 'num', title: x}, 'text', child, [more]).
 * Attribute keys: class, text, dataset (object), on<event> (function), hidden/disabled/...
 * (booleans), anything else through setAttribute. Children: strings and numbers become text
 * nodes; null, undefined and false are skipped; arrays are flattened.
 */
export function h(tag, attrs, ...children) {
  const element = document.createElement(tag);
  if (attrs) {
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (key === 'class') element.className = value;
      else if (key === 'text') element.textContent = String(value);
      else if (key === 'dataset') Object.assign(element.dataset, value);
      else if (key.startsWith('on') && typeof value === 'function') {
        element.addEventListener(key.slice(2), value);
      } else if (key === 'style' || key === 'innerHTML' || key === 'srcdoc') {
        throw new Error(`h(): ${key} is not allowed`);
      } else if (value === true) element.setAttribute(key, '');
      else element.setAttribute(key, String(value));
    }
  }
  append(element, children);
  return element;
}

export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

/** Replaces an element's children. */
export function fill(parent, ...children) {
  parent.replaceChildren();
  return append(parent, children);
}

export function byId(id) {
  const element = document.getElementById(id);
  if (!element) throw new Error(`no element #${id}`);
  return element;
}

export function setText(element, text) {
  const value = text === undefined || text === null ? '' : String(text);
  if (element.textContent !== value) element.textContent = value;
}

export function show(element, visible = true) {
  element.hidden = !visible;
}

/**
 * A button that asks once more before doing something that cannot be undone: the first
 * click turns it into "Really …?" for a few seconds, the second one acts.
 */
export function confirmButton(label, confirmLabel, action, attrs = {}) {
  let armed = null;
  const button = h('button', { type: 'button', class: 'btn btn-small btn-danger-ghost', ...attrs }, label);
  const disarm = () => {
    clearTimeout(armed);
    armed = null;
    button.textContent = label;
    button.classList.remove('armed');
  };
  button.addEventListener('click', async (event) => {
    event.stopPropagation();
    if (!armed) {
      button.textContent = confirmLabel;
      button.classList.add('armed');
      armed = setTimeout(disarm, 4000);
      return;
    }
    disarm();
    button.disabled = true;
    try {
      await action();
    } finally {
      button.disabled = false;
    }
  });
  return button;
}

/** A small inline SVG icon from a path list (no markup strings involved). */
export function icon(name) {
  const paths = ICONS[name] || [];
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  svg.setAttribute('class', `icon icon-${name}`);
  for (const d of paths) {
    const path = document.createElementNS('http://www.w3.org/2000/svg', 'path');
    path.setAttribute('d', d);
    svg.append(path);
  }
  return svg;
}

const ICONS = {
  folder: ['M3 6.5A1.5 1.5 0 0 1 4.5 5h4l2 2h9A1.5 1.5 0 0 1 21 8.5v9a1.5 1.5 0 0 1-1.5 1.5h-15A1.5 1.5 0 0 1 3 17.5z'],
  file: ['M6 3h8l4 4v14H6z', 'M14 3v4h4'],
  link: ['M10 14a4 4 0 0 0 5.7 0l3-3a4 4 0 0 0-5.7-5.7l-1 1', 'M14 10a4 4 0 0 0-5.7 0l-3 3a4 4 0 0 0 5.7 5.7l1-1'],
  other: ['M12 3a9 9 0 1 0 0 18a9 9 0 1 0 0-18z', 'M12 8v5M12 16v.5'],
  up: ['M12 19V5M6 11l6-6 6 6'],
  refresh: ['M20 12a8 8 0 1 1-2.3-5.6', 'M20 4v5h-5'],
  upload: ['M12 16V4M7 9l5-5 5 5', 'M4 16v3a1 1 0 0 0 1 1h14a1 1 0 0 0 1-1v-3'],
  download: ['M12 4v12M7 11l5 5 5-5', 'M4 16v3a1 1 0 0 0 1 1h14a1 1 0 0 0 1-1v-3'],
  copy: ['M9 9h11v11H9z', 'M5 15H4V4h11v1'],
  play: ['M7 4l13 8-13 8z'],
  stop: ['M6 6h12v12H6z'],
  trash: ['M4 7h16M9 7V4h6v3M6 7l1 13h10l1-13'],
};

/**
 * Says when a wide table scrolls sideways (on a phone): a hint above it while its content is
 * wider than its box.
 */
export function scrollHint(wrap) {
  const hint = h('p', { class: 'scroll-hint', hidden: true, 'aria-hidden': 'true' }, 'Scroll sideways for more columns →');
  wrap.before(hint);
  const check = () => {
    const scrolls = wrap.scrollWidth > wrap.clientWidth + 1;
    hint.hidden = !scrolls;
    wrap.classList.toggle('scrolls', scrolls);
  };
  new ResizeObserver(check).observe(wrap);
  if (wrap.firstElementChild) new ResizeObserver(check).observe(wrap.firstElementChild);
  wrap.addEventListener('sandboxd:resized', check);
  return check;
}

/** Hands a blob to the browser as a download named `name`. */
export function saveBlob(blob, name) {
  const url = URL.createObjectURL(blob);
  const link = h('a', { href: url, download: name, class: 'visually-hidden' });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 30_000);
}
