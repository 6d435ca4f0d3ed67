"""Problem responses in the client's language: `Accept-Language` negotiation, the catalogs,
and a scan of the sources that makes an untranslated message impossible to add.

The scan reads every call in domain/, service/ and infra/ that carries a message (RuleError,
ServiceError, problem, Text and the two helpers that pass a message on) and collects its
English template; each language's catalog must hold each template, with the same
placeholders. A message written as an f-string, or passed as a value the scan cannot see, is a
failure: write a template with named parameters (`RuleError(code, "... {cards}.", cards=x)`).
"""

from __future__ import annotations

import ast
import string
from collections.abc import Iterator
from http import HTTPStatus
from pathlib import Path

import pytest

from domain.game.errors import RULE_ERROR_CODES, Joined, RuleError, Text
from service.core.errors import SERVICE_ERROR_CODES, ServiceError
from service.entrypoints.api import problems
from service.entrypoints.api.i18n import CATALOGS, DEFAULT, LANGUAGES, localize, negotiate, title
from tests.servers import ROOT

SOURCES = [ROOT / "domain", ROOT / "service", ROOT / "infra"]
# call name -> index of its message argument (and the keyword that may name it)
MESSAGE_ARGUMENT = {
    "RuleError": 1,
    "ServiceError": 1,
    "problem": 2,
    "Text": 0,
    "_auction": 0,  # domain/game/engine.py: the refusal when no auction is on
    "token_refused": 0,  # service/core/callers.py: why a JWT is refused
}
# calls that make a message the scan checks elsewhere: Text (a call scanned itself), foreign
# (FOREIGN_TEMPLATES), infra.jwt_keys' _reason (Texts)
MADE = ("Text", "foreign", "_reason")
# (file, function) where a message argument is a variable, and why that is covered
FORWARDERS = {
    (
        "domain/game/errors.py",
        "message",
    ): "a RuleError's or ServiceError's template, or its default",
    ("domain/game/engine.py", "_auction"): "its callers' literals are scanned (`_auction`)",
    ("service/core/callers.py", "token_refused"): "its callers' literals and Texts are scanned",
    ("service/entrypoints/api/problems.py", "from_rule_error"): "exc.text: a RuleError's Text",
    (
        "service/entrypoints/api/problems.py",
        "from_service_error",
    ): "exc.text: a ServiceError's Text",
    (
        "service/entrypoints/api/problems.py",
        "from_http_exception",
    ): "Texts built of scanned templates",
    ("service/entrypoints/api/problems.py", "problem"): "wraps its own argument",
    (
        "service/entrypoints/api/problems.py",
        "foreign",
    ): "FOREIGN_TEMPLATES and status phrases, checked",
    ("service/entrypoints/api/problems.py", "_located"): "`foreign` of a library message",
    ("service/entrypoints/api/problems.py", "from_invalid_cursor"): "`foreign` of the cursor error",
    ("service/entrypoints/api/routes.py", "_decode_strict"): "`foreign` of msgspec's message",
}


def _message_calls(tree: ast.AST) -> Iterator[tuple[str, ast.Call, ast.expr]]:
    """(enclosing function, call, message argument) of every call that carries a message."""
    functions: list[tuple[str, ast.AST]] = [
        (node.name, node)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
        if name not in MESSAGE_ARGUMENT:
            continue
        index = MESSAGE_ARGUMENT[name]
        argument = node.args[index] if len(node.args) > index else None
        for keyword in node.keywords:
            if keyword.arg == "detail" and name in ("RuleError", "ServiceError", "problem"):
                argument = keyword.value
        if argument is None:
            continue
        inside = [f for f, n in functions if n.lineno <= node.lineno <= (n.end_lineno or 0)]
        yield (inside[-1] if inside else "<module>"), node, argument


def scan() -> tuple[set[str], list[str]]:
    """The templates written in the sources, and the messages the scan cannot check."""
    templates: set[str] = set()
    unchecked: list[str] = []
    for root in SOURCES:
        for path in sorted(root.rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if relative.startswith("service/entrypoints/api/i18n/"):
                continue
            tree = ast.parse(path.read_text(), filename=relative)
            for function, call, argument in _message_calls(tree):
                if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                    templates.add(argument.value)
                elif isinstance(argument, ast.Constant) and argument.value is None:
                    continue
                elif isinstance(argument, ast.Call) and getattr(argument.func, "id", "") in MADE:
                    continue  # a Text is scanned as a call of its own
                elif (relative, function) not in FORWARDERS:
                    unchecked.append(f"{relative}:{call.lineno} {ast.unparse(argument)}")
    return templates, unchecked


def required_templates() -> set[str]:
    """Every template some problem response can carry, in English."""
    written, _ = scan()
    phrases = {HTTPStatus(status).phrase for status in problems.STATUSES}
    return (
        written
        | set(RULE_ERROR_CODES.values())
        | set(SERVICE_ERROR_CODES.values())
        | set(problems.FOREIGN_TEMPLATES)
        | phrases
    )


def placeholders(template: str) -> set[tuple[str, str | None, str | None]]:
    return {
        (name, conversion, spec)
        for _, name, spec, conversion in string.Formatter().parse(template)
        if name is not None
    }


def words(template: str) -> bool:
    """Whether a template says anything (not just `{message}` or punctuation)."""
    literal = "".join(text for text, *_ in string.Formatter().parse(template))
    return any(character.isalpha() for character in literal)


TRANSLATED = [language for language in LANGUAGES if language != DEFAULT]


def test_the_scan_finds_every_message_it_cannot_check() -> None:
    templates, unchecked = scan()
    assert unchecked == [], "write these as templates with named parameters (or a Text)"
    assert "Not valid card codes: {cards}." in templates
    assert "The bearer token is not a valid player JWT: {reason}." in templates
    assert "Passing is for auctions; a buy is declined." in templates  # via `_auction`
    assert "expired (exp)" in templates  # a Text in a table


def test_the_scan_refuses_an_f_string(tmp_path: Path) -> None:
    source = 'def f(x):\n    raise RuleError("unknown_card", f"{x} is not a card")\n'
    calls = list(_message_calls(ast.parse(source)))
    assert [type(argument) for _, _, argument in calls] == [ast.JoinedStr]


@pytest.mark.parametrize("language", TRANSLATED)
def test_every_message_has_a_translation(language: str) -> None:
    catalog = CATALOGS[language]
    missing = sorted(t for t in required_templates() if words(t) and t not in catalog)
    assert missing == [], f"{language} lacks translations"


@pytest.mark.parametrize("language", TRANSLATED)
def test_translations_keep_the_placeholders(language: str) -> None:
    differ = [
        (english, translated)
        for english, translated in CATALOGS[language].items()
        if placeholders(english) != placeholders(translated)
    ]
    assert differ == []


@pytest.mark.parametrize("language", TRANSLATED)
def test_catalogs_hold_nothing_stale(language: str) -> None:
    stale = sorted(set(CATALOGS[language]) - required_templates())
    assert stale == [], "translations of templates no source uses any more"


@pytest.mark.parametrize("language", TRANSLATED)
def test_translations_are_translated(language: str) -> None:
    """A translation equal to its English is a slip, but for names kept as they are."""
    same = [e for e, t in CATALOGS[language].items() if e == t and words(e)]
    assert same == []


@pytest.mark.parametrize(
    ("header", "language"),
    [
        (None, "en"),
        ("", "en"),
        ("es", "es"),
        ("es-MX", "es"),
        ("ES-mx", "es"),
        ("es-419", "es"),
        ("hy-AM,en;q=0.5", "hy"),
        ("fr, gu;q=0.8, en;q=0.7", "gu"),
        ("en;q=0.5, id;q=0.9", "id"),
        ("in", "id"),  # Indonesian's withdrawn code
        ("id;q=0.5, es;q=0.5", "id"),  # a tie: the first range
        ("id;q=0, es;q=0.1", "es"),  # q=0: not acceptable
        ("id;q=0", "en"),
        ("fr-CA, de", "en"),
        ("*", "en"),
        ("*;q=abc", "en"),
        ("es;q=abc", "en"),
        ("es;q=1.5", "en"),
        ("es;q=0.1234", "en"),
        ("es;level=1", "en"),
        ("es;q=0.8, *;q=0.9", "en"),
        ("e s", "en"),
        (";;;,,,", "en"),
        ("\x00\xff\ufffd", "en"),
        ("x" * 100_000, "en"),
        ("fr," * 10_000 + "es", "en"),  # only the first ranges are read
        ("-", "en"),
        ("es-", "en"),
        ("gu-IN;q=0.9 , hy ; q=0.95", "hy"),
    ],
)
def test_negotiation(header: str | None, language: str) -> None:
    assert negotiate(header) == language


def test_a_rule_error_keeps_its_english_and_its_template() -> None:
    exc = RuleError("unknown_card", "Not valid card codes: {cards}.", cards="X9, ZZ")
    assert exc.detail == "Not valid card codes: X9, ZZ."
    assert str(exc) == "unknown_card: Not valid card codes: X9, ZZ."
    assert localize(exc.text, "es") == "Códigos de carta no válidos: X9, ZZ."
    assert localize(exc.text, "en") == exc.detail
    default = RuleError("bid_too_low")
    assert default.detail == RULE_ERROR_CODES["bid_too_low"]


def test_a_service_error_translates_its_default() -> None:
    exc = ServiceError("game_not_found")
    assert exc.detail == "No game with this id (it may have expired)."
    assert localize(exc.text, "id") == CATALOGS["id"][exc.detail]


def test_nested_texts_and_values_are_rendered() -> None:
    inner = Joined(
        ", ",
        [Text("{card} x{count} (the game has {limit})", card="R7", count=2, limit=1)] * 2,
    )
    exc = RuleError("too_many_copies", "More copies than the game has: {copies}.", copies=inner)
    assert (
        exc.detail
        == "More copies than the game has: R7 x2 (the game has 1), R7 x2 (the game has 1)."
    )
    spanish = localize(exc.text, "es")
    assert spanish.count("R7 x2") == 2
    assert "the game" not in spanish


def test_a_repr_parameter_keeps_its_conversion() -> None:
    exc = RuleError("unknown_card", "{card!r} is not a card code.", card="Q1")
    assert exc.detail == "'Q1' is not a card code."
    assert all("'Q1'" in localize(exc.text, language) for language in LANGUAGES)


@pytest.mark.parametrize("language", LANGUAGES)
def test_titles(language: str) -> None:
    for status in problems.STATUSES:
        found = title(status, language)
        assert found
        if language == "en":
            assert found == HTTPStatus(status).phrase
    assert title(999, "en") == "Error"


@pytest.mark.parametrize(
    ("message", "template"),
    [
        ("Expected `int`, got `str`", "Expected `{expected}`, got `{got}`"),
        ("Expected `str` of length >= 1", "Expected `{expected}` of length >= {bound}"),
        ("Expected `int` >= 1", "Expected `{expected}` >= {bound}"),
        ("Object contains unknown field `seatz`", "Object contains unknown field `{field}`"),
        ("Object missing required field `type`", "Object missing required field `{field}`"),
        ("Invalid enum value 'blue'", "Invalid enum value {value}"),
        ("JSON is malformed: invalid character (byte 4)", "JSON is malformed: {reason}"),
        ("Not Found", "Not Found"),
        ("Something {odd} from a library", "{message}"),
    ],
)
def test_foreign_messages(message: str, template: str) -> None:
    text = problems.foreign(message)
    assert text.template == template
    assert str(text) == message  # English: the library's own words, unchanged


def test_a_foreign_message_with_a_path_keeps_the_path() -> None:
    text = problems.foreign("Expected `int`, got `str` - at `$.seats[0].name`")
    assert str(text) == "Expected `int`, got `str` - at `$.seats[0].name`"
    for language in LANGUAGES:
        assert "`$.seats[0].name`" in localize(text, language)
        assert "`int`" in localize(text, language)


@pytest.mark.parametrize("language", TRANSLATED)
def test_every_template_renders_in_every_language(language: str) -> None:
    """Formatting each translation with made-up values of its placeholders never fails."""
    for english, translated in CATALOGS[language].items():
        values = {name: "X" for name, _, _ in placeholders(english)}
        assert Text(english, **values).render(lambda t: CATALOGS[language].get(t, t))
        assert translated.format_map(values)
