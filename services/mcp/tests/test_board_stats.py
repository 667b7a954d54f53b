"""board_stats costs the platform one API call, however many posts and comments the board has:
counted at the gateway's door, by a forwarding proxy the stdio server is pointed at."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import requests

from .helpers import data, session

FORWARDED = ("Authorization", "Accept", "Content-Type", "X-Request-Id")


class CountingProxy:
    """Forwards every request to the gateway and remembers its method and path."""

    def __init__(self, upstream: str):
        self.seen: list[tuple[str, str]] = []
        proxy = self

        class Forward(BaseHTTPRequestHandler):
            def _forward(self):
                proxy.seen.append((self.command, self.path))
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) or None
                headers = {h: self.headers[h] for h in FORWARDED if self.headers.get(h)}
                r = requests.request(self.command, upstream + self.path, data=body, headers=headers, timeout=30)
                self.send_response(r.status_code)
                self.send_header("Content-Type", r.headers.get("Content-Type", "application/json"))
                self.send_header("Content-Length", str(len(r.content)))
                self.end_headers()
                self.wfile.write(r.content)

            do_GET = do_POST = do_PATCH = do_DELETE = _forward

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Forward)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def test_board_stats_is_one_api_call(stack, api, workspace, keys):
    path = workspace.path
    posts = []
    for i in range(12):
        r = api.post(f"{path}/posts", key=keys["write"], json={"boardSlug": "features", "title": f"Request {i}", "content": ""})
        assert r.status_code == 201, r.text
        posts.append(r.json())
        for key in (keys["manager"], keys["write"]):  # the team answered, then the customer spoke again
            assert api.post(f"{path}/posts/{posts[-1]['id']}/comments", key=key, json={"content": "a comment"}).status_code == 201
    proxy = CountingProxy(stack.url)
    try:
        async def steps(client):
            before = len(proxy.seen)
            stats = data(await client.call_tool("board_stats", {"board": "features", "stalled_days": 0, "top": 3}))
            return stats, proxy.seen[before:]

        stats, calls = session("stdio", proxy.url, keys["read"], steps)
    finally:
        proxy.close()
    assert calls == [("GET", f"/v1{path}/posts/stats?board=features&stalledDays=0&top=3")]
    assert {"board", "postsCounted", "complete", "byStatus", "topVoted", "newest", "stalled", "stalledDays"} <= set(stats)
    assert stats["postsCounted"] == 12 and stats["complete"] is True and stats["byStatus"] == {"open": 12}
    assert [p["id"] for p in stats["newest"]] == [p["id"] for p in posts[::-1][:3]]
    assert [p["id"] for p in stats["stalled"]] == [p["id"] for p in posts]  # longest waiting first
