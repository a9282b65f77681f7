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
    """The LSP position of the `occurrence`-th `needle` in `text` (plus `offset` chars), in
    UTF-16 code units as LSP counts them by default."""
    at = -1
    for _ in range(occurrence + 1):
        at = text.index(needle, at + 1)
    at += offset
    line = text.count("\n", 0, at)
    before = text[text.rfind("\n", 0, at) + 1:at]
    return types.Position(line=line, character=len(before.encode("utf-16-le")) // 2)


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

        # completion: the keywords that fit at the cursor, and the names of the kind that
        # goes there (from the last text that parsed while this one does not)
        typing = GOOD[:GOOD.rindex("}")] + (
            "  expect Anne > \n  Sally enters \n  claim k = 1 from \n  ask Anne believes \n"
            "  agents \n  \n  expect \n  Sally \n}\n")
        _change(client, uri, typing, 5)
        await _next(published, uri)

        async def complete(needle: str, back: int = 0) -> dict:
            """The completions with the cursor `back` characters before `needle`'s end."""
            found = await client.text_document_completion_async(types.CompletionParams(
                text_document=doc, position=_pos(typing, needle, offset=len(needle) - back)))
            return {item.label: item.kind for item in found.items}

        assert await complete("expect Anne > ") == {
            "Sally": types.CompletionItemKind.Variable, "Anne": types.CompletionItemKind.Variable}
        assert await complete("Sally enters ") == {"room": types.CompletionItemKind.Module}
        assert await complete("from ") == {"wiki": types.CompletionItemKind.Reference,
                                           "Sally": types.CompletionItemKind.Variable,
                                           "Anne": types.CompletionItemKind.Variable}
        assert await complete("ask Anne believes ") == {
            "door.code": types.CompletionItemKind.Field,
            "marble.colour": types.CompletionItemKind.Field}
        assert await complete("agents ") == {}  # a new name: nothing declared fits
        start = await complete("agents \n  ")
        assert {"expect", "ask", "claim", "Sally"} <= start.keys()
        assert not {"enters", "room", "false_beliefs", "wiki", "depth"} & start.keys()
        after_expect = await complete("  expect \n", back=1)
        assert {"truth", "false_beliefs", "who_knows", "Anne"} <= after_expect.keys()
        assert "enters" not in after_expect and "room" not in after_expect
        after_agent = await complete("  Sally \n", back=1)
        assert {"enters", "moves", "tells", "says"} <= after_agent.keys()
        assert "Anne" not in after_agent and "expect" not in after_agent

        # formatting: one edit with the canonical text; none for a file that does not parse
        messy = GOOD.replace("  agents Sally, Anne", "agents   Sally,Anne")
        _change(client, uri, messy, 6)
        await _next(published, uri)
        edits = await client.text_document_formatting_async(types.DocumentFormattingParams(
            text_document=doc, options=types.FormattingOptions(tab_size=2, insert_spaces=True)))
        assert len(edits) == 1 and edits[0].new_text == GOOD
        _change(client, uri, broken, 7)
        await _next(published, uri)
        assert await client.text_document_formatting_async(types.DocumentFormattingParams(
            text_document=doc, options=types.FormattingOptions(tab_size=2,
                                                               insert_spaces=True))) is None
    finally:
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()


def test_lsp_positions_are_utf16_and_names_show_beside_syntax_errors(tmp_path):
    asyncio.run(_utf16(tmp_path))


async def _utf16(tmp_path):
    """Regression: columns were code points; LSP counts UTF-16 units (by default), so
    after an emoji (two units) every range was one unit short. And a syntax error hid the
    unknown names of the rest of the file."""
    text = GOOD.replace("  claim marble.colour = red from wiki to all\n",
                        '  Sally says note = "🙂🙂" 2\n'
                        '  claim note = "🙂" from Bob to Anne\n')
    path = tmp_path / "emoji.tom"
    uri = from_fs_path(str(path))
    client, published = await _session(tmp_path)
    try:
        _open(client, uri, text)
        syntax, unknown = await _next(published, uri)
        assert (syntax.code, unknown.code) == ("E001", "E103")
        assert syntax.range.start == _pos(text, '" 2', offset=2)
        assert syntax.range.start.character == text.split("\n")[14].index(" 2") + 1 + 2
        assert unknown.range.start == _pos(text, "Bob")
        assert unknown.range.end == _pos(text, "Bob", offset=3)
        hover = await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=_pos(text, "Anne\n", offset=1)))
        assert hover is None  # the text does not parse and none did before
        fixed = text.replace('" 2\n', '"\n').replace("from Bob", "from wiki")
        _change(client, uri, fixed, 2)
        assert await _next(published, uri) == []
        hover = await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=_pos(fixed, "Anne\n", offset=1)))
        assert "**agent** `Anne`" in hover.contents.value
        assert hover.range.start == _pos(fixed, "Anne\n")
        assert hover.range.end == _pos(fixed, "Anne\n", offset=4)
    finally:
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
