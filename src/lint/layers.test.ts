// The layer rule (scripts/lint/layers.js, run by `make lint`) catches every
// import the layering once had: each case lints a real file of src/ with one
// of those imports put back and expects import-x/no-restricted-paths (or
// import-x/no-cycle) to refuse it. The unmodified file must pass, so the
// failure comes from the added import alone.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ENGINE_PARTS, LAYERS, TOOLS } from '../../scripts/lint/layers.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const eslint = new ESLint({ cwd: ROOT });

const RESTRICTED = 'import-x/no-restricted-paths';
const CYCLE = 'import-x/no-cycle';

async function ruleHits(file: string, extraImport?: string): Promise<{ rule: string; message: string }[]> {
  const path = join(ROOT, file);
  const text = readFileSync(path, 'utf8');
  const [result] = await eslint.lintText(extraImport ? `${extraImport}\n${text}` : text, { filePath: path });
  return (result?.messages ?? [])
    .filter((m) => m.ruleId === RESTRICTED || m.ruleId === CYCLE)
    .map((m) => ({ rule: m.ruleId ?? '', message: m.message }));
}

/** One import per fix of issue 9's layering review, put back into the file that had it (or its feature). */
const REVERTED_FIXES: { fix: string; file: string; line: string; rule?: string }[] = [
  {
    fix: 'config reads task names from model/recovery-tasks.ts, not the engine',
    file: 'src/config/task-lists.ts',
    line: "import { buildFlow } from '../engine/workflows/tasks.ts';",
  },
  {
    fix: "the webhook's certificate comes from @peculiar/x509, not the test control plane's PKI",
    file: 'src/webhook/tls.ts',
    line: "import { generateControlPlanePki } from '../../tools/controlplane/pki.ts';",
  },
  {
    fix: 'the engine uses src/fencing/, not the remediator (its wiring included)',
    file: 'src/engine/component.ts',
    line: "import { effectiveSpec } from '../remediation/decide.ts';",
  },
  {
    fix: 'the engine uses src/fencing/, not the remediator',
    file: 'src/engine/intake/decisions.ts',
    line: "import { effectiveSpec } from '../../remediation/decide.ts';",
  },
  {
    fix: 'the store takes its validators from domain/spec-validators.ts, not the reconcilers',
    file: 'src/store/admission/duplicate-claim.ts',
    line: "import { addStoreControllers } from '../../reconcilers/index.ts';",
  },
  {
    fix: 'the webhook takes its validators from domain/spec-validators.ts, not the reconcilers',
    file: 'src/webhook/rules.ts',
    line: "import { addStoreControllers } from '../reconcilers/index.ts';",
  },
  {
    fix: 'the domain owns the ComputeHostChecker port; the Nova adapter lives in openstack/',
    file: 'src/domain/compute-host-checker.ts',
    line: "import { NovaError } from '../openstack/types.ts';",
  },
  {
    fix: 'model imports nothing above it (REMEDIATION_RESOURCES live in k8s/resources.ts)',
    file: 'src/model/remediation-constants.ts',
    line: "import type { ResourceRef } from '../k8s/client.ts';",
  },
  {
    fix: 'the engine reaches the store through its door, store/index.ts (issue 34)',
    file: 'src/engine/notification-processor.ts',
    line: "import { sealedIntakeStanding as bypass } from '../store/admission/standing.ts';",
  },
  {
    fix: 'the reconcilers reach the store through its door, store/index.ts (issue 34)',
    file: 'src/reconcilers/admission.ts',
    line: "import type { StoreDeps as Bypass } from '../store/admission/create.ts';",
  },
  {
    fix: 'the commands reach the store through its door, store/index.ts (issue 34)',
    file: 'src/cli/purge/command.ts',
    line: "import { purgeNotifications as bypass } from '../../store/retention.ts';",
  },
  {
    fix: 'no upward arrow in the engine: workflows/ once imported ../recovery-driver.ts of src/engine/ (issue 34)',
    file: 'src/engine/workflows/driver.ts',
    line: "import { ENGINE_LEASE_NAME as up } from '../engine.ts';",
  },
  {
    fix: 'no upward arrow in the engine: a run never reaches back into the processor that starts it (issue 34)',
    file: 'src/engine/run/executor.ts',
    line: "import type { NotificationProcessor as Up } from '../notification-processor.ts';",
  },
  {
    fix: "the engine's parts in order: deps/ no longer takes IdSource from run/journal.ts (issue 34)",
    file: 'src/engine/deps/processor-deps.ts',
    line: "import type { RunJournal as Up } from '../run/journal.ts';",
  },
  {
    fix: "the engine's parts in order: Nova's side effects do not reach into the workflows that make them (issue 34)",
    file: 'src/engine/nova/server-locks.ts',
    line: "import type { WorkflowContext as Up } from '../workflows/context.ts';",
  },
  {
    fix: 'no import cycles',
    file: 'src/config/parsers.ts',
    line: "import { taskLists } from './task-lists.ts';\nexport const cycle = taskLists;",
    rule: CYCLE,
  },
];

for (const c of REVERTED_FIXES) {
  test(`the lint rule fails when undone: ${c.fix} (${c.file})`, async () => {
    assert.ok(existsSync(join(ROOT, c.file)), `${c.file} moved: point this case at the file that now holds the fix`);
    assert.equal(await ruleHits(c.file), [], `${c.file} must pass the layer rule as it is`);
    const hits = await ruleHits(c.file, c.line);
    const expected = c.rule ?? RESTRICTED;
    assert.ok(
      hits.some((h) => h.rule === expected),
      `expected ${expected} on ${c.file} with ${JSON.stringify(c.line)}; got ${JSON.stringify(hits)}`,
    );
  });
}

test('every folder of src/ with product code has a layer', () => {
  const placed = new Set(LAYERS.flatMap((l) => l.folders));
  const productFiles = (dir: string): boolean =>
    readdirSync(dir, { withFileTypes: true }).some((e) =>
      e.isDirectory()
        ? e.name !== 'testing' && productFiles(join(dir, e.name))
        : e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'),
    );
  const unplaced = readdirSync(join(ROOT, 'src'), { withFileTypes: true })
    .filter((e) =>
      e.isDirectory() ? e.name !== 'testing' && productFiles(join(ROOT, 'src', e.name)) : e.name.endsWith('.ts'),
    )
    .map((e) => e.name)
    .filter((name) => !placed.has(name));
  assert.equal(
    unplaced,
    [],
    'add these to LAYERS in scripts/lint/layers.js and to docs/design.md (tools go to tools/)',
  );
});

test("every folder of src/engine/ with product code is one of the engine's parts", () => {
  const parts = new Set(ENGINE_PARTS.map((p) => p.folder));
  const folders = readdirSync(join(ROOT, 'src/engine'), { withFileTypes: true })
    .filter((e) => e.isDirectory() && e.name !== 'testing')
    .map((e) => e.name);
  assert.equal(
    folders.filter((f) => !parts.has(f)),
    [],
    'add these to ENGINE_PARTS in scripts/lint/layers.js and to docs/design.md',
  );
  assert.equal(
    [...parts].filter((p) => !folders.includes(p)),
    [],
    'ENGINE_PARTS names folders that are gone',
  );
});

test('every folder of tools/ is in TOOLS, so the lint zones keep the product from importing it', () => {
  const folders = readdirSync(join(ROOT, 'tools'), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  assert.equal(folders, [...TOOLS].sort(), 'TOOLS in scripts/lint/layers.js names the folders of tools/');
});

test('product code may not import a tool', async () => {
  const hits = await ruleHits(
    'src/engine/component.ts',
    "import { startSimulator } from '../../tools/simulator/server.ts';",
  );
  assert.ok(
    hits.some((h) => h.rule === RESTRICTED && /development tools/.test(h.message)),
    `expected ${RESTRICTED} (development tools); got ${JSON.stringify(hits)}`,
  );
});

test.run();
