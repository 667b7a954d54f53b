"""The gateway: the platform's only public entry."""
