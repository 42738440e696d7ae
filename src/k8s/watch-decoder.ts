// Decodes a watch response body: newline-delimited JSON WatchEvents, split
// across arbitrary chunk boundaries.
import { KubeError } from './client.ts';
import type { WatchEvent } from './client.ts';
import { errorFromStatus } from './errors.ts';

const EVENT_TYPES = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);

export class WatchLineDecoder<T> {
  private buffer = '';
  /**
   * Set when the stream must end with an error: an ERROR event (delivered to
   * onEvent first, then surfaced as a KubeError built from its Status, e.g.
   * 410 Expired), a line that is not a watch event, or onEvent throwing.
   */
  failed: unknown;

  constructor(
    private readonly what: string,
    private readonly onEvent: (e: WatchEvent<T>) => void,
  ) {}

  push(chunk: string): void {
    this.buffer += chunk;
    let nl: number;
    while (!this.failed && (nl = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + 1);
      this.line(line);
    }
  }

  /** The server ended the stream; a final line without newline still counts. */
  end(): void {
    if (!this.failed && this.buffer.trim()) this.line(this.buffer);
    this.buffer = '';
  }

  private line(raw: string): void {
    const line = raw.trim();
    if (!line) return;
    let event: WatchEvent<T>;
    try {
      event = JSON.parse(line) as WatchEvent<T>;
    } catch {
      this.failed = new KubeError(0, 'InvalidWatchEvent', `${this.what}: undecodable line ${line.slice(0, 120)}`);
      return;
    }
    if (!event || !EVENT_TYPES.has(event.type) || typeof event.object !== 'object' || event.object === null) {
      this.failed = new KubeError(0, 'InvalidWatchEvent', `${this.what}: not a watch event: ${line.slice(0, 120)}`);
      return;
    }
    try {
      this.onEvent(event);
    } catch (err) {
      this.failed = err;
      return;
    }
    if (event.type === 'ERROR') this.failed = errorFromStatus(event.object, this.what);
  }
}
