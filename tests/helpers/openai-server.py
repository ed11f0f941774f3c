#!/usr/bin/env python3
"""A scripted OpenAI-compatible (and a little ollama-like) model server for
the allow-localhost tests: HTTP/1.1 with keep-alive, on 127.0.0.1.

  openai-server.py LOG [PORT]   prints "port N" once listening; every request
                                line received goes to LOG ("METHOD PATH").
  TLS_CERT=FILE (env)           serve HTTPS with FILE's leaf, chain and key, and
                                log each request's Authorization ("AUTH VALUE")

  GET  /v1/models, /api/tags       a list with one model, "fake-model"
  POST /v1/chat/completions        the reply REPLY (env, default PONG-FROM-FAKE-MODEL),
                                   streamed as server-sent events (chunked) when
                                   "stream": true, as one JSON object otherwise
  TOOL_COMMAND=CMD (env)        the first chat completion asks for the harness's
                                bash tool to run CMD; what it returns comes in the
                                next request and goes to LOG ("TOOL <json>"), then REPLY
  POST /api/pull, anything else    200 {"status":"success"} — what a real ollama
                                   would do, so a test can see that it never got
                                   here (LOG does not name it)
"""
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOG = sys.argv[1]
PORT = int(sys.argv[2]) if len(sys.argv) > 2 else 0
REPLY = os.environ.get("REPLY", "PONG-FROM-FAKE-MODEL")


def log(line):
    with open(LOG, "a") as f:
        f.write(line + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(n) if n else b""

    def send_json(self, obj, code=200):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def log_auth(self):
        if os.environ.get("TLS_CERT") and self.headers.get("Authorization"):
            log("AUTH " + self.headers.get("Authorization"))

    def stream_tool_call(self, model, created, command):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        args = json.dumps({"command": command, "description": "Prints the environment"})
        for delta, finish in (({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                                                     "function": {"name": "bash", "arguments": args}}]},
                               None), ({}, "tool_calls")):
            obj = {"id": "chatcmpl-0", "object": "chat.completion.chunk", "created": created, "model": model,
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            self.chunk(b"data: " + json.dumps(obj).encode() + b"\n\n")
        self.chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")

    def do_GET(self):
        log("GET " + self.path)
        self.log_auth()
        if self.path.split("?")[0] in ("/v1/models", "/api/tags"):
            self.send_json({"object": "list", "data": [{"id": "fake-model", "object": "model",
                                                        "created": 0, "owned_by": "test"}],
                            "models": [{"name": "fake-model", "model": "fake-model"}]})
        else:
            self.send_json({"status": "success"})

    def do_POST(self):
        log("POST " + self.path)
        self.log_auth()
        raw = self.body()
        try:
            req = json.loads(raw or b"{}")
        except ValueError:
            req = {}
        if self.path.split("?")[0] != "/v1/chat/completions":
            self.send_json({"status": "success"})
            return
        model = req.get("model", "fake-model")
        created = int(time.time())
        tool = os.environ.get("TOOL_COMMAND")
        results = [m for m in req.get("messages", []) if m.get("role") == "tool"]
        for m in results:
            content = m.get("content")
            log("TOOL " + json.dumps(content if isinstance(content, str) else json.dumps(content)))
        if tool and not results and req.get("stream"):
            self.stream_tool_call(model, created, tool)
            return
        if not req.get("stream"):
            self.send_json({"id": "chatcmpl-1", "object": "chat.completion", "created": created,
                            "model": model,
                            "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": REPLY}}],
                            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

        def event(delta, finish=None, usage=None):
            obj = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": created,
                   "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            if usage:
                obj["usage"] = usage
            self.chunk(b"data: " + json.dumps(obj).encode() + b"\n\n")

        event({"role": "assistant", "content": ""})
        event({"content": REPLY})
        event({}, "stop", {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2})
        self.chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")


server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
server.daemon_threads = True
if os.environ.get("TLS_CERT"):
    import ssl
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.environ["TLS_CERT"])
    ctx.set_alpn_protocols(["http/1.1"])
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
print("port %d" % server.server_address[1], flush=True)
server.serve_forever()
