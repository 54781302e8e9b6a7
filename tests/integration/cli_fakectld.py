"""A stand-in controller for the command tests (test_cli_*.py).

It listens on <StateSaveLocation>/loomctld.sock, speaks the frame format of
docs/proto/frame.md (4-byte big-endian length + one JSON object, no MAC) and
answers each request type from a table of canned payloads, recording every
request it got. This lets the layout tests feed the commands exactly the
records that real Slurm 22.05 showed when the expected outputs were captured,
so the comparison is byte for byte and independent of the scheduler.
"""
import json
import os
import socket
import struct
import threading


class FakeCtld:
    def __init__(self, sock_path, replies=None):
        self.sock_path = sock_path
        self.replies = dict(replies or {})  # type -> payload dict, or callable(req) -> dict
        self.requests = []
        self._srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if os.path.exists(sock_path):
            os.unlink(sock_path)
        self._srv.bind(sock_path)
        self._srv.listen(16)
        self._stop = False
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def close(self):
        self._stop = True
        try:
            socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).connect(self.sock_path)
        except OSError:
            pass
        self._thread.join(timeout=5)
        self._srv.close()
        if os.path.exists(self.sock_path):
            os.unlink(self.sock_path)

    def of_type(self, type_):
        return [r for r in self.requests if r.get("type") == type_]

    def _serve(self):
        while not self._stop:
            try:
                conn, _ = self._srv.accept()
            except OSError:
                return
            if self._stop:
                conn.close()
                return
            threading.Thread(target=self._client, args=(conn,), daemon=True).start()

    @staticmethod
    def _read(conn, n):
        buf = b""
        while len(buf) < n:
            chunk = conn.recv(n - len(buf))
            if not chunk:
                return None
            buf += chunk
        return buf

    def _client(self, conn):
        with conn:
            while True:
                head = self._read(conn, 4)
                if head is None:
                    return
                (n,) = struct.unpack(">I", head)
                body = self._read(conn, n)
                if body is None:
                    return
                req = json.loads(body.split(b"\0")[0])
                self.requests.append(req)
                reply = {"v": 1, "type": "reply", "id": req.get("id", 0), "rc": 0, "msg": ""}
                payload = self.replies.get(req.get("type"), {})
                if callable(payload):
                    payload = payload(req)
                reply.update(payload)
                data = json.dumps(reply).encode()
                conn.sendall(struct.pack(">I", len(data)) + data)
