"""A named memory (docs/storage.md): a scenario kept on FalkorDB under its name, that many
processes attach to and write.

- catalog.py: create, read, list, drop and migrate memories;
- opening.py: attach (from a checkpoint, a half-applied event undone), create;
- writes.py: one write and its idempotency keys; live commits through tomc/engine/live.py;
- applier.py, submit.py, dead_letters.py: the applier `tomc serve` runs, its client, and
  the requests it could not apply;
- journal.py, agent_view.py, checkpoint.py: what each commit keeps beside the graphs (the
  agents' views of the world, the event hash and the checkpoint);
- acl.py, agent_live.py: the agents' own FalkorDB users, and a session reading as one.

This package sits above tomc.engine and below the surfaces (tomc.api, cli, mcp, web):
nothing under dsl, compiler, runtime or engine imports it (tests/test_layers.py). Its
__init__ imports nothing, so the thin client of `tomc memory apply` stays light.
"""
