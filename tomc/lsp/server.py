"""The language server: pygls features over the checker, the formatter and `Symbols`.

- diagnostics as you type: every open document is checked on open, change and save, and its
  diagnostics (syntax, names, policy) are published with their ranges, codes and hints;
- formatting: the whole document in canonical form (`tomc fmt`), nothing when it does not parse;
- hover: an agent, room, source or key shows its declaration (a key, its cardinality);
- go to definition: from a name or key to the line declaring it (a shipped or imported
  policy file included);
- completion: the declared names of the scenario at the cursor and the grammar's keywords.

Positions: LSP lines and characters are 0-based, the AST's 1-based. Columns count code
points, as the parser does (clients that count UTF-16 units see a shift after astral
characters only).
"""

from __future__ import annotations

from typing import Optional

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from tomc import __version__
from tomc.dsl import ast
from tomc.dsl.checker import check_text
from tomc.dsl.diagnostics import Diagnostic, DiagnosticError
from tomc.dsl.formatter import format_file
from tomc.dsl.parser import keywords, parse
from tomc.lsp.symbols import Symbols

server = LanguageServer("tomc", __version__)
_last_good: dict[str, Symbols] = {}  # uri -> symbols of its last text that parsed


def _path(uri: str) -> str:
    return to_fs_path(uri) or uri


def _range(span: Optional[ast.Span]) -> types.Range:
    if span is None:
        return types.Range(start=types.Position(line=0, character=0),
                           end=types.Position(line=0, character=1))
    return types.Range(start=types.Position(line=span.line - 1, character=span.column - 1),
                       end=types.Position(line=span.end_line - 1,
                                          character=max(span.end_column - 1, span.column)))


def _diagnostic(d: Diagnostic, own_path: str) -> types.Diagnostic:
    message = d.message + (f"\n{d.hint}" if d.hint else "")
    elsewhere = d.path != own_path  # a problem in the policy file the document uses
    return types.Diagnostic(
        range=_range(None if elsewhere else d.span),
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
        diagnostics=[_diagnostic(d, path) for d in result.diagnostics]))


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
        return None, None
    return symbols, symbols.at(position.line + 1, position.character + 1)


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: LanguageServer, params: types.HoverParams) -> Optional[types.Hover]:
    symbols, target = _target(ls, params.text_document.uri, params.position)
    text = symbols.hover(target) if target else None
    if text is None:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
                       range=_range(target.span))


@server.feature(types.TEXT_DOCUMENT_DEFINITION)
def definition(ls: LanguageServer,
               params: types.DefinitionParams) -> Optional[types.Location]:
    symbols, target = _target(ls, params.text_document.uri, params.position)
    decl = symbols.definition(target) if target else None
    if decl is None:
        return None
    uri = from_fs_path(decl.path) if decl.path else params.text_document.uri
    return types.Location(uri=uri, range=_range(decl.span))


_KINDS = {"agent": types.CompletionItemKind.Variable, "room": types.CompletionItemKind.Module,
          "source": types.CompletionItemKind.Reference, "key": types.CompletionItemKind.Field}


@server.feature(types.TEXT_DOCUMENT_COMPLETION)
def completion(ls: LanguageServer, params: types.CompletionParams) -> types.CompletionList:
    document = ls.workspace.get_text_document(params.text_document.uri)
    symbols = _symbols(document.uri, document.source)
    items = []
    if symbols is not None:
        items = [types.CompletionItem(label=d.name, kind=_KINDS[d.kind],
                                      detail=f"{d.kind}: {d.statement}")
                 for d in symbols.names(params.position.line + 1)]
    items += [types.CompletionItem(label=word, kind=types.CompletionItemKind.Keyword)
              for word in keywords()]
    return types.CompletionList(is_incomplete=False, items=items)


def main() -> None:
    """Serve LSP on stdin/stdout until the client says exit."""
    server.start_io()


__all__ = ["server", "main"]
