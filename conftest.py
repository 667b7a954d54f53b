# The platform fixtures (stack, api, workspace, ...) live in the test kit (libs/testkit) so every test folder shares them.
pytest_plugins = ["testkit.fixtures"]

# Files that start platforms of their own or run for tens of seconds are handed out first: the
# test processes (pytest-xdist, --dist loadfile: whole files, in collection order) then end
# together, instead of one of them starting the longest files last (the cross-service tests/
# folder is collected last). The order within each file, and of the rest, is kept.
LONG_FIRST = (
    "tests/",
    "services/webhooks/tests/test_kill.py",
    "services/notifications/tests/test_reliability.py",
    "services/posts/tests/test_reads.py",
    "services/portability/tests/test_import_kill.py",
    "services/web/tests/test_browser.py",
    "charts/tests/test_rehearsal.py",
    "libs/common/tests/test_consumer.py",
)


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: not item.nodeid.startswith(LONG_FIRST))
