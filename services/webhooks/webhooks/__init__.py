"""Webhooks: endpoint registry and the dispatcher that delivers signed events."""
