"""A real MCP client for the integration tests (tests/it/mcp/): the official Python SDK
(`mcp` on PyPI, installed by scripts/test into target/mcp-venv) connected over Streamable
HTTP to one endpoint's `/mcp/{slug}` with its bearer.

Usage: client.py URL MODE   (the bearer in the MCP_TOKEN environment variable)

MODE is `legacy` (the initialize handshake: a session with Mcp-Session-Id) or `auto` (the
SDK's default: the 2026-07-28 revision when the server speaks it, no session).

It reads one JSON command a line on stdin and answers each with one JSON line on stdout:
  {"op": "hello"}                              -> {"protocol_version", "server_name", "instructions"}
  {"op": "list_tools"}                         -> {"tools": [{"name", "description", "input_schema"}]}
  {"op": "call", "tool": T, "arguments": {...}} -> {"is_error", "text", "structured"}
  {"op": "validate", "tool": T, "instance": {...}} -> {"valid", "errors"}: `instance` against T's
        input schema from the last list_tools (JSON Schema draft 2020-12, the jsonschema package)
A failure answers {"exception": "<type>: <message>"}; end of input ends the session.
"""

import json
import os
import sys

import anyio
import jsonschema
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def answer(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


async def serve(client):
    schemas = {}
    while True:
        line = await anyio.to_thread.run_sync(sys.stdin.readline)
        if not line:
            return
        command = json.loads(line)
        op = command["op"]
        try:
            if op == "hello":
                answer({
                    "protocol_version": client.protocol_version,
                    "server_name": client.server_info.name if client.server_info else None,
                    "instructions": client.instructions,
                })
            elif op == "list_tools":
                listed = await client.list_tools()
                tools = [{"name": t.name, "description": t.description, "input_schema": t.input_schema}
                         for t in listed.tools]
                schemas = {t["name"]: t["input_schema"] for t in tools}
                answer({"tools": tools})
            elif op == "call":
                result = await client.call_tool(command["tool"], command.get("arguments") or {})
                text = "".join(getattr(c, "text", "") for c in result.content)
                answer({"is_error": bool(result.is_error), "text": text, "structured": result.structured_content})
            elif op == "validate":
                validator = jsonschema.Draft202012Validator(schemas[command["tool"]])
                errors = [e.message for e in validator.iter_errors(command["instance"])]
                answer({"valid": not errors, "errors": errors})
            else:
                answer({"exception": f"unknown op {op}"})
        except Exception as e:  # the test reads it; the session goes on
            answer({"exception": f"{type(e).__name__}: {e}"})


async def main():
    url, mode = sys.argv[1], sys.argv[2]
    headers = {"Authorization": f"Bearer {os.environ['MCP_TOKEN']}"}
    async with create_mcp_http_client(headers=headers) as http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode, cache=None) as client:
            await serve(client)


if __name__ == "__main__":
    anyio.run(main)
