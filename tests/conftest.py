"""Shared by every test folder. Its presence puts tests/ on sys.path, so tests import `_strict`."""

import signal


def pytest_configure(config) -> None:
    """A shell without job control starts background commands (`bash .ci/run &`, a CI runner's
    script) with SIGINT and SIGQUIT ignored, and an ignored signal stays ignored across exec: the
    `puffer train` and vector processes the tests Ctrl-C would never see it. Give this process
    Python's own Ctrl-C handler back, so that the children start with the default disposition."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGQUIT) is signal.SIG_IGN:
        signal.signal(signal.SIGQUIT, signal.SIG_DFL)


def _hermetic_native_homes() -> None:
    """Envs a user built (`puffer build-native PATH`) and the PufferLib 3.0 catalog are registered from
    folders under the home directory: the tests start from empty ones, so the registry they see is the
    shipped one (tests that build envs point these variables at their own folders). The one exception is
    $PUFFERTANK_TEST_PL3_HOME, the catalog tests/run.sh builds (`catalog cached`): where it is set, the
    catalog registers its `pufferlib3/*` envs, as the lib image's does, and the tests that iterate over
    every binding cover them too."""
    import os
    import tempfile

    root = tempfile.mkdtemp(prefix="puffertank-test-homes-")
    os.environ["PUFFER_NATIVE_HOME"] = os.path.join(root, "native")
    built = os.environ.get("PUFFERTANK_TEST_PL3_HOME")
    os.environ["PUFFER_PL3_HOME"] = built or os.path.join(root, "pufferlib3")


_hermetic_native_homes()
