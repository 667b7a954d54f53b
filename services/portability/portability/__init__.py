"""The portability service: a workspace's data moved out (exports) and, next, in (imports)."""
