# Records Masakari 22.0.0's answers to a scenario, for the golden tests in
# src/api/reference-transcripts.test.ts. It runs the real masakari-api WSGI
# stack in-process (api-paste.ini, noauth2, SQLite), with Nova's host check
# faked (compute-1..3 exist) and the engine RPC stubbed.
#
#   python record_reference.py < masakari-22.0.0-core.scenario.jsonl > masakari-22.0.0-core.reference.jsonl
#
# Needs a virtualenv with masakari==22.0.0 installed. Scenario lines are
# {"method", "path", "body"|"raw", "headers", "capture": {"name": "json.path"}}
# or engine stand-ins {"setStatus": …} / {"addVMove": …}; "{name}" in a path
# or body is replaced by a captured value.
import json, sys, os, tempfile, warnings
warnings.filterwarnings('ignore')
import masakari.conf
from masakari import rpc, objects
import oslo_messaging as messaging
CONF = masakari.conf.CONF
tmp = tempfile.mkdtemp()
CONF([], project='masakari')
CONF.set_override('auth_strategy', os.environ.get('AUTH', 'noauth2'))
CONF.set_override('connection', 'sqlite:///%s/m.db' % tmp, group='database')
CONF.set_override('notification_delay_max', 0)
CONF.set_override('connection', 'sqlite:///%s/t.db' % tmp, group='taskflow')
objects.register_all()
rpc.TRANSPORT = messaging.get_rpc_transport(CONF, url='fake:/')
rpc.NOTIFICATION_TRANSPORT = messaging.get_notification_transport(CONF, url='fake:/')
rpc.NOTIFIER = messaging.Notifier(rpc.NOTIFICATION_TRANSPORT, driver='noop')
from masakari.db.sqlalchemy import migration
migration.db_sync()
from masakari.compute import nova
from masakari import exception
KNOWN = {'compute-1', 'compute-2', 'compute-3'}
def find(self, context, name):
    if name not in KNOWN:
        raise exception.ComputeNotFoundByName(compute_name=name)
nova.API.find_compute_service = find
from masakari.engine import rpcapi
rpcapi.EngineAPI.process_notification = lambda self, ctx, n: None
def details(self, ctx, n):
    n.recovery_workflow_details = []
    return n
rpcapi.EngineAPI.get_notification_recovery_workflow_details = details
from paste import deploy
ini = os.environ.get('MASAKARI_PASTE_INI') or os.path.join(sys.prefix, 'etc', 'masakari', 'api-paste.ini')
app = deploy.loadapp('config:' + ini, name='masakari_api')
import webob
vars_ = {}
def subst(t):
    for k, v in vars_.items():
        t = t.replace('{' + k + '}', str(v))
    return t
def dig(doc, path):
    for part in path.split('.'):
        doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    return doc
for line in sys.stdin:
    if not line.strip():
        continue
    req = json.loads(line)
    if 'path' in req: req['path'] = subst(req['path'])
    if 'raw' in req: req['raw'] = subst(req['raw'])
    if 'body' in req:
        req['raw'] = subst(json.dumps(req['body']))
        req.setdefault('headers', {}).setdefault('Content-Type', 'application/json')
    if 'setStatus' in req:
        req['sql'] = "UPDATE notifications SET status='%s' WHERE notification_uuid='%s'" % (req['setStatus']['status'], subst(req['setStatus']['notification']))
    if 'addVMove' in req:
        a = req['addVMove']
        import uuid as _u
        vid = str(_u.uuid4())
        vars_[a['as']] = vid
        req['sql'] = ("INSERT INTO vmoves (created_at, deleted, uuid, notification_uuid, instance_uuid, instance_name, source_host, dest_host, start_time, type, status) "
                      "VALUES ('2026-01-01 00:00:00', 0, '%s', '%s', '%s', 'vm', 'compute-1', NULL, '2026-01-01 00:00:01.123456', 'evacuation', '%s')") % (vid, subst(a['notification']), a['instance'], a.get('status', 'pending'))
    if 'sql' in req:
        from masakari.db.sqlalchemy import api as dbapi
        import sqlalchemy
        eng = dbapi.get_engine()
        with eng.begin() as c:
            c.execute(sqlalchemy.text(subst(req['sql'])))
        print(json.dumps({'sql': True}), flush=True)
        continue
    kw = {'method': req['method'], 'headers': req.get('headers', {})}
    if 'raw' in req:
        kw['body'] = req['raw'].encode()
    r = webob.Request.blank(req['path'], **kw)
    r.environ['HTTP_HOST'] = 'localhost:15868'
    resp = r.get_response(app)
    for name, path in req.get('capture', {}).items():
        try: vars_[name] = dig(json.loads(resp.body), path)
        except Exception: vars_[name] = 'MISSING'
    print(json.dumps({'status': resp.status_int, 'headers': [[k.lower(), v] for k, v in resp.headerlist], 'body': resp.body.decode('utf-8', 'replace')}), flush=True)
