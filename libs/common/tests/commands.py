"""The database commands a test's client sends, by name and collection (pymongo command monitoring)."""

from pymongo import monitoring


class Commands(monitoring.CommandListener):
    def __init__(self):
        self.sent: list[tuple[str, object]] = []

    def started(self, event):
        self.sent.append((event.command_name, event.command.get(event.command_name)))

    def succeeded(self, event):
        pass

    def failed(self, event):
        pass

    def count(self, name: str, collection: str) -> int:
        """How many ``name`` commands were sent to ``collection``."""
        return sum(1 for sent in self.sent if sent == (name, collection))
