"""The language server through a real LSP client session: pygls's LanguageClient starts
`python -m tomc lsp` and talks JSON-RPC to it over stdio."""

from __future__ import annotations

import asyncio
import sys

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

from conftest import REPO

GOOD = """use policy strict

policy strict {
  depth 2
  source wiki authority 3
  predicate door.code many
}

scenario demo {
  agents Sally, Anne
  rooms room

  Sally, Anne enter room
  in room: door.code = 1234
  claim marble.colour = red from wiki to all

  expect Anne believes door.code = {1234}
}
"""


def _pos(text: str, needle: str, occurrence: int = 0, offset: int = 0) -> types.Position:
    """The LSP position of the `occurrence`-th `needle` in `text` (plus `offset` chars)."""
    at = -1
    for _ in range(occurrence + 1):
        at = text.index(needle, at + 1)
    at += offset
    line = text.count("\n", 0, at)
    return types.Position(line=line, character=at - (text.rfind("\n", 0, at) + 1))


async def _session(tmp_path):
    client = LanguageClient("tomc-test", "1")
    published: dict[str, asyncio.Queue] = {}

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: types.PublishDiagnosticsParams):
        published.setdefault(params.uri, asyncio.Queue()).put_nowait(params.diagnostics)

    await client.start_io(sys.executable, "-m", "tomc", "lsp", cwd=str(REPO))
    await client.initialize_async(types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=from_fs_path(str(tmp_path))))
    client.initialized(types.InitializedParams())
    return client, published


async def _next(published, uri) -> list[types.Diagnostic]:
    queue = published.setdefault(uri, asyncio.Queue())
    return list(await asyncio.wait_for(queue.get(), timeout=60))


def _open(client, uri: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="tom", version=version,
                                             text=text)))


def _change(client, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


def test_lsp_session(tmp_path):
    asyncio.run(_lsp_session(tmp_path))


async def _lsp_session(tmp_path):
    path = tmp_path / "demo.tom"
    path.write_text(GOOD)
    uri = from_fs_path(str(path))
    client, published = await _session(tmp_path)
    doc = types.TextDocumentIdentifier(uri=uri)
    try:
        # diagnostics as you type: none, then two syntax errors and an unknown agent
        _open(client, uri, GOOD)
        assert await _next(published, uri) == []
        broken = GOOD.replace("Sally, Anne enter room", "Sally, Anne entr room").replace(
            "  rooms room\n", "  rooms room\n  Bob enters\n")
        _change(client, uri, broken, 2)
        found = await _next(published, uri)
        assert [(d.range.start.line, d.code) for d in found] == [(11, "E001"), (13, "E001")]
        assert "did you mean `enter`?" in found[1].message
        names = GOOD.replace("expect Anne believes", "expect Bob believes")
        _change(client, uri, names, 3)
        (unknown,) = await _next(published, uri)
        assert unknown.code == "E101" and unknown.range.start == _pos(names, "Bob")
        assert unknown.range.end.character == unknown.range.start.character + 3

        # hover while the text does not parse uses the last text that did
        _change(client, uri, GOOD, 4)
        assert await _next(published, uri) == []
        hover = await client.text_document_hover_async(types.HoverParams(
            text_document=doc, position=_pos(GOOD, "Anne", 1)))
        assert "**agent** `Anne` of scenario `demo`" in hover.contents.value
        assert "declared at line 10: `agents Sally, Anne`" in hover.contents.value
        key = await client.text_document_hover_async(types.HoverParams(
            text_document=doc, position=_pos(GOOD, "door.code", 2, offset=6)))
        assert "**key** `door.code`: cardinality many" in key.contents.value
        plain = await client.text_document_hover_async(types.HoverParams(
            text_document=doc, position=_pos(GOOD, "marble.colour")))
        assert "cardinality one (the default" in plain.contents.value
        source = await client.text_document_hover_async(types.HoverParams(
            text_document=doc, position=_pos(GOOD, "wiki", 1)))
        assert "**source** `wiki`, authority 3" in source.contents.value

        # go to definition: a room, a key declared by a predicate, a shipped policy
        room = await client.text_document_definition_async(types.DefinitionParams(
            text_document=doc, position=_pos(GOOD, "room", 3)))
        assert room.uri == uri and room.range.start == types.Position(line=10, character=8)
        predicate = await client.text_document_definition_async(types.DefinitionParams(
            text_document=doc, position=_pos(GOOD, "door.code", 1)))
        assert predicate.range.start == types.Position(line=5, character=12)
        inline = await client.text_document_definition_async(types.DefinitionParams(
            text_document=doc, position=_pos(GOOD, "strict")))
        assert inline.uri == uri and inline.range.start == types.Position(line=2, character=7)
        other = from_fs_path(str(tmp_path / "sally_anne.tom"))
        sally = (REPO / "scenarios" / "sally_anne.tom").read_text()
        _open(client, other, sally)
        assert await _next(published, other) == []
        shipped = await client.text_document_definition_async(types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=other),
            position=_pos(sally, "default")))
        assert shipped.uri.endswith("tomc/rules/default.tom")
        assert shipped.range.start.line == 2

        # completion: declared names of the scenario and keywords
        completion = await client.text_document_completion_async(types.CompletionParams(
            text_document=doc, position=types.Position(line=15, character=2)))
        labels = {item.label: item.kind for item in completion.items}
        assert labels["Sally"] == types.CompletionItemKind.Variable
        assert labels["room"] == types.CompletionItemKind.Module
        assert labels["wiki"] == types.CompletionItemKind.Reference
        assert labels["enters"] == labels["false_beliefs"] == types.CompletionItemKind.Keyword

        # formatting: one edit with the canonical text; none for a file that does not parse
        messy = GOOD.replace("  agents Sally, Anne", "agents   Sally,Anne")
        _change(client, uri, messy, 5)
        await _next(published, uri)
        edits = await client.text_document_formatting_async(types.DocumentFormattingParams(
            text_document=doc, options=types.FormattingOptions(tab_size=2, insert_spaces=True)))
        assert len(edits) == 1 and edits[0].new_text == GOOD
        _change(client, uri, broken, 6)
        await _next(published, uri)
        assert await client.text_document_formatting_async(types.DocumentFormattingParams(
            text_document=doc, options=types.FormattingOptions(tab_size=2,
                                                               insert_spaces=True))) is None
    finally:
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
