import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { thrown } from '../testing/expect-error.ts';
import type { RecoveryFlow } from '../model/recovery-tasks.ts';
import { parseMasakariTaskString, taskLists } from './task-lists.ts';
import { InvalidValue } from './parsers.ts';

const rejection = (raw: unknown, flow: RecoveryFlow = 'instance failure'): string =>
  thrown(() => taskLists(flow).parse(raw), InvalidValue).requirement;

test("Masakari's sample string form parses into pre, main and post", () => {
  assert.equal(
    parseMasakariTaskString(
      "pre:['disable_compute_service_task'],main:['prepare_HA_enabled_instances_task', 'evacuate_instances_task'],post:[]",
    ),
    {
      pre: ['disable_compute_service_task'],
      main: ['prepare_HA_enabled_instances_task', 'evacuate_instances_task'],
      post: [],
    },
  );
});

test('the string form tolerates spaces, double quotes and unquoted names', () => {
  assert.equal(parseMasakariTaskString(' pre : [ "no_op" , no_op ] , main:[], post :[ ] '), {
    pre: ['no_op', 'no_op'],
    main: [],
    post: [],
  });
});

test('the brace form with quoted keys, which upstream documents but rejects, is accepted', () => {
  assert.equal(taskLists('instance failure').parse("{'pre': ['stop_instance_task'], 'main': ['start_instance_task'], 'post': []}"), {
    pre: ['stop_instance_task'],
    main: ['start_instance_task'],
    post: [],
  });
});

test('malformed string forms are rejected with the reason', () => {
  assert.match(rejection("pre:['no_op'"), 'unbalanced quotes or brackets');
  assert.match(rejection("pre:'no_op',main:[],post:[]"), 'the value of pre must be in [ ]');
  assert.match(rejection('pre,main:[],post:[]'), 'entry "pre" has no "key:"');
  assert.match(rejection('pre:[],pre:[],main:[],post:[]'), 'pre is given twice');
  assert.match(rejection('pre:[],main:[],post:[],extra:[]'), 'unknown key extra');
  assert.match(rejection('{pre: [no_op}'), 'not a valid {...} map');
});

test('a task of another recovery is rejected naming the recovery it belongs to', () => {
  assert.match(
    rejection({ pre: ['stop_instance_task'], main: [], post: [] }, 'host failure'),
    '"stop_instance_task" in pre belongs to the instance failure recovery, not the host failure recovery',
  );
  assert.match(
    rejection({ pre: [], main: ['evacuate_instances_task'], post: [] }, 'process failure'),
    '"evacuate_instances_task" in main belongs to the host failure recovery, not the process failure recovery',
  );
});

test('no_op fits every recovery', () => {
  for (const flow of ['host failure', 'instance failure', 'process failure'] as const) {
    assert.equal(taskLists(flow).parse('pre:[no_op],main:[],post:[]'), { pre: ['no_op'], main: [], post: [] });
  }
});

test('a list that is not a list, or a name that is not a string, is rejected', () => {
  assert.match(rejection({ pre: 'no_op', main: [], post: [] }), 'pre is not a list');
  assert.match(rejection({ pre: [1], main: [], post: [] }), '1 in pre is not a known task');
  assert.match(rejection(42), 'must be a map with the keys pre, main and post');
});

test.run();
