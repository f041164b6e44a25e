"""Real google-auth credentials with no network but loopback: a service-account key made
here (an RSA key of its own, made once per process: a 2048-bit key costs 40 to 180 ms of
CPU, and no test depends on which key it is) whose `token_uri` is a token endpoint served
on 127.0.0.1, which checks the signed assertion as Google's does (the key's signature,
the cloud-platform scope) and hands out counted, short- or long-lived access tokens."""

from __future__ import annotations

import base64
import functools
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

SCOPE = "https://www.googleapis.com/auth/cloud-platform"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


@dataclass
class TokenEndpoint:
    """Google's OAuth2 token endpoint for one service account: `issued` are the tokens
    it gave, `lifetime` their `expires_in`, `refused` the assertions it turned down."""

    public_key: Any
    lifetime: int = 3600
    issued: list[str] = field(default_factory=list[str])
    scopes: list[str] = field(default_factory=list[str])
    refused: int = 0
    url: str = ""

    def answer(self, form: dict[str, list[str]]) -> tuple[int, dict[str, Any]]:
        if form.get("grant_type") != [JWT_BEARER] or "assertion" not in form:
            self.refused += 1
            return 400, {"error": "unsupported_grant_type"}
        head, claims, signature = form["assertion"][0].split(".")
        try:
            self.public_key.verify(
                _unpadded(signature),
                f"{head}.{claims}".encode(),
                padding.PKCS1v15(),
                hashes.SHA256(),
            )
        except Exception:
            self.refused += 1
            return 400, {"error": "invalid_grant", "error_description": "Invalid JWT Signature."}
        scope = json.loads(_unpadded(claims)).get("scope", "")
        self.scopes.append(scope)
        token = f"ya29.emulated-{len(self.issued) + 1}"
        self.issued.append(token)
        return 200, {"access_token": token, "expires_in": self.lifetime, "token_type": "Bearer"}


@functools.cache
def _private_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _unpadded(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


@contextmanager
def service_account(
    directory: Path, *, project: str = "demo-project", lifetime: int = 3600
) -> Iterator[tuple[Path, TokenEndpoint]]:
    """A service-account key file in `directory` and its token endpoint, served while
    the block runs."""
    key = _private_key()
    endpoint = TokenEndpoint(key.public_key(), lifetime)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            form = parse_qs(self.rfile.read(length).decode())
            status, body = endpoint.answer(form)
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    endpoint.url = f"http://127.0.0.1:{server.server_address[1]}/token"
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    info = {
        "type": "service_account",
        "project_id": project,
        "private_key_id": "0123456789abcdef",
        "private_key": pem,
        "client_email": f"wink-test@{project}.iam.gserviceaccount.com",
        "client_id": "1234567890",
        "token_uri": endpoint.url,
    }
    path = directory / "service-account.json"
    path.write_text(json.dumps(info))
    try:
        yield path, endpoint
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
