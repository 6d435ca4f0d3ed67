"""Helpers shared by the test tiers: no tests here, and no test module imports another one
(tests/unit/test_test_imports.py checks it)."""
