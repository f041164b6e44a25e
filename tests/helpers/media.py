"""Small, valid media files for tests: a PNG, a PDF, a WAV, made here (no binary in git)."""

from __future__ import annotations

import struct
import zlib


def png(width: int = 1, height: int = 1) -> bytes:
    """A red PNG image of `width` x `height` pixels."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
        return struct.pack(">I", len(data)) + kind + data + crc

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def pdf(text: str = "Hello") -> bytes:
    """A one-page PDF (enough of one for the signature checks)."""
    return (
        b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n"
        b"2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\n"
        + f"% {text}\n".encode()
        + b"trailer << /Root 1 0 R >>\n%%EOF\n"
    )


def wav(samples: int = 8) -> bytes:
    """A silent 8 kHz mono WAV of `samples` samples."""
    data = b"\x00\x00" * samples
    fmt = struct.pack("<HHIIHH", 1, 1, 8000, 16000, 2, 16)
    return (
        b"RIFF"
        + struct.pack("<I", 36 + len(data))
        + b"WAVEfmt "
        + struct.pack("<I", 16)
        + fmt
        + b"data"
        + struct.pack("<I", len(data))
        + data
    )
