// A pane's refresh while it is shown: once at once, then every few seconds the page is
// visible; stopped when the pane is hidden, the session ends or the view goes.

const REFRESH_MS = 3000;

export class Poller {
  constructor(refresh, everyMs = REFRESH_MS) {
    this.refresh = refresh;
    this.everyMs = everyMs;
    this.timer = null;
  }

  /** Refreshes now and from now on when `on`; stops otherwise. */
  set(on) {
    clearInterval(this.timer);
    this.timer = null;
    if (!on) return;
    this.refresh();
    this.timer = setInterval(() => {
      if (!document.hidden) this.refresh();
    }, this.everyMs);
  }
}
