// The one way metrics are made in this process: get-or-create per Registry,
// so several components (or several controllers, or two engines in one test)
// can ask for the same metric and share it, telling themselves apart by label.
// prom-client itself throws when a name is registered twice.
import { Counter, Gauge, Histogram } from 'prom-client';
import type { Metric, Registry } from 'prom-client';

export interface MetricSpec<L extends string> {
  name: string;
  help: string;
  labelNames?: readonly L[];
}

function existing<M>(registry: Registry | undefined, name: string): M | undefined {
  return registry?.getSingleMetric(name) as M | undefined;
}

/** The registry's counter of this name, created on first use; with no registry, an unregistered one. */
export function counter<L extends string = string>(registry: Registry | undefined, spec: MetricSpec<L>): Counter<L> {
  return (
    existing<Counter<L>>(registry, spec.name) ?? new Counter<L>({ ...spec, registers: registry ? [registry] : [] })
  );
}

/** As counter(); `collect` runs at every scrape (for values read from elsewhere). */
export function gauge<L extends string = string>(
  registry: Registry | undefined,
  spec: MetricSpec<L> & { collect?: (this: Gauge<L>) => void },
): Gauge<L> {
  return existing<Gauge<L>>(registry, spec.name) ?? new Gauge<L>({ ...spec, registers: registry ? [registry] : [] });
}

export function histogram<L extends string = string>(
  registry: Registry | undefined,
  spec: MetricSpec<L> & { buckets: number[] },
): Histogram<L> {
  return (
    existing<Histogram<L>>(registry, spec.name) ?? new Histogram<L>({ ...spec, registers: registry ? [registry] : [] })
  );
}

/** Attaches metrics made without a registry (module singletons) to one, once per name. */
export function registerOnce(registry: Registry, metrics: ReadonlyArray<Metric<string>>): void {
  for (const m of metrics) {
    const name = (m as unknown as { name: string }).name;
    if (!registry.getSingleMetric(name)) registry.registerMetric(m);
  }
}
