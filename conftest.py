# The platform fixtures (stack, api, workspace, ...) live in libs/common so every test folder shares them.
pytest_plugins = ["common.testing"]
