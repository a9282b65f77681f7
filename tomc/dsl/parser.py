"""Text -> AST: decode the bytes, parse with the Lark grammar in grammar.lark, build AST nodes.

Every failure becomes a `DiagnosticError` (codes E001, E002) with a span; no Lark or
Unicode exception escapes.
"""

from __future__ import annotations

import ast as pyast
import difflib
import os
import re
import warnings
from contextvars import ContextVar
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Optional, Union

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import (UnexpectedCharacters, UnexpectedEOF, UnexpectedInput,
                             UnexpectedToken, VisitError)

from tomc.dsl import ast
from tomc.dsl.diagnostics import Diagnostic, DiagnosticError

# Terminal names as a reader knows them, for "expected ..." messages.
_TERMINAL_WORDS = {
    "NAME": "a name",
    "STRING": "a quoted string",
    "INT": "a whole number",
    "SIGNED_INT": "a whole number",
    "SIGNED_NUMBER": "a number",
    "TIME": "a date or time (YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS][Z|+HH:MM])",
    "_NL": "end of line",
    "LBRACE": "`{`",
    "RBRACE": "`}`",
    "EQUAL": "`=`",
    "COLON": "`:`",
    "COMMA": "`,`",
    "MORETHAN": "`>`",
    "DOT": "`.`",
    "TRUST_MODE": "credulous, exit_order, authority or learned",
    "EVENT_CLASS": "observe, enter, tell, announce or claim",
    "REVEAL_MODE": "nothing or contents",
    "ROLE": "a role (speaker, listener, actor)",
    "ROLE_SET": "a set (witnesses, listeners, believers, speaker)",
    "$END": "end of file",
}


# The comments of the parse under way: the lexer hands each one to `_collect_comment`.
_comments: ContextVar[list[Token]] = ContextVar("comments")


def _collect_comment(token: Token) -> Token:
    _comments.get().append(token)
    return token


@lru_cache(maxsize=1)
def _lark() -> Lark:
    grammar = resources.files("tomc.dsl").joinpath("grammar.lark").read_text(encoding="utf-8")
    return Lark(grammar, parser="lalr", lexer="contextual", propagate_positions=True,
                maybe_placeholders=False, lexer_callbacks={"COMMENT": _collect_comment},
                start=["start", "statements"], cache=_cache_file())


def _cache_file() -> Union[str, bool]:
    """Where Lark keeps the analysed grammar between runs: building the LALR tables takes
    ~0.15 s of every command's start-up, loading them ~10 ms. A folder of the user's own
    ($XDG_CACHE_HOME/tomc, else ~/.cache/tomc), not the shared /tmp, because the file is
    unpickled; Lark checks a hash of the grammar, its options and versions stored in it and
    rebuilds (and rewrites) a stale or unreadable file. False (no cache) if the folder
    cannot be made."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(base, "tomc")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    except OSError:
        return False
    return os.path.join(folder, "grammar.lark-cache")


def decode(raw: bytes, path: str) -> str:
    """Bytes -> text, refusing invalid UTF-8 and NUL bytes with an E002 diagnostic."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        line_start = raw.rfind(b"\n", 0, err.start) + 1  # columns count characters, not bytes
        column = len(raw[line_start:err.start].decode("utf-8")) + 1
        raise DiagnosticError([Diagnostic(
            "E002", f"invalid UTF-8 byte 0x{raw[err.start]:02x}",
            ast.Span(line=line, column=column, end_line=line, end_column=column + 1), path,
            hint="save the file as UTF-8")]) from None
    if "\x00" in text:
        offset = text.index("\x00")
        line = text.count("\n", 0, offset) + 1
        column = offset - (text.rfind("\n", 0, offset) + 1) + 1
        raise DiagnosticError([Diagnostic(
            "E002", "NUL byte in source",
            ast.Span(line=line, column=column, end_line=line, end_column=column + 1), path,
            hint="remove the NUL byte; names and values cannot contain it")])
    return text.lstrip("\ufeff")


def read_source(path: Union[str, Path]) -> str:
    """Read and decode a .tom file; a missing or unreadable file, or one that is not a
    regular file (a folder, a pipe, a device such as /dev/zero), is an E002 diagnostic."""
    try:
        if Path(path).exists() and not Path(path).is_file():
            raise DiagnosticError([Diagnostic("E002", "not a regular file", None, str(path),
                                              hint="name a .tom file")])
        raw = Path(path).read_bytes()
    except OSError as err:
        raise DiagnosticError([Diagnostic("E002", f"cannot read file: {err.strerror}", None,
                                          str(path))]) from None
    return decode(raw, str(path))


def parse(text: str, path: str = "<input>") -> ast.File:
    """Parse .tom text into an `ast.File`.

    Raises `DiagnosticError` (E001 syntax, E002 encoding) on bad input.
    """
    file, source, comments = _parse(text, path, "start")
    lines = source.split("\n")
    return file.model_copy(update={"comments": [
        ast.Comment(text=str(t).rstrip(), line=t.line,
                    trailing=bool(lines[t.line - 1][:t.column - 1].strip()))
        for t in comments]})


def parse_statements(text: str, path: str = "<input>") -> list[ast.Statement]:
    """Parse scenario statements written alone, one per line (the `statements` rule of
    grammar.lark): what a live session applies or asks. A `}` or a `scenario` block in
    `text` is a syntax error, not the end of a wrapper.

    Raises `DiagnosticError` (E001 syntax, E002 encoding) on bad input.
    """
    statements, _, _ = _parse(text, path, "statements")
    return statements


MAX_SYNTAX_ERRORS = 20  # per file: later ones are mostly echoes of the first


def _parse(text: str, path: str, start: str):
    """(what the `start` rule builds, the source as parsed, the comment tokens).

    On a syntax error the parse goes on past it (`_recover`), so one run reports every
    syntax error of the file, up to MAX_SYNTAX_ERRORS; then DiagnosticError carries them,
    and with them the AST of the text recovered (its lines in error blanked) when that
    parses and builds.
    """
    if "\x00" in text:
        decode(text.encode("utf-8", "surrogatepass"), path)
    source = text if text.endswith("\n") else text + "\n"
    found: list[Diagnostic] = []
    attempt: Optional[str] = source
    while attempt is not None:
        comments: list[Token] = []
        reset = _comments.set(comments)
        try:
            tree = _lark().parse(attempt, start=start)
            break
        except UnexpectedInput as err:
            diagnostic, attempt = _recover(err, attempt, path)
            found.append(diagnostic)
            if len(found) >= MAX_SYNTAX_ERRORS:
                attempt = None
        finally:
            _comments.reset(reset)
    if found:
        recovered = None
        if attempt is not None:
            try:
                recovered = (_Builder(path).transform(tree), attempt)
            except VisitError:
                pass  # the recovered text parses but does not build: no names to check
        raise DiagnosticError(sorted(found, key=lambda d: (d.span.line, d.span.column)),
                              recovered=recovered)
    try:
        built = _Builder(path).transform(tree)
    except VisitError as err:
        if isinstance(err.orig_exc, _BuildError):
            raise DiagnosticError([err.orig_exc.diagnostic]) from None
        raise
    return built, source, comments


def next_terminals(prefix: str) -> tuple[list[Token], set[str]]:
    """(the tokens of `prefix`, the terminals the grammar takes after them): `prefix` is
    the start of a file, up to a cursor. Raises UnexpectedInput when `prefix` has a syntax
    error."""
    reset = _comments.set([])
    try:
        parser = _lark().parse_interactive(prefix, start="start")
        return parser.exhaust_lexer(), set(parser.accepts())
    finally:
        _comments.reset(reset)


def recovered_text(text: str, path: str = "<input>") -> Optional[str]:
    """`text` as the parser's recovery leaves it: `text` itself when it parses, else with
    its lines in error blanked (None when recovery cannot get past an error)."""
    try:
        _parse(text, path, "start")
    except DiagnosticError as err:
        return err.recovered[1] if err.recovered else None
    return text if text.endswith("\n") else text + "\n"


def _recover(err: UnexpectedInput, text: str, path: str) -> tuple[Diagnostic, Optional[str]]:
    """The diagnostic for `err`, and `text` changed so that parsing can go on past it (None
    when it cannot). Statements are one per line, so the statement boundary to resynchronise
    on is the line: the line in error is blanked (spaces, so every other position stays
    where it was), or, when it opens a block, replaced by an empty opener of the same kind.
    A `scenario`/`policy` line met inside a block means the block above was never closed:
    that is reported at its `{`, and the line gets the missing `}` in front of it."""
    lines = text.split("\n")
    at_end = isinstance(err, UnexpectedEOF) or (
        isinstance(err, UnexpectedToken) and err.token.type == "$END")
    number = getattr(err, "line", None)
    if at_end or not number or number < 1 or number > len(lines):
        unclosed = _open_braces(text)
        if unclosed:
            return _unclosed(unclosed[-1], path), None
        return _syntax_diagnostic(err, text, path), None
    line = lines[number - 1]
    first = line.split(maxsplit=1)[0] if line.strip() else ""
    opened = _open_braces("\n".join(lines[:number - 1]) + "\n")
    if first in ("scenario", "policy") and opened:
        lines[number - 1] = "} " + line
        return _unclosed(opened[-1], path), "\n".join(lines)
    diagnostic = _syntax_diagnostic(err, text, path)
    if line.rstrip().endswith("{") and first != "}":
        replacement = ("policy" if first == "policy" else "scenario") + " _ {"
    else:
        replacement = " " * len(line)
    if replacement == line:  # nothing left to take out: no further progress possible
        return diagnostic, None
    lines[number - 1] = replacement
    return diagnostic, "\n".join(lines)


def _open_braces(text: str) -> list[tuple[int, int, str]]:
    """The `{` still open at the end of `text`, as (line, column, that line's text); braces
    in strings and comments do not count."""
    stack: list[tuple[int, int, str]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        in_string = escaped = False
        for column, char in enumerate(line, start=1):
            if in_string:
                escaped = not escaped and char == "\\"
                in_string = escaped or char != '"'
            elif char == '"':
                in_string = True
            elif char == "#":
                break
            elif char == "{":
                stack.append((number, column, line))
            elif char == "}" and stack:
                stack.pop()
    return stack


_BLOCK_HEADER = re.compile(r"^\s*(?:\}\s*)?(scenario|policy)\s+(.*?)\s*\{")


def _unclosed(brace: tuple[int, int, str], path: str) -> Diagnostic:
    """E001 at a `{` that is never closed, naming its scenario or policy."""
    number, column, line = brace
    header = _BLOCK_HEADER.match(line)
    what = f"{header[1]} `{header[2].strip(chr(34))}`" if header else "this block"
    return Diagnostic("E001", f"`{{` of {what} is never closed",
                      ast.Span(line=number, column=column, end_line=number,
                               end_column=column + 1), path,
                      hint="add a line with `}` after its last statement")


def _syntax_diagnostic(err: UnexpectedInput, source: str, path: str) -> Diagnostic:
    line = getattr(err, "line", None) or source.count("\n")
    column = getattr(err, "column", None) or 1
    if line < 1:
        line, column = source.count("\n") or 1, 1
    span = ast.Span(line=line, column=column, end_line=line, end_column=column + 1)
    if isinstance(err, UnexpectedCharacters):
        char = source[err.pos_in_stream] if err.pos_in_stream < len(source) else ""
        if char == '"':
            return Diagnostic("E001", "unterminated string", span, path,
                              hint='close the string with `"` on the same line')
        message = f"unexpected character {char!r}"
        expected = _expected_words(err.allowed)
    elif isinstance(err, UnexpectedToken):
        token = err.token
        shown = "end of line" if token.type == "_NL" else (
            "end of file" if token.type == "$END" else f"`{token}`")
        if token.type == "$END":
            lines = source.rstrip("\n").split("\n")
            span = ast.Span(line=len(lines), column=1, end_line=len(lines), end_column=2)
        elif token.end_column and token.end_line == token.line:
            span = ast.Span(line=line, column=column, end_line=line, end_column=token.end_column)
        message = f"unexpected {shown}"
        expected = _expected_words(err.expected)
        suggestion = _keyword_suggestion(err, source)
        if suggestion:
            return Diagnostic("E001", message, suggestion[0], path,
                              hint=f"did you mean `{suggestion[1]}`?")
    elif isinstance(err, UnexpectedEOF):
        message = "unexpected end of file"
        expected = _expected_words(err.expected)
    else:  # pragma: no cover - lark has no other UnexpectedInput kinds
        message, expected = "syntax error", None
    hint = f"expected {expected}" if expected else None
    return Diagnostic("E001", message, span, path, hint=hint)


# Keywords a statement starts with: a misspelt one is read as a name, and the error comes
# one token later, so the first word of the line is compared with these too.
_LEADING_KEYWORDS = ("agents", "rooms", "expect", "ask", "claim", "clock", "noop", "handoff",
                     "scenario", "policy", "use", "depth", "trust", "source", "predicate",
                     "reveal", "on")


def _keyword_suggestion(err: UnexpectedToken, source: str) -> Optional[tuple[ast.Span, str]]:
    """(span of a misspelt keyword, the keyword) when the unexpected token, or the first word
    of its line, is close to a keyword the grammar takes there (`entr` -> `enters`)."""
    token = err.token
    keywords = _keyword_strings(err.expected)
    if token.type == "NAME" and keywords:
        close = difflib.get_close_matches(str(token), keywords, n=2, cutoff=0.6)
        if close:
            word = close[0]
            line_text = source.split("\n")[token.line - 1][:token.column - 1]
            if word + "s" in keywords and "," not in line_text:
                word += "s"  # one agent `enters`, several `enter`
            elif word.endswith("s") and word[:-1] in keywords and "," in line_text:
                word = word[:-1]
            return _tok_span(token), word
    line_text = source.split("\n")[token.line - 1] if token.line else ""
    words = re.match(r"\s*([^\W\d]\w*)", line_text)
    if words and words[1] not in _LEADING_KEYWORDS:
        close = difflib.get_close_matches(words[1], _LEADING_KEYWORDS, n=1, cutoff=0.7)
        if close and len(words[1]) > 2:
            column = words.start(1) + 1
            return ast.Span(line=token.line, column=column, end_line=token.line,
                            end_column=column + len(words[1])), close[0]
    return None


def keywords() -> list[str]:
    """Every keyword of the grammar (`agents`, `enters`, `false_beliefs`, ...), sorted: what
    editors complete and highlight. Word alternations such as TRUST_MODE count too."""
    return sorted({word for name in _terminal_names() for word in words_of(name)})


def words_of(terminal: str) -> list[str]:
    """The keyword texts terminal `terminal` matches: its word (`BELIEVES` -> believes), or
    the words of an alternation (`TRUST_MODE` -> credulous, exit_order, authority); none for
    NAME, punctuation and unknown names."""
    if terminal not in _terminal_names():
        return []
    pattern = _lark().get_terminal(terminal).pattern
    if pattern.type == "str":
        return [pattern.value] if pattern.value.isidentifier() else []
    alternation = re.fullmatch(r"\(\?:([a-z_|]+)\)", pattern.value)
    return alternation[1].split("|") if alternation else []


def _keyword_strings(terminals) -> list[str]:
    """The keyword texts among `terminals` (those whose pattern is a plain word)."""
    out = []
    for name in terminals or ():
        if name in _terminal_names():
            pattern = _lark().get_terminal(name).pattern
            if pattern.type == "str" and pattern.value.isidentifier():
                out.append(pattern.value)
    return sorted(out)


def _expected_words(terminals) -> str | None:
    words = []
    for name in sorted(terminals or ()):
        word = _TERMINAL_WORDS.get(name)
        if word is None:
            pattern = _lark().get_terminal(name).pattern if name in _terminal_names() else None
            word = f"`{pattern.value}`" if pattern is not None and pattern.type == "str" else name
        if word not in words:
            words.append(word)
    if not words:
        return None
    return ", ".join(words[:-1]) + (" or " if len(words) > 1 else "") + words[-1]


@lru_cache(maxsize=1)
def _terminal_names() -> frozenset:
    return frozenset(t.name for t in _lark().terminals)


class _BuildError(Exception):
    def __init__(self, diagnostic: Diagnostic):
        self.diagnostic = diagnostic


def _span(meta) -> ast.Span | None:
    if getattr(meta, "empty", True):
        return None
    return ast.Span(line=meta.line, column=meta.column, end_line=meta.end_line,
                    end_column=meta.end_column)


def _tok_span(tok: Token) -> ast.Span:
    return ast.Span(line=tok.line, column=tok.column, end_line=tok.end_line or tok.line,
                    end_column=tok.end_column or tok.column + len(tok))


def _unquote(tok: Token, path: str) -> str:
    try:
        with warnings.catch_warnings():  # an invalid escape such as \y is only a warning
            warnings.simplefilter("error")
            text = pyast.literal_eval(str(tok))
    except (ValueError, SyntaxError):
        raise _BuildError(Diagnostic("E001", f"invalid escape in string {tok}", _tok_span(tok),
                                     path, hint='use \\" for a quote and \\\\ for a backslash'))
    if "\x00" in text:
        raise _BuildError(Diagnostic("E002", "NUL character in string", _tok_span(tok), path))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate such as "\ud800": no UTF-8 for it
        raise _BuildError(Diagnostic("E002", "lone surrogate escape in string", _tok_span(tok),
                                     path, hint="write the character itself, or a valid "
                                     "\\U escape")) from None
    return text


class _At(str):
    """The time of `event_at` (`... at T` on an event), told apart from the event's parts."""


class _About:
    """`X believes` before a reported fact (the `about` rule)."""

    def __init__(self, name: ast.Name):
        self.name = name


def _timed(children: list) -> tuple[list, Optional[str]]:
    """An event's parts and its `at T` (None when it has none)."""
    if children and isinstance(children[-1], _At):
        return children[:-1], str(children[-1])
    return children, None


@v_args(meta=True)
class _Builder(Transformer):
    """Lark tree -> AST nodes, one method per grammar rule."""

    def __init__(self, path: str):
        super().__init__()
        self.file_path = path

    # names, keys, values, facts
    def name(self, meta, children):
        (tok,) = children
        if tok.type == "STRING":
            return ast.Name(text=_unquote(tok, self.file_path), quoted=True, span=_tok_span(tok))
        return ast.Name(text=str(tok), span=_tok_span(tok))

    def name_list(self, meta, children):
        return list(children)

    def key(self, meta, children):
        return ast.Key(subject=children[0], predicate=children[1] if len(children) > 1 else None,
                       span=_span(meta))

    def value(self, meta, children):
        (tok,) = children
        kinds = {"NAME": "name", "STRING": "string", "SIGNED_NUMBER": "number", "TIME": "time"}
        text = _unquote(tok, self.file_path) if tok.type == "STRING" else str(tok)
        return ast.Value(text=text, kind=kinds[tok.type], span=_tok_span(tok))

    def assign(self, meta, children):
        key, value = children
        return ast.Fact(key=key, value=value, form="assign", span=_span(meta))

    def located(self, meta, children):
        subject, container = children
        return ast.Fact(key=ast.Key(subject=subject, span=subject.span),
                        value=ast.Value(text=container.text,
                                        kind="string" if container.quoted else "name",
                                        span=container.span),
                        form="located", span=_span(meta))

    # file level
    def start(self, meta, children):
        return ast.File(items=children, span=_span(meta))

    def statements(self, meta, children):
        return list(children)

    def use_policy(self, meta, children):
        return ast.UsePolicy(target=children[0], span=_span(meta))

    # policies
    def policy(self, meta, children):
        name, *stmts = children
        fields = {}
        sources, predicates, aliases, sections = [], [], [], []
        procedures = []
        for stmt in stmts:
            if isinstance(stmt, ast.Procedure):
                procedures.append(stmt)
                continue
            kind, payload = stmt
            if kind in ("depth", "limits", "trust", "ties"):
                fields[kind], fields[f"{kind}_span"] = payload
            elif kind == "source":
                sources.append(payload)
            elif kind == "predicate":
                predicates.append(payload)
            elif kind == "alias":
                aliases.append(payload)
            elif kind == "section":
                sections.append(payload)
            else:  # a rule or a reveal line belongs to the section above it
                if not sections:
                    raise _BuildError(Diagnostic(
                        "E151", f"{'reveal' if kind == 'reveal' else 'rule'} outside any section",
                        payload.span, self.file_path,
                        hint="put it under a section header such as `on observe:`"))
                last = sections[-1]
                if kind == "reveal":
                    update = {"reveal": payload.value, "reveal_span": payload.span,
                              "hidden": payload.hidden}
                else:
                    update = {"rules": [*last.rules, payload]}
                sections[-1] = last.model_copy(update=update)
        return ast.Policy(name=name, sources=sources, predicates=predicates, aliases=aliases,
                          sections=sections, procedures=procedures, span=_span(meta),
                          **fields)

    def depth(self, meta, children):
        return ("depth", (int(children[0]), _span(meta)))

    def limits(self, meta, children):
        return ("limits", (int(children[0]), _span(meta)))

    def trust(self, meta, children):
        return ("trust", (str(children[0]), _span(meta)))

    def ties(self, meta, children):
        return ("ties", (str(children[0]), _span(meta)))

    def source_decl(self, meta, children):
        return ("source", ast.SourceDecl(name=children[0], authority=int(children[1]),
                                         span=_span(meta)))

    def predicate_decl(self, meta, children):
        return ("predicate", ast.PredicateDecl(key=children[0], cardinality=str(children[1]),
                                               agent_only=len(children) > 2,
                                               span=_span(meta)))

    def alias_decl(self, meta, children):
        name, *aliases = children
        return ("alias", ast.AliasDecl(name=name, aliases=aliases, span=_span(meta)))

    def section(self, meta, children):
        return ("section", ast.Section(event_class=str(children[0]), span=_span(meta)))

    def reveal(self, meta, children):
        tok, *hidden = children
        return ("reveal", _Reveal(value=str(tok), hidden=hidden, span=_span(meta)))

    def rule(self, meta, children):
        pattern, *rest = children
        excepted, condition = [], None
        for part in rest:
            if isinstance(part, ast.Condition):
                condition = part
            else:
                excepted = part
        return ("rule", ast.Rule(excepted=excepted, condition=condition, span=_span(meta),
                                 **pattern))

    def over(self, meta, children):
        return {"over": [str(c) for c in children]}

    def path(self, meta, children):
        return {"path": [str(c) for c in children]}

    def except_clause(self, meta, children):
        return [str(c) for c in children]

    def condition(self, meta, children):
        negated = len(children) == 3
        truster, trusted = (str(c) for c in children[-2:])
        return ast.Condition(truster=truster, trusted=trusted, negated=negated, span=_span(meta))

    # scenarios
    def scenario(self, meta, children):
        name, *stmts = children
        return ast.Scenario(name=name, statements=stmts, span=_span(meta))

    def agents(self, meta, children):
        return ast.Agents(names=children[0], span=_span(meta))

    def rooms(self, meta, children):
        return ast.Rooms(names=children[0], span=_span(meta))

    def clock(self, meta, children):
        return ast.Clock(time=str(children[0]), span=_span(meta))

    def event_at(self, meta, children):
        return _At(str(children[0]))

    def enter(self, meta, children):
        (agents, room), at = _timed(children)
        return ast.Enter(agents=agents, room=room, at=at, span=_span(meta))

    def exit(self, meta, children):
        (agents, room), at = _timed(children)
        return ast.Exit(agents=agents, room=room, at=at, span=_span(meta))

    def state(self, meta, children):
        (room, fact), at = _timed(children)
        return ast.State(room=room, fact=fact, at=at, span=_span(meta))

    def move(self, meta, children):
        (actor, subject, container), at = _timed(children)
        return ast.Move(actor=actor, subject=subject, container=container, at=at,
                        span=_span(meta))

    def set(self, meta, children):
        (actor, fact), at = _timed(children)
        return ast.SetValue(actor=actor, fact=fact, at=at, span=_span(meta))

    def tell(self, meta, children):
        (speaker, listener, *about, fact), at = _timed(children)
        return ast.Tell(speaker=speaker, listener=listener, fact=fact, at=at, span=_span(meta),
                        about=about[0].name if about else None)

    def says(self, meta, children):
        (speaker, *about, fact), at = _timed(children)
        return ast.Says(speaker=speaker, fact=fact, at=at, span=_span(meta),
                        about=about[0].name if about else None)

    def announce(self, meta, children):
        (speaker, *about, fact), at = _timed(children)
        return ast.Announce(speaker=speaker, fact=fact, at=at, span=_span(meta),
                            about=about[0].name if about else None)

    def believer(self, meta, children):
        return _About(children[0])

    def claim(self, meta, children):
        fact, source, *parts = children
        fields = {}
        for kind, payload in parts:
            fields.update(payload)
        return ast.Claim(fact=fact, source=source, span=_span(meta), **fields)

    def ended_claim(self, meta, children):
        key, *rest = children
        value = rest.pop(0) if isinstance(rest[0], ast.Value) else None
        source, *parts = rest
        fields = {}
        for kind, payload in parts:
            fields.update(payload)
        return ast.EndedClaim(key=key, value=value, source=source, span=_span(meta), **fields)

    def retract(self, meta, children):
        (speaker, key, *value), at = _timed(children)
        return ast.Retract(speaker=speaker, key=key, value=value[0] if value else None, at=at,
                           span=_span(meta))

    def claim_by(self, meta, children):
        return ("by", {"by": children[0]})

    def claim_at(self, meta, children):
        return ("at", {"at": str(children[0])})

    def claim_valid(self, meta, children):
        return ("valid", {"valid_from": str(children[0])})

    def claim_valid_to(self, meta, children):
        return ("valid", {"valid_to": str(children[0])})

    def to_all(self, meta, children):
        return ("audience", {"audience": "all"})

    def to_room(self, meta, children):
        return ("audience", {"audience": "room", "room": children[0]})

    def to_agents(self, meta, children):
        return ("audience", {"audience": "agents", "recipients": children[0]})

    def handoff_write(self, meta, children):
        (sender, receiver), at = _timed(children)
        return ast.HandoffWrite(sender=sender, receiver=receiver, at=at, span=_span(meta))

    def wait(self, meta, children):
        (agent,), at = _timed(children)
        return ast.Wait(agent=agent, at=at, span=_span(meta))

    def peek(self, meta, children):
        (agent,), at = _timed(children)
        return ast.Peek(agent=agent, at=at, span=_span(meta))

    def distracted(self, meta, children):
        (agent,), at = _timed(children)
        return ast.Distracted(agent=agent, at=at, span=_span(meta))

    def noop(self, meta, children):
        parts, at = _timed(children)
        text = _unquote(parts[0], self.file_path) if parts else None
        return ast.Noop(text=text, at=at, span=_span(meta))

    # queries
    def truth(self, meta, children):
        return ast.Subject(chain=[], key=children[0], span=_span(meta))

    def believes(self, meta, children):
        chain, key = children
        return ast.Subject(chain=chain, key=key, span=_span(meta))

    def chain(self, meta, children):
        return list(children)

    def expect(self, meta, children):
        subject, (kind, values, form), *when = children
        return ast.Expect(subject=subject, kind=kind, values=values, form=form,
                          when=when[0] if when else None, span=_span(meta))

    def expect_value(self, meta, children):
        return ("value", list(children), "assign")

    def expect_location(self, meta, children):
        container = children[0]
        value = ast.Value(text=container.text, kind="string" if container.quoted else "name",
                          span=container.span)
        return ("value", [value], "located")

    def expect_set(self, meta, children):
        return ("set", list(children), "assign")

    def expect_unknown(self, meta, children):
        return ("unknown", [], "assign")

    def expect_contested(self, meta, children):
        return ("contested", list(children), "assign")

    def expect_supported(self, meta, children):
        return ("supported", list(children), "assign")

    def support(self, meta, children):
        source, *via = children
        return ast.Value(text=source.text, kind="string" if source.quoted else "name",
                         via=via, span=_span(meta))

    def at_step(self, meta, children):
        return ast.When(step=int(children[0]), span=_span(meta))

    def at_time(self, meta, children):
        return ast.When(time=str(children[0]), span=_span(meta))

    def on_date(self, meta, children):
        return ast.When(date=str(children[0]), span=_span(meta))

    def ask(self, meta, children):
        subject, *when = children
        return ast.Ask(subject=subject, when=when[0] if when else None, span=_span(meta))

    def ask_believes(self, meta, children):
        chain, key, *when = children
        subject = ast.Subject(chain=chain, key=key, span=_span(meta))
        return ast.Ask(subject=subject, when=when[0] if when else None, span=_span(meta))

    # analyses
    def ask_analysis(self, meta, children):
        return ast.AskAnalysis(analysis=children[0], span=_span(meta))

    def false_beliefs(self, meta, children):
        depth = int(children[0]) if children else None
        return ast.FalseBeliefs(depth=depth, span=_span(meta))

    def who_knows(self, meta, children):
        return ast.WhoKnows(key=children[0], span=_span(meta))

    def handoff(self, meta, children):
        sender, receiver = children
        return ast.Handoff(sender=sender, receiver=receiver, span=_span(meta))

    def common_ground(self, meta, children):
        first, second = children
        return ast.CommonGround(first=first, second=second, span=_span(meta))

    def explain(self, meta, children):
        chain, key = children
        return ast.Explain(chain=chain, key=key, span=_span(meta))

    def plan_announcements(self, meta, children):
        key, speaker = children
        return ast.PlanAnnouncements(key=key, speaker=speaker, span=_span(meta))

    def context_for(self, meta, children):
        agent, other = children
        return ast.ContextFor(agent=agent, other=other, span=_span(meta))

    def search(self, meta, children):
        return ast.Search(text=_unquote(children[0], self.file_path), span=_span(meta))

    def who_knows_best(self, meta, children):
        return ast.WhoKnowsBest(text=_unquote(children[0], self.file_path), span=_span(meta))

    def expect_best_first(self, meta, children):
        analysis, names = children
        return self._expect_analysis(meta, analysis, part="first", names=names)

    def open_tasks(self, meta, children):
        return ast.OpenTasks(chain=children[0] if children else [], span=_span(meta))

    def expect_open_tasks(self, meta, children):
        analysis, part, names = children
        return self._expect_analysis(meta, analysis, part=part, names=names)

    def about(self, meta, children):
        subject, rest = children[0], children[1:]
        chain = next((c for c in rest if isinstance(c, list)), [])
        within = next((int(c) for c in rest if not isinstance(c, list)), None)
        return ast.About(subject=subject, chain=chain, within=within, span=_span(meta))

    def explain_follow(self, meta, children):
        *chain, key, links = children
        return ast.ExplainFollow(chain=chain[0] if chain else [], key=key, follow=int(links),
                                 span=_span(meta))

    def expect_follow_keys(self, meta, children):
        analysis, keys = children
        return self._expect_analysis(meta, analysis, part="keys", keys=keys)

    def expect_about_keys(self, meta, children):
        analysis, keys = children
        return self._expect_analysis(meta, analysis, part="keys", keys=keys)

    def believer_key(self, meta, children):
        chain, key = children
        return ast.BelieverKey(chain=chain, key=key, span=_span(meta))

    def excluded(self, meta, children):
        key, reason = children
        return ast.Excluded(key=key, reason=reason, span=_span(meta))

    def believer_key_set(self, meta, children):
        return list(children)

    def excluded_set(self, meta, children):
        return list(children)

    def key_set(self, meta, children):
        return list(children)

    def name_set(self, meta, children):
        return children[0] if children else []

    def who_group(self, meta, children):
        return str(children[0])

    receipt_part = reason = plan = task_part = who_group

    def _expect_analysis(self, meta, analysis, **fields):
        return ast.ExpectAnalysis(analysis=analysis, span=_span(meta), **fields)

    def expect_false_beliefs(self, meta, children):
        analysis, items = children
        return self._expect_analysis(meta, analysis, believer_keys=items)

    def expect_who_knows(self, meta, children):
        analysis, group, names = children
        return self._expect_analysis(meta, analysis, part=group, names=names)

    def expect_handoff(self, meta, children):
        analysis, part, keys = children
        return self._expect_analysis(meta, analysis, part=part, keys=keys)

    def expect_handoff_excludes(self, meta, children):
        analysis, items = children
        return self._expect_analysis(meta, analysis, part="excludes", excluded=items)

    def expect_handoff_hearsay(self, meta, children):
        analysis, items = children
        return self._expect_analysis(meta, analysis, part="hearsay", believer_keys=items)

    def expect_common_ground(self, meta, children):
        analysis, keys = children
        return self._expect_analysis(meta, analysis, keys=keys)

    def expect_explain_step(self, meta, children):
        analysis, step = children
        return self._expect_analysis(meta, analysis, part="from_step", number=int(step))

    def expect_explain_path(self, meta, children):
        analysis, path = children
        return self._expect_analysis(meta, analysis, part="path", names=path)

    def expect_plan_best(self, meta, children):
        analysis, plan = children
        return self._expect_analysis(meta, analysis, part="best", plan=plan)

    def expect_plan_tells(self, meta, children):
        analysis, names = children
        return self._expect_analysis(meta, analysis, part="tells", names=names)

    def expect_plan_left(self, meta, children):
        analysis, plan, depth, count = children
        return self._expect_analysis(meta, analysis, part="left", plan=plan, depth=int(depth),
                                     number=int(count))

    def expect_context_differ(self, meta, children):
        analysis, keys = children
        return self._expect_analysis(meta, analysis, part="differ", keys=keys)

    def expect_context_first(self, meta, children):
        analysis, key = children
        return self._expect_analysis(meta, analysis, part="first", keys=[key])

    def expect_search_keys(self, meta, children):
        analysis, keys = children
        return self._expect_analysis(meta, analysis, part="keys", keys=keys)

    expect_search_first = expect_context_first


    # procedures and readiness
    def procedure(self, meta, children):
        name, *requires = children
        return ast.Procedure(name=name, requires=requires, span=_span(meta))

    def requirement(self, meta, children):
        key, *value = children
        return ast.Requirement(key=key, value=value[0] if value else None, span=_span(meta))

    def ready(self, meta, children):
        procedure, *chain = children
        return ast.Ready(procedure=procedure, chain=chain[0] if chain else [], span=_span(meta))

    def ask_ready(self, meta, children):
        ready, *when = children
        return ast.AskReady(ready=ready, when=when[0] if when else None, span=_span(meta))

    def expect_ready_verdict(self, meta, children):
        ready, verdict, *when = children
        return ast.ExpectReady(ready=ready, part="verdict", verdict=verdict,
                               when=when[0] if when else None, span=_span(meta))

    def expect_ready_verdict_when(self, meta, children):
        ready, when, verdict = children  # `at step N` before `=`, as `ask ready` writes it
        return self.expect_ready_verdict(meta, [ready, verdict, when])

    def expect_ready_keys_when(self, meta, children):
        ready, when, part, keys = children
        return self.expect_ready_keys(meta, [ready, part, keys, when])

    def expect_ready_keys(self, meta, children):
        ready, part, keys, *when = children
        return ast.ExpectReady(ready=ready, part=part, keys=keys,
                               when=when[0] if when else None, span=_span(meta))

    verdict = ready_part = who_group


class _Reveal(ast.Node):
    value: str
    hidden: list[ast.Name] = []


def parse_file(path: Union[str, Path]) -> tuple[ast.File, str]:
    """Read, decode and parse one file. Returns (AST, source text); raises DiagnosticError."""
    text = read_source(path)
    return parse(text, str(path)), text


__all__ = ["parse", "parse_statements", "parse_file", "read_source", "decode", "keywords",
           "words_of", "recovered_text", "next_terminals"]
