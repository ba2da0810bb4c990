// Syntax highlighting of the notebook's code, with Highlight.js (vendor/highlight/, vendored
// by its update.sh): its core and the grammars of the languages the code-interpreter recipe
// has kernels for. The page requires Trusted Types, so nothing goes through an HTML parser:
// the highlighted nodes are built from the token tree Highlight.js leaves beside its HTML
// (`_emitter.root`: strings, and nodes with a scope and children), text as text nodes.

import hljs from '../vendor/highlight/core.min.js';
import python from '../vendor/highlight/languages/python.min.js';
import javascript from '../vendor/highlight/languages/javascript.min.js';
import typescript from '../vendor/highlight/languages/typescript.min.js';
import r from '../vendor/highlight/languages/r.min.js';
import bash from '../vendor/highlight/languages/bash.min.js';
import java from '../vendor/highlight/languages/java.min.js';

/** Kernel languages (a runtime's `kernels` keys) and the grammar of each. */
const GRAMMARS = { python, javascript, typescript, r, bash, java };
/** Code longer than this is shown plain: highlighting runs at every key press (~10 ms for this). */
const MAX_HIGHLIGHTED_CHARS = 10_000;

for (const [name, grammar] of Object.entries(GRAMMARS)) hljs.registerLanguage(name, grammar);

/** Whether `language` (a kernel's name) is highlighted. */
export function highlights(language) {
  return Object.hasOwn(GRAMMARS, language);
}

/** Fills `target` with `code` highlighted as `language`, or as plain text. */
export function highlightInto(target, code, language) {
  const tree = highlights(language) && code.length <= MAX_HIGHLIGHTED_CHARS ? tokens(code, language) : null;
  if (!tree) {
    target.replaceChildren(code);
    return;
  }
  const fragment = document.createDocumentFragment();
  appendTokens(fragment, tree);
  target.replaceChildren(fragment);
}

function tokens(code, language) {
  try {
    return hljs.highlight(code, { language, ignoreIllegals: true })._emitter?.root ?? null;
  } catch {
    return null;
  }
}

function appendTokens(parent, node) {
  for (const child of node.children || []) {
    if (typeof child === 'string') {
      parent.append(child);
      continue;
    }
    const span = document.createElement('span');
    if (child.scope) span.className = scopeClass(child.scope);
    appendTokens(span, child);
    parent.append(span);
  }
}

/** Highlight.js's class names for a scope: `title.function` is `hljs-title function_`. */
function scopeClass(scope) {
  if (scope.startsWith('language:')) return `language-${scope.slice('language:'.length)}`;
  const [first, ...rest] = scope.split('.');
  return [`hljs-${first}`, ...rest.map((piece, i) => `${piece}${'_'.repeat(i + 1)}`)].join(' ');
}
