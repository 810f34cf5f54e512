"""Shared by every test folder. Its presence puts tests/ on sys.path, so tests import `_strict`."""
