"""Linear systems, for the fits the domain and its benches make (a tournament's strengths,
the weights of the luck and of the winning chances)."""

from __future__ import annotations

from collections.abc import Sequence


def solve(matrix: Sequence[Sequence[float]], vector: Sequence[float]) -> list[float]:
    """x with matrix @ x = vector (Gaussian elimination with partial pivoting; the matrix
    square and not singular)."""
    n = len(vector)
    a = [[*row, v] for row, v in zip(matrix, vector, strict=True)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        for r in range(col + 1, n):
            f = a[r][col] / a[col][col]
            for c in range(col, n + 1):
                a[r][c] -= f * a[col][c]
    x = [0.0] * n
    for r in reversed(range(n)):
        x[r] = (a[r][n] - sum(a[r][c] * x[c] for c in range(r + 1, n))) / a[r][r]
    return x
