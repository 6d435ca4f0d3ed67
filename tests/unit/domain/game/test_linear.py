"""domain.game.linear.solve: the linear systems of the domain's fits."""

from __future__ import annotations

import pytest

from domain.game.linear import solve


def test_solve_needs_and_takes_a_pivot() -> None:
    """A zero in the first pivot's place: solved by swapping rows; the answer checked by
    multiplying back."""
    matrix = [[0.0, 2.0, 1.0], [1.0, 1.0, 0.0], [3.0, 0.0, 2.0]]
    vector = [3.0, 3.0, 8.0]
    x = solve(matrix, vector)
    assert x == pytest.approx([2.0, 1.0, 1.0])
    back = [sum(a * b for a, b in zip(row, x, strict=True)) for row in matrix]
    assert back == pytest.approx(vector)
