# Loaded at start-up by every Python process of the mini cloud and of the
# reference Masakari the tests and benches compare against (PYTHONPATH;
# tools/openstack-cloud/config.ts sqliteImmediatePythonPath).
#
# oslo.db starts each SQLite transaction with a plain (deferred) BEGIN
# (oslo_db/sqlalchemy/engines.py _sqlite_emit_begin). Several processes and
# threads share one SQLite file; a deferred transaction that read first and
# then writes after another connection committed fails at once with
# "database is locked" (SQLite's busy timeout does not apply to a stale
# snapshot), which broke boots and evacuations in nova-conductor, and the reference
# masakari-engine's notification updates next to a test's helper script. BEGIN
# IMMEDIATE takes the write lock up front, so transactions queue on the busy
# timeout (?timeout=30 in the connection URLs) instead. Test harness only.
try:
    import sqlalchemy.event
    from sqlalchemy.engine import Engine
except ImportError:  # a process without SQLAlchemy (none of ours): nothing to do
    pass
else:

    @sqlalchemy.event.listens_for(Engine, "before_cursor_execute", retval=True)
    def _begin_immediate(conn, cursor, statement, parameters, context, executemany):
        if statement == "BEGIN" and conn.dialect.name == "sqlite":
            statement = "BEGIN IMMEDIATE"
        return statement, parameters
