// Requests held on their way in (a test knob, like the faults): the next
// `count` Keystone/Nova requests matching a rule wait, unanswered and not yet
// acted on, until the test releases them; then they are served as usual. The
// chaos suite holds an engine's `unlock`, freezes that engine, and lets the
// request land only after another engine has taken over, as a request stuck
// in a slow network would. Control routes: control.ts (/_sim/holds).

/** Holds the next `count` requests matching method, path prefix and server action (the body's one key). */
export interface SimHoldRule {
  method?: string;
  path: string;
  /** A server action such as 'unlock' (Nova's POST /servers/{id}/action body {"unlock": null}). */
  action?: string;
  count: number;
}

export interface SimHeldRequest {
  id: number;
  method: string;
  path: string;
  action: string | null;
  /** When it arrived (ISO). */
  at: string;
}

/** The action a request body names: its one key, as Nova reads `{"unlock": null}`. */
function actionOf(body: unknown): string | null {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return null;
  const keys = Object.keys(body);
  return keys.length === 1 ? (keys[0] as string) : null;
}

export class SimHolds {
  rules: SimHoldRule[] = [];
  private readonly waiting = new Map<number, { request: SimHeldRequest; release: () => void }>();
  private nextId = 1;

  add(rule: SimHoldRule): SimHoldRule {
    this.rules.push(rule);
    return rule;
  }

  /** Undefined when no rule matches; else a promise that resolves when the request is released. */
  hold(method: string, path: string, body: unknown): Promise<void> | undefined {
    const action = actionOf(body);
    const rule = this.rules.find(
      (r) =>
        r.count > 0 &&
        (!r.method || r.method.toUpperCase() === method) &&
        path.startsWith(r.path) &&
        (!r.action || r.action === action),
    );
    if (!rule) return undefined;
    rule.count--;
    this.rules = this.rules.filter((r) => r.count > 0);
    const request: SimHeldRequest = { id: this.nextId++, method, path, action, at: new Date().toISOString() };
    return new Promise<void>((resolve) => this.waiting.set(request.id, { request, release: resolve }));
  }

  /** The requests waiting now, oldest first. */
  held(): SimHeldRequest[] {
    return [...this.waiting.values()].map((w) => w.request);
  }

  /** Lets one held request (or all of them) through; returns how many. */
  release(id?: number): number {
    const ids = id === undefined ? [...this.waiting.keys()] : this.waiting.has(id) ? [id] : [];
    for (const i of ids) {
      this.waiting.get(i)?.release();
      this.waiting.delete(i);
    }
    return ids.length;
  }

  /** No rule left, every held request let through (reset, stop). */
  clear(): number {
    this.rules = [];
    return this.release();
  }
}
