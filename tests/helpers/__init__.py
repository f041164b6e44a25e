"""What several test files share, imported as `tests.helpers.<module>`.

Fixtures live in the `conftest.py` files; plain values, tools and functions live here.
"""
