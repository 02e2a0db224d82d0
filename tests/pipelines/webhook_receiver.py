"""A real local HTTP(S) receiver for the webhook tests: it records what it gets and answers as told."""
from __future__ import annotations

import http.server
import ssl
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    url: str
    port: int
    received: list[Received] = field(default_factory=list)
    # What the next requests get: (status, headers, body) each; the last one repeats.
    answers: list[tuple[int, dict[str, str], bytes]] = field(default_factory=lambda: [(200, {}, b"ok")])
    flood_bytes: int = 0  # when set: answer 200 with a body this long, written in chunks
    flood_sent: int = 0  # how much of it went out before the client hung up
    server_names: list[str | None] = field(default_factory=list)  # TLS SNI seen

    def answer(self) -> tuple[int, dict[str, str], bytes]:
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


def _handler(receiver: Receiver) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            receiver.received.append(Received(self.path, dict(self.headers.items()), body))
            if receiver.flood_bytes:
                self._flood()
                return
            status, headers, answer = receiver.answer()
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def _flood(self):
            self.send_response(200)
            self.send_header("Content-Length", str(receiver.flood_bytes))
            self.end_headers()
            chunk = b"x" * 65536
            try:
                while receiver.flood_sent < receiver.flood_bytes:
                    self.wfile.write(chunk)
                    receiver.flood_sent += len(chunk)
            except OSError:  # the client closed the connection: what the test wants to see
                self.close_connection = True

        def log_message(self, *args):
            pass

    return Handler


@contextmanager
def receiver(tls: tuple[Path, Path] | None = None, host: str = "127.0.0.1") -> Iterator[Receiver]:
    """A receiver on 127.0.0.1 (HTTPS with tls=(certfile, keyfile)); its url names `host`."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    port = server.server_port
    rec = Receiver(url=f"{'https' if tls else 'http'}://{host}:{port}/hook", port=port)
    server.RequestHandlerClass = _handler(rec)
    if tls:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(*tls)
        context.sni_callback = lambda sock, name, ctx: rec.server_names.append(name)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield rec
    finally:
        server.shutdown()
        server.server_close()


def self_signed(folder: Path, name: str) -> tuple[Path, Path]:
    """A certificate for DNS name `name` (its own CA), made with the openssl command."""
    cert, key = folder / f"{name}.crt", folder / f"{name}.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN={name}",
                    "-addext", f"subjectAltName=DNS:{name}", "-addext", "basicConstraints=critical,CA:TRUE",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    return cert, key
