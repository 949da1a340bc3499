#!/usr/bin/env python3
"""A Gotify-style receiver for trying Switchboard on this machine (standard library only).

    python3 examples/receivers/gotify.py PORT [APP_TOKEN]

Answers `POST /message` as a Gotify server does (header `X-Gotify-Key`, JSON body
`{title, message, priority}`) and prints one line per message:
`gotify: [priority] title`, then the message's lines, each after `gotify:`. With APP_TOKEN, a request whose
`X-Gotify-Key` differs is answered 401.
"""
import json, sys
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, HTTPServer

PORT = int(sys.argv[1]) if len(sys.argv) > 1 else 9102
TOKEN = sys.argv[2] if len(sys.argv) > 2 else None
sent = 0


class Gotify(BaseHTTPRequestHandler):
    def answer(self, status, doc):
        data = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        global sent
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        if self.path.split("?")[0] != "/message":
            return self.answer(404, {"error": "Not Found", "errorCode": 404})
        if TOKEN is not None and self.headers.get("X-Gotify-Key") != TOKEN:
            return self.answer(401, {"error": "Unauthorized", "errorCode": 401})
        try:
            msg = json.loads(body)
            title, text, priority = msg["title"], msg["message"], int(msg.get("priority", 0))
        except (ValueError, KeyError, TypeError):
            return self.answer(400, {"error": "Bad Request", "errorCode": 400})
        sent += 1
        # Every line prefixed, so the lines stay together among other output.
        print(f"gotify: [{priority}] {title}", flush=True)
        for line in text.splitlines():
            print(f"gotify:   {line}", flush=True)
        now = datetime.now(timezone.utc).isoformat()
        self.answer(200, {"id": sent, "appid": 1, "message": text, "title": title, "priority": priority, "date": now})

    def log_message(self, *args):  # one line per message is enough
        pass


HTTPServer(("127.0.0.1", PORT), Gotify).serve_forever()
