# The platform fixtures (stack, api, workspace, ...) live in the test kit (libs/testkit) so every test folder shares them.
pytest_plugins = ["testkit.fixtures"]
