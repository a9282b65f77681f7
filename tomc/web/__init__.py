"""The HTTP API and the live console of tomc's named memories (`tomc http`; docs/http.md,
docs/console.md): FastAPI over the same Session methods the CLI and MCP call.

    from tomc.web.app import create_app
    app = create_app(database, memories=["support"])    # None: every memory on the server
    # uvicorn.run(app, host="127.0.0.1", port=8780)

Every request carries a token from `tomc token issue` (tomc/runtime/tokens.py): a
supervisor token writes and asks everything about its memory; an agent token reads only
that agent's mind (as `tomc memory --as`), and is refused another mind (403).
"""
