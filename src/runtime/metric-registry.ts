// The one way metrics are made in this process: get-or-create per Registry,
// so several components (or several controllers, or two engines in one test)
// can ask for the same metric and share it, telling themselves apart by label.
// prom-client itself throws when a name is registered twice.
import { Counter, Gauge, Histogram } from 'prom-client';
import type { Metric, Registry } from 'prom-client';

function existing<M>(registry: Registry | undefined, name: string): M | undefined {
  return registry?.getSingleMetric(name) as M | undefined;
}

const registers = (registry: Registry | undefined): Registry[] => (registry ? [registry] : []);

/** The registry's counter of this name, created on first use; with no registry, an unregistered one. */
export function counter(
  registry: Registry | undefined,
  name: string,
  help: string,
  labelNames: readonly string[] = [],
): Counter<string> {
  return (
    existing<Counter<string>>(registry, name) ?? new Counter({ name, help, labelNames, registers: registers(registry) })
  );
}

/** As counter(); `collect` runs at every scrape (for values read from elsewhere). */
export function gauge(
  registry: Registry | undefined,
  name: string,
  help: string,
  labelNames: readonly string[] = [],
  collect?: (this: Gauge<string>) => void,
): Gauge<string> {
  return (
    existing<Gauge<string>>(registry, name) ??
    new Gauge({ name, help, labelNames, collect, registers: registers(registry) })
  );
}

export function histogram(
  registry: Registry | undefined,
  name: string,
  help: string,
  labelNames: readonly string[],
  buckets: number[],
): Histogram<string> {
  return (
    existing<Histogram<string>>(registry, name) ??
    new Histogram({ name, help, labelNames, buckets, registers: registers(registry) })
  );
}

/** Attaches metrics made without a registry (module singletons) to one, once per name. */
export function registerOnce(registry: Registry, metrics: ReadonlyArray<Metric<string>>): void {
  for (const m of metrics) {
    const name = (m as unknown as { name: string }).name;
    if (!registry.getSingleMetric(name)) registry.registerMetric(m);
  }
}
