"""The people service: persons, team members, sessions, sign-in and the audit log."""
