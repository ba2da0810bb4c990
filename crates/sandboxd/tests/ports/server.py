"""A little server for the ports tests, Python's standard library only: an echo of a POST
body's length and digest, the request headers it saw, a cookie set for the whole domain, a
Server-Sent Events stream that waits for a file between its events, a WebSocket echo, and a
101 answer to a request that asked for no upgrade. Run: python3 server.py PORT."""

import base64
import hashlib
import http.server
import json
import os
import struct
import sys
import time

WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def reply(self, status, body, content_type="application/json"):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path.startswith("/headers"):
            seen = {k.lower(): v for k, v in self.headers.items()}
            self.reply(200, json.dumps({"path": self.path, "headers": seen}).encode())
        elif self.path.startswith("/setcookie"):
            self.send_response(200)
            self.send_header("Set-Cookie", "sid=good; Domain=preview.sandboxd.test; Path=/")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/switch":
            self.send_response(101)
            self.send_header("Upgrade", "something")
            self.send_header("Connection", "Upgrade")
            self.end_headers()
            self.wfile.write(b"not HTTP from here on")
            self.close_connection = True
        elif self.path == "/sse":
            self.sse()
        elif self.path == "/ws":
            self.websocket()
        else:
            self.reply(404, b"{}")

    def do_POST(self):
        digest, length = hashlib.sha256(), 0
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunk = self.rfile.read(size)
                self.rfile.readline()
                digest.update(chunk)
                length += len(chunk)
        else:
            remaining = int(self.headers.get("Content-Length", "0"))
            while remaining:
                chunk = self.rfile.read(min(remaining, 65536))
                digest.update(chunk)
                length += len(chunk)
                remaining -= len(chunk)
        self.reply(200, json.dumps({"length": length, "sha256": digest.hexdigest()}).encode())

    def sse(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(b"event: tick\ndata: one\n\n")
        self.wfile.flush()
        # The second event waits for the test to make a file: proof that the first was
        # passed on while the stream was open.
        for _ in range(600):
            if os.path.exists("/workspace/go"):
                break
            time.sleep(0.05)
        self.wfile.write(b"event: tick\ndata: two\n\n")
        self.wfile.flush()
        self.close_connection = True

    def websocket(self):
        key = self.headers["Sec-WebSocket-Key"]
        accept = base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()
        self.send_response(101)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", accept)
        self.end_headers()
        self.wfile.flush()
        while True:
            head = self.rfile.read(2)
            if len(head) < 2:
                return
            opcode, length = head[0] & 0x0F, head[1] & 0x7F
            if length == 126:
                length = struct.unpack(">H", self.rfile.read(2))[0]
            elif length == 127:
                length = struct.unpack(">Q", self.rfile.read(8))[0]
            mask = self.rfile.read(4)
            data = bytes(b ^ mask[i % 4] for i, b in enumerate(self.rfile.read(length)))
            if opcode == 8:
                self.wfile.write(b"\x88\x00")
                return
            header = bytes([0x80 | opcode])
            if len(data) < 126:
                header += bytes([len(data)])
            elif len(data) < 65536:
                header += bytes([126]) + struct.pack(">H", len(data))
            else:
                header += bytes([127]) + struct.pack(">Q", len(data))
            self.wfile.write(header + data)
            self.wfile.flush()

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
