"""The modules setup.py compiles with mypyc (`COMPILED`): built in this checkout, answering
as their Python sources do (a stale build, or a rule mypyc compiles differently, fails
here: run `bash scripts/setup`), and every place that must know them (the stamp of
scripts/setup, uv's cache keys, the image's build) names them all."""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import sys
import tomllib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from domain.game.cards import COLORS, FULL_WILD
from tests.servers import ROOT


def compiled() -> list[str]:
    """setup.py's COMPILED, read without running it (mypyc is a build requirement only)."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and [t.id for t in node.targets] == ["COMPILED"]:
            return ast.literal_eval(node.value)
    raise AssertionError("setup.py names no COMPILED")


@functools.cache
def source_of(path: str):
    """The module at `path` run from its Python source, apart from the compiled one."""
    name = "source_of_" + path.replace("/", "_").removesuffix(".py")
    spec = importlib.util.spec_from_file_location(name, ROOT / path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("path", compiled())
def test_the_module_is_compiled_here(path: str) -> None:
    module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
    assert module.__file__ is not None
    assert not module.__file__.endswith(".py"), f"{path} runs uncompiled: bash scripts/setup"


def test_the_set_up_stamp_uvs_cache_and_the_image_know_every_compiled_module() -> None:
    setup_script = (ROOT / "scripts/setup").read_text()
    keys = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["uv"]["cache-keys"]
    dockerfile = (ROOT / "Dockerfile").read_text()
    for path in compiled():
        assert path in setup_script
        assert {"file": path} in keys
    assert "mypyc --config-file ../pyproject.toml" in dockerfile  # setup.py's COMPILED
    assert "COPY setup.py" in dockerfile


CARDS = [f"{c}{n}" for c in COLORS for n in range(1, 10)]
CARDS += [f"{c}#" for c in COLORS] + [f"W{n}" for n in range(1, 10)] + [FULL_WILD]
collections = st.lists(st.sampled_from(CARDS), max_size=24).map(tuple)


@settings(max_examples=400, deadline=None)
@given(collections, st.integers(0, 3))
def test_scoring_compiled_answers_as_its_source(cards: tuple[str, ...], bonus: int) -> None:
    from domain.game import scoring

    source = source_of("domain/game/scoring.py")
    assert scoring.best_total(cards, bonus) == source.best_total(cards, bonus)
    assert scoring.total_bound(cards, bonus) == source.total_bound(cards, bonus)
    ours, theirs = scoring.score_collection(cards, bonus), source.score_collection(cards, bonus)
    assert ours.total == theirs.total
    assert {c: (s.points, s.run) for c, s in ours.colors.items()} == {
        c: (s.points, s.run) for c, s in theirs.colors.items()
    }
