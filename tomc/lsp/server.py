"""The language server: pygls features over the checker, the formatter and `Symbols`.

- diagnostics as you type: every open document is checked on open, change and save, and its
  diagnostics (syntax, names, policy) are published with their ranges, codes and hints;
- formatting: the whole document in canonical form (`tomc fmt`), nothing when it does not parse;
- hover: an agent, room, source or key shows its declaration (a key, its cardinality);
- go to definition: from a name or key to the line declaring it (a shipped or imported
  policy file included);
- completion: the keywords the grammar takes at the cursor and, where a name goes, the
  declared names of its kind (tomc/lsp/completion.py).

Positions: LSP lines and characters are 0-based, the AST's 1-based. The AST's columns count
code points; LSP characters count the position encoding's units (UTF-16 unless the client
offers another): pygls's position codec converts both ways, on the document's lines as the
parser splits them (at `\n` only).
"""

from __future__ import annotations

from typing import Optional

from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import PositionCodec, TextDocument
from pygls.workspace.position_codec import ServerTextPosition

from tomc import __version__
from tomc.dsl import ast
from tomc.dsl.checker import check_text
from tomc.dsl.diagnostics import Diagnostic, DiagnosticError
from tomc.dsl.formatter import format_file
from tomc.dsl.parser import parse
from tomc.lsp.completion import complete
from tomc.lsp.symbols import Symbols

server = LanguageServer("tomc", __version__)
_last_good: dict[str, Symbols] = {}  # uri -> symbols of its last text that parsed


def _path(uri: str) -> str:
    return to_fs_path(uri) or uri


def _range(span: Optional[ast.Span], text: str, codec: PositionCodec) -> types.Range:
    """The LSP range of `span` (1-based, code points) in `text`, in the client's units."""
    if span is None:
        return types.Range(start=types.Position(line=0, character=0),
                           end=types.Position(line=0, character=1))
    lines = text.split("\n")
    start = ServerTextPosition(span.line - 1, span.column - 1)
    end = ServerTextPosition(span.end_line - 1, max(span.end_column - 1, span.column))
    return types.Range(start=codec.position_to_client_units(lines, start),
                       end=codec.position_to_client_units(lines, end))


def _cursor(document: TextDocument, position: types.Position) -> tuple[int, int]:
    """The 1-based line and column (code points) of an LSP position in `document`."""
    lines = document.source.split("\n")
    at = document.position_codec.position_from_client_units(
        lines, types.Position(line=position.line, character=position.character))
    return at.line + 1, at.character + 1


def _diagnostic(d: Diagnostic, own_path: str, text: str,
                codec: PositionCodec) -> types.Diagnostic:
    message = d.message + (f"\n{d.hint}" if d.hint else "")
    elsewhere = d.path != own_path  # a problem in the policy file the document uses
    return types.Diagnostic(
        range=_range(None if elsewhere else d.span, text, codec),
        message=f"{d.path}:{d.span.line if d.span else 1}: {message}" if elsewhere else message,
        severity=(types.DiagnosticSeverity.Error if d.severity == "error"
                  else types.DiagnosticSeverity.Warning),
        code=d.code, source="tomc")


def _symbols(uri: str, source: str) -> Optional[Symbols]:
    """Symbols of the document; those of its last good text while it does not parse."""
    try:
        file = parse(source, _path(uri))
    except DiagnosticError:
        return _last_good.get(uri)
    _last_good[uri] = Symbols(file, source, _path(uri))
    return _last_good[uri]


def validate(ls: LanguageServer, uri: str) -> None:
    """Check the document and publish its diagnostics."""
    document = ls.workspace.get_text_document(uri)
    path = _path(uri)
    result = check_text(document.source, path)
    _symbols(uri, document.source)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
        uri=uri, version=document.version,
        diagnostics=[_diagnostic(d, path, document.source, document.position_codec)
                     for d in result.diagnostics]))


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: LanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    validate(ls, params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: LanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    validate(ls, params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: LanguageServer, params: types.DidSaveTextDocumentParams) -> None:
    validate(ls, params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: LanguageServer, params: types.DidCloseTextDocumentParams) -> None:
    _last_good.pop(params.text_document.uri, None)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
        uri=params.text_document.uri, diagnostics=[]))


@server.feature(types.TEXT_DOCUMENT_FORMATTING)
def formatting(ls: LanguageServer,
               params: types.DocumentFormattingParams) -> Optional[list[types.TextEdit]]:
    document = ls.workspace.get_text_document(params.text_document.uri)
    try:
        formatted = format_file(parse(document.source, _path(document.uri)))
    except DiagnosticError:
        return None  # the diagnostics already say why
    if formatted == document.source:
        return []
    lines = document.source.split("\n")
    whole = types.Range(start=types.Position(line=0, character=0),
                        end=types.Position(line=len(lines), character=0))
    return [types.TextEdit(range=whole, new_text=formatted)]


def _target(ls: LanguageServer, uri: str, position: types.Position):
    document = ls.workspace.get_text_document(uri)
    symbols = _symbols(uri, document.source)
    if symbols is None:
        return document, None, None
    return document, symbols, symbols.at(*_cursor(document, position))


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: LanguageServer, params: types.HoverParams) -> Optional[types.Hover]:
    document, symbols, target = _target(ls, params.text_document.uri, params.position)
    text = symbols.hover(target) if target else None
    if text is None:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
                       range=_range(target.span, document.source, document.position_codec))


@server.feature(types.TEXT_DOCUMENT_DEFINITION)
def definition(ls: LanguageServer,
               params: types.DefinitionParams) -> Optional[types.Location]:
    document, symbols, target = _target(ls, params.text_document.uri, params.position)
    decl = symbols.definition(target) if target else None
    if decl is None:
        return None
    if decl.path is None:
        return types.Location(uri=params.text_document.uri, range=_range(
            decl.span, document.source, document.position_codec))
    try:  # the policy file declaring it: its columns in its own text
        text = Path(decl.path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = ""
    return types.Location(uri=from_fs_path(decl.path),
                          range=_range(decl.span, text, document.position_codec))


_KINDS = {"agent": types.CompletionItemKind.Variable, "room": types.CompletionItemKind.Module,
          "source": types.CompletionItemKind.Reference, "key": types.CompletionItemKind.Field,
          "procedure": types.CompletionItemKind.Function,
          "policy": types.CompletionItemKind.Module,
          "keyword": types.CompletionItemKind.Keyword}


@server.feature(types.TEXT_DOCUMENT_COMPLETION)
def completion(ls: LanguageServer, params: types.CompletionParams) -> types.CompletionList:
    """What fits at the cursor: keywords the grammar takes there, names of the kind that
    goes there (tomc/lsp/completion.py)."""
    document = ls.workspace.get_text_document(params.text_document.uri)
    symbols = _symbols(document.uri, document.source)
    line, column = _cursor(document, params.position)
    items = [types.CompletionItem(
        label=c.label, kind=_KINDS[c.kind],
        detail=f"{c.kind}: {c.detail}" if c.detail else c.kind)
        for c in complete(document.source, line, column, symbols)]
    return types.CompletionList(is_incomplete=False, items=items)


def main() -> None:
    """Serve LSP on stdin/stdout until the client says exit."""
    server.start_io()


__all__ = ["server", "main"]
