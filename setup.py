"""The build's one step beyond pyproject.toml: `COMPILED`, the modules mypyc (mypy's compiler,
pinned in `[build-system]`) turns into C extensions. They stay Python sources, the very same
rules; a compiled module runs its code some 1.2-2x faster (bench/README.md, "Scoring compiled
with mypyc"). `pip install -e .` (scripts/setup) builds them next to their sources (a change
to one is rebuilt: pyproject.toml's `[tool.uv] cache-keys`, scripts/setup's stamp); the image
builds them in its build stage (Dockerfile). tests/unit/domain/game/test_compiled.py checks that the
compiled module answers as its source does."""

from mypyc.build import mypycify
from setuptools import setup

COMPILED = ["domain/game/scoring.py"]  # the scoring every bot and the engine's results call

setup(ext_modules=mypycify(COMPILED, opt_level="3"))
