// The API reference at /docs/api: Swagger UI (vendored) over the service's OpenAPI document,
// which it fetches with a token like any API request. The token is asked for here (or taken
// from this tab's dashboard when it kept one), held in memory only, and sent as the
// `Authorization` header of "Try it out" requests too: never in a URL or a cookie.
//
// The page requires Trusted Types. Swagger UI writes HTML (the descriptions' Markdown, already
// sanitized by it) through innerHTML; the default policy below lets HTML through only after
// DOMPurify has sanitized it once more, so nothing reaches a sink unsanitized.
'use strict';

(() => {
  const DASHBOARD_TOKEN_KEY = 'sandboxd.token';
  trustedTypes.createPolicy('default', {
    createHTML: (html) => DOMPurify.sanitize(html),
  });

  const form = document.getElementById('docs-signin');
  const input = document.getElementById('docs-token');
  const error = document.getElementById('docs-error');

  async function show(token) {
    const response = await fetch('/v1/openapi.json', { headers: { Authorization: `Bearer ${token}` } });
    if (!response.ok) {
      throw new Error(response.status === 401 ? 'The service refused this token.' : `The service answered ${response.status}.`);
    }
    const spec = await response.json();
    form.hidden = true;
    SwaggerUIBundle({
      spec,
      dom_id: '#swagger-ui',
      deepLinking: true,
      validatorUrl: null,
      requestInterceptor: (request) => {
        request.headers.Authorization = `Bearer ${token}`;
        return request;
      },
    });
  }

  function ask(message) {
    form.hidden = false;
    error.hidden = !message;
    error.textContent = message || '';
    input.focus();
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const token = input.value.trim();
    input.value = '';
    show(token).catch((failure) => ask(failure.message));
  });

  const kept = sessionStorage.getItem(DASHBOARD_TOKEN_KEY);
  if (kept) show(kept).catch((failure) => ask(failure.message));
  else ask('');
})();
