"""A TCP server that misbehaves below HTTP, for the faults a well-behaved fake cannot make.

FakeOpenAI (tests/support/fake_openai.py) always speaks correct HTTP/1.1. These behaviours do
not: they reset connections, trickle bytes (slow loris), send garbage or oversized headers.
One behaviour applies to every connection; stop() ends every trickle at once.

    with RawServer("slow_headers") as server:
        run gates against server.base_url
"""

from __future__ import annotations

import socket
import struct
import threading
from typing import Literal

Behaviour = Literal[
    "reset",  # read the request, then reset the connection (RST) without a byte
    "reset_mid_body",  # headers and part of a JSON body, then RST
    "close",  # accept and close at once (EOF before any response)
    "garbage",  # a line that is not HTTP, then close
    "slow_headers",  # a status line, then one header byte every `trickle_s`, forever
    "slow_body",  # complete headers (Content-Length 1 MB), then one body byte per `trickle_s`
    "huge_headers",  # a status line and one header line of 1 MiB
    "silent",  # read the request, never answer (until stopped)
]
TRICKLE_S = 0.05
SLOW_BODY_BYTES = 1024 * 1024  # the Content-Length a slow_body answer promises


class RawServer:
    def __init__(self, behaviour: Behaviour, *, trickle_s: float = TRICKLE_S) -> None:
        self.behaviour = behaviour
        self.trickle_s = trickle_s
        self.connections = 0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self._sock.settimeout(0.05)
        self._threads: list[threading.Thread] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}"

    def __enter__(self) -> RawServer:
        thread = threading.Thread(target=self._accept, name="raw-http", daemon=True)
        thread.start()
        self._threads.append(thread)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._stop.set()
        for thread in list(self._threads):
            thread.join(timeout=5)
        self._sock.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except (TimeoutError, OSError):
                continue
            with self._lock:
                self.connections += 1
            worker = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            worker.start()
            self._threads.append(worker)

    def _read_request(self, conn: socket.socket) -> None:
        conn.settimeout(2.0)
        data = b""
        try:
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
        except OSError:
            return

    @staticmethod
    def _reset(conn: socket.socket) -> None:
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        conn.close()

    def _trickle(self, conn: socket.socket, byte: bytes) -> None:
        while not self._stop.wait(self.trickle_s):
            conn.sendall(byte)

    def _serve(self, conn: socket.socket) -> None:
        behaviour = self.behaviour
        try:
            if behaviour == "close":
                conn.close()
                return
            self._read_request(conn)
            if behaviour == "reset":
                self._reset(conn)
                return
            if behaviour == "reset_mid_body":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Content-Length: 1000\r\n\r\n{\"object\": \"list\", \"da")
                self._reset(conn)
                return
            if behaviour == "garbage":
                conn.sendall(b"SSH-2.0-OpenSSH_9.6 not an HTTP server\r\n")
                conn.close()
                return
            if behaviour == "slow_headers":
                conn.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
                self._trickle(conn, b"a")
            elif behaviour == "slow_body":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Content-Length: %d\r\n\r\n[" % SLOW_BODY_BYTES)
                self._trickle(conn, b" ")
            elif behaviour == "huge_headers":
                conn.sendall(b"HTTP/1.1 200 OK\r\nX-Huge: " + b"h" * (1024 * 1024) + b"\r\n"
                             b"Content-Length: 2\r\n\r\n{}")
                self._stop.wait(5)
            elif behaviour == "silent":
                self._stop.wait()  # until the server stops: no deadline can be waited out
            conn.close()
        except OSError:
            conn.close()
