"""Secrets the platform must read back (webhook signing secrets, Jupyter tokens) kept encrypted in SQL.

A database dump or a read-only SQL account then yields no usable secret. The key is derived from the
app's SECRET_KEY with HKDF (one purpose string per use, so a value sealed for one purpose does not
unseal for another); rotating SECRET_KEY makes sealed values unreadable, which `unseal` reports as
`SealError` rather than returning garbage. Sealed text starts with "sealed:" so a column can hold rows
written before sealing existed (read as they are) while every new write is sealed.
"""
from __future__ import annotations

import base64
import functools

from cryptography.fernet import Fernet, InvalidToken
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

PREFIX = "sealed:"


class SealError(ValueError):
    """A sealed value that this key cannot open (another SECRET_KEY, or altered)."""


@functools.lru_cache(maxsize=32)
def _fernet(secret_key: str, purpose: str) -> Fernet:
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=f"myapp/{purpose}".encode()).derive(
        secret_key.encode())
    return Fernet(base64.urlsafe_b64encode(key))


def seal(secret_key: str, purpose: str, value: str) -> str:
    return PREFIX + _fernet(secret_key, purpose).encrypt(value.encode()).decode()


def unseal(secret_key: str, purpose: str, stored: str) -> str:
    """The plain value; a value stored before sealing (no prefix) is returned as it is."""
    if not stored.startswith(PREFIX):
        return stored
    try:
        return _fernet(secret_key, purpose).decrypt(stored[len(PREFIX):].encode()).decode()
    except InvalidToken as exc:
        raise SealError(f"a sealed {purpose} cannot be opened with this SECRET_KEY") from exc


def is_sealed(stored: str | None) -> bool:
    return bool(stored) and stored.startswith(PREFIX)  # type: ignore[union-attr]
