"""Sealed secrets: round trip, purpose separation, another key refused, old plain rows still read."""
from __future__ import annotations

import pytest

from myapp.auth.sealed import SealError, is_sealed, seal, unseal


def test_round_trip_hides_the_value():
    stored = seal("k" * 32, "webhook", "s3cret-value")
    assert is_sealed(stored) and "s3cret" not in stored
    assert unseal("k" * 32, "webhook", stored) == "s3cret-value"
    assert seal("k" * 32, "webhook", "s3cret-value") != stored  # a fresh nonce each time


def test_another_key_or_purpose_cannot_open_it():
    stored = seal("k" * 32, "webhook", "v")
    with pytest.raises(SealError, match="webhook"):
        unseal("other" * 8, "webhook", stored)
    with pytest.raises(SealError):
        unseal("k" * 32, "notebook-token", stored)


def test_rows_written_before_sealing_read_as_they_are():
    assert unseal("k" * 32, "webhook", "plain-old") == "plain-old" and not is_sealed("plain-old")
