"""Shared by the unit tests' area folders (bench/, envs/, train/, vector/, ...). Its presence puts tests/unit/
on sys.path, so a test in any folder imports the helpers used across areas (`_vector_envs`); a helper used by
one area lives in that area's folder, found beside the test that imports it."""
