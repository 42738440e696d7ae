// The Masakari REST API as a client sees it behind a Service with two
// replicas: a call goes to one api process and, when that one is down or
// does not answer, is retried on the other, for a bounded time.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Small pages, so every run exercises paging (10 hosts per segment). */
const PAGE = 10;

export interface Reply<T> {
  status: number;
  json: T;
}

export class MasakariRest {
  private turn = 0;
  constructor(
    private readonly baseUrls: string[],
    private readonly budgetMs = 120_000,
  ) {}

  /** One call on one replica (no retry), e.g. to compare each replica's view. */
  async on<T>(replica: number, method: string, path: string, body?: unknown): Promise<Reply<T>> {
    const r = await fetch(`${this.baseUrls[replica]}/v1${path}`, {
      method,
      headers: {
        'content-type': 'application/json',
        'openstack-api-version': 'instance-ha 1.3',
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await r.text();
    return { status: r.status, json: (text ? JSON.parse(text) : undefined) as T };
  }

  /**
   * The call on the replicas in turn until one answers below 500 (or with a
   * status in `accept`). A write that timed out may have been applied: the
   * caller treats the 409 of its retry as success where that is what it means.
   */
  async call<T>(method: string, path: string, body?: unknown): Promise<Reply<T>> {
    const deadline = Date.now() + this.budgetMs;
    let last = '';
    while (Date.now() < deadline) {
      const replica = this.turn++ % this.baseUrls.length;
      try {
        const r = await this.on<T>(replica, method, path, body);
        if (r.status < 500) return r;
        last = `${r.status} ${JSON.stringify(r.json)}`;
      } catch (e) {
        last = (e as Error).message;
      }
      await sleep(250);
    }
    throw new Error(`${method} ${path}: no answer below 500 within ${this.budgetMs} ms (last: ${last})`);
  }

  /** Every page of a list (Masakari's limit/marker paging: the marker is the last item's integer id). */
  async list<T extends { id: number }>(replica: number, path: string, key: string): Promise<T[]> {
    const out: T[] = [];
    let marker: string | undefined;
    for (;;) {
      const sep = path.includes('?') ? '&' : '?';
      const r = await this.on<Record<string, T[]>>(
        replica,
        'GET',
        `${path}${sep}limit=${PAGE}${marker ? `&marker=${marker}` : ''}`,
      );
      if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${JSON.stringify(r.json)}`);
      const page = r.json[key] ?? [];
      out.push(...page);
      if (page.length < PAGE) return out;
      marker = String(page.at(-1)?.id);
    }
  }
}
