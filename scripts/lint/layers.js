// The layers of src/, lowest first (docs/design.md, "Layers"). A file may
// import its own layer and the layers below it, never a layer above: the
// eslint rule import-x/no-restricted-paths enforces it with the zones built
// here (eslint.config.js), and src/lint/layers.test.ts proves that each
// import the layering once had would fail it again.
//
// - Folders of an `isolated` layer (the features) may not import one another
//   either: what two features share moves down a layer (src/fencing/).
// - A feature's component.ts (src/api/component.ts, src/engine/component.ts,
//   ...) is the app layer's code kept beside its feature: it wires the
//   feature into the process (AppContext -> Component) and may therefore use
//   the app's contract and start other features (the api component runs the
//   store reconcilers and the admission webhook). Of another feature it may
//   import only the public entry, index.ts or component.ts, never internals.
// - TOOLS are the development and test programs, in tools/ beside src/ (the Nova
//   simulator, the throwaway control plane, the mini OpenStack): they may
//   import the product, the product never imports them.
// - The store has one door (STORE_DOOR): outside src/store/, product code
//   and tools import src/store/index.ts and no other file of the store, so
//   everything else in src/store/ stays private.
// - The engine is a tree (ENGINE_PARTS): each folder of src/engine/ is one
//   part of it and imports its own folder and the parts listed before it,
//   never the files of a folder above it (no upward arrow). The files of
//   src/engine/ itself (component.ts, engine.ts, notification-processor.ts)
//   assemble the parts; no part imports them.
// - Tests (*.test.ts) and test helpers (testing/ folders) are outside the
//   layers: they may import whatever they exercise.

/** Each feature's wiring into the process: part of the app layer (see above). */
export const COMPOSITION_ROOTS = 'src/*/component.ts';

/** Lowest first. `folders` are the names under src/ (a file for main.ts). */
export const LAYERS = [
  { name: 'base', folders: ['model', 'time', 'log', 'net'] },
  { name: 'domain', folders: ['domain'] },
  { name: 'adapters', folders: ['k8s', 'openstack'] },
  { name: 'runtime', folders: ['runtime', 'config'] },
  { name: 'store', folders: ['store'] },
  { name: 'shared features', folders: ['fencing'] },
  {
    name: 'features',
    folders: ['engine', 'reconcilers', 'remediation', 'webhook', 'api', 'ops', 'detection'],
    isolated: true,
  },
  { name: 'app', folders: ['app'], files: [COMPOSITION_ROOTS] },
  { name: 'entry points', folders: ['cli', 'main.ts'] },
];

/** The folders of tools/: development and test programs outside the product (see above). */
export const TOOLS = ['simulator', 'controlplane', 'openstack-cloud'];

/**
 * The parts of the engine, the folders of src/engine/, lowest first (docs/design.md, "The engine's tree"):
 * a part may import its own folder and the parts before it.
 */
export const ENGINE_PARTS = [
  { folder: 'intake', holds: 'the admitted notification and the pure decision tables' },
  { folder: 'status', holds: "the Notification's status writes: the coalesced writer, patch, byte budget" },
  { folder: 'nova', holds: 'Nova side effects of a run: the server locks and their sweep' },
  { folder: 'workflows', holds: "Masakari's recovery flows behind the RecoveryDriver" },
  { folder: 'deps', holds: "what the processor's parts are given: deps, leadership term, cache lookups" },
  { folder: 'telemetry', holds: 'Event reasons, phase Events and metrics' },
  { folder: 'run', holds: 'one recovery run: claim, executor, workflow, journal, finish, cancellation' },
  { folder: 'gates', holds: 'what holds a run back: brakes, BMC fence, fencing wait, restore guard' },
  { folder: 'periodic', holds: "Masakari's periodic tasks: retry, expiry, freshness" },
];

/** The one file of src/store/ that code outside src/store/ may import. */
export const STORE_DOOR = 'src/store/index.ts';

/** Files of src/ that are not product code, so no layer applies to them. */
export const OUTSIDE_LAYERS = [
  'src/**/*.test.ts',
  'src/**/testing/**',
  'src/testing/**',
  'tools/**/*.test.ts',
  'tools/**/testing/**',
];

const SEE = 'See docs/design.md, "Layers".';
const paths = (folders) => folders.map((f) => `src/${f}`);
const toolPaths = () => TOOLS.map((f) => `tools/${f}`);
/** The files a layer's rules apply to: its folders (a feature's component.ts belongs to the app layer) and files. */
const targets = (layer) => [
  ...(layer.isolated ? layer.folders.map((f) => `src/${f}/**/!(component).ts`) : paths(layer.folders)),
  ...(layer.files ?? []),
];

/** The zones of import-x/no-restricted-paths that encode LAYERS and TOOLS. */
export function layerZones() {
  const zones = [];
  LAYERS.forEach((layer, i) => {
    for (const above of LAYERS.slice(i + 1)) {
      zones.push({
        target: targets(layer),
        from: paths(above.folders),
        message: `The ${layer.name} layer (${layer.folders.join(', ')}) may not import the ${above.name} layer above it. ${SEE}`,
      });
    }
    if (layer.isolated) {
      for (const folder of layer.folders) {
        zones.push({
          target: targets({ ...layer, folders: [folder] }),
          from: paths(layer.folders.filter((f) => f !== folder)),
          message: `The ${layer.name} do not import one another (${folder} imports a sibling); move what they share down a layer. ${SEE}`,
        });
      }
    }
  });
  for (const layer of LAYERS.filter((l) => l.isolated)) {
    for (const folder of layer.folders) {
      zones.push({
        target: `src/${folder}/component.ts`,
        from: paths(layer.folders.filter((f) => f !== folder)),
        except: ['./index.ts', './component.ts'],
        message: `A feature's component.ts may start another feature through its index.ts or component.ts only, not import its internals. ${SEE}`,
      });
    }
  }
  zones.push(...engineZones());
  zones.push({
    target: [...LAYERS.flatMap((l) => paths(l.folders.filter((f) => f !== 'store'))), ...toolPaths()],
    from: 'src/store',
    except: ['./index.ts'],
    message: `Outside src/store/, import the store through its door, ${STORE_DOOR}; its other files are private. ${SEE}`,
  });
  zones.push({
    target: LAYERS.flatMap((l) => [...paths(l.folders), ...(l.files ?? [])]),
    from: toolPaths(),
    message: `Product code may not import the development tools (${TOOLS.join(', ')}). ${SEE}`,
  });
  return zones;
}

/** The engine's tree: no upward arrow, and each part imports only the parts before it (ENGINE_PARTS). */
function engineZones() {
  const SEE_ENGINE = 'See docs/design.md, "The engine\'s tree".';
  const part = (folder) => `src/engine/${folder}/**/*.ts`;
  const zones = [
    {
      target: 'src/engine/*/**/*.ts',
      from: 'src/engine/*.ts',
      message: `No upward arrow: a part of the engine never imports the files of src/engine/ itself, which assemble the parts; move what it needs down into a part. ${SEE_ENGINE}`,
    },
  ];
  ENGINE_PARTS.forEach(({ folder }, i) => {
    zones.push({
      target: `src/engine/${folder}/*/**/*.ts`,
      from: `src/engine/${folder}/*.ts`,
      message: `No upward arrow: a subfolder of src/engine/${folder}/ never imports the files of its parent folder. ${SEE_ENGINE}`,
    });
    const above = ENGINE_PARTS.slice(i + 1).map((p) => `src/engine/${p.folder}`);
    if (above.length > 0) {
      zones.push({
        target: part(folder),
        from: above,
        message: `The engine's part ${folder}/ may import only the parts before it (${
          ENGINE_PARTS.slice(0, i)
            .map((p) => `${p.folder}/`)
            .join(', ') || 'none'
        }), not ${above.map((a) => a.replace('src/engine/', '') + '/').join(', ')}. ${SEE_ENGINE}`,
      });
    }
  });
  return zones;
}
