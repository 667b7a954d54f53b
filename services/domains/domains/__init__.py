"""The domains service: custom domains verified by DNS and served by the gateway."""
