"""The workspaces service: workspaces, boards, statuses, settings, branding, changelogs, API keys."""
