"""The notifications service: who follows what, and the mail that tells them (docs/services/notifications.md)."""
