"""Small arithmetic shared by the host code."""


def ceil_div(n: int, k: int) -> int:
    """The smallest integer >= n / k, for integers n >= 0 and k > 0."""
    return -(-n // k)
