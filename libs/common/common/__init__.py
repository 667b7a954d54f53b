"""Service kit shared by every feedback platform service and the gateway."""
