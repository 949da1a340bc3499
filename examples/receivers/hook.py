#!/usr/bin/env python3
"""A notify-hook receiver for trying Switchboard on this machine (standard library only).

    python3 examples/receivers/hook.py PORT [SIGNING_SECRET]

Listens on 127.0.0.1:PORT and prints one line per notification it receives:
`hook: <type> todo=<todo_id> signature=<ok|BAD|unchecked>`, then `hook:` and the body. With the
hook's `whsec_` signing secret it checks the Standard Webhooks signature (README,
"Notify hooks") and answers 401 to a request that does not carry a valid one.
"""
import base64, hashlib, hmac, json, sys, time
from http.server import BaseHTTPRequestHandler, HTTPServer

PORT = int(sys.argv[1]) if len(sys.argv) > 1 else 9101
SECRET = sys.argv[2] if len(sys.argv) > 2 else None
TOLERANCE_SECONDS = 300  # Standard Webhooks' replay window


def signature_ok(headers, body):
    """Standard Webhooks: v1,base64(HMAC-SHA256(key, "{id}.{timestamp}.{body}"))."""
    msg_id, stamp = headers.get("webhook-id", ""), headers.get("webhook-timestamp", "")
    if not stamp.isdigit() or abs(time.time() - int(stamp)) > TOLERANCE_SECONDS:
        return False
    key = base64.b64decode(SECRET.removeprefix("whsec_"))
    signed = f"{msg_id}.{stamp}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    # The header may hold several entries (for 24 h after a rotation both secrets sign).
    given = [e.split(",", 1)[1] for e in headers.get("webhook-signature", "").split() if e.startswith("v1,")]
    return any(hmac.compare_digest(expected, g) for g in given)


class Hook(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        verdict = "unchecked" if SECRET is None else ("ok" if signature_ok(self.headers, body) else "BAD")
        try:
            note = json.loads(body)
        except ValueError:
            note = {}
        print(f"hook: {note.get('type')} todo={note.get('todo_id')} signature={verdict}", flush=True)
        print(f"hook:   {body.decode(errors='replace')}", flush=True)
        self.send_response(401 if verdict == "BAD" else 204)
        self.end_headers()

    def log_message(self, *args):  # one line per notification is enough
        pass


HTTPServer(("127.0.0.1", PORT), Hook).serve_forever()
