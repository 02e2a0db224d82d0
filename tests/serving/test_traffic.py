"""The split and the moves between splits (myapp/serving/traffic.py): pure, every refusal names its field."""
from __future__ import annotations

import pytest

from myapp.errors import FieldError, Kind
from myapp.serving import traffic as split

V = {1: split.VersionInfo(1, 10, "digits", 1), 2: split.VersionInfo(2, 10, "digits", 2),
     3: split.VersionInfo(3, 10, "other", 1), 4: split.VersionInfo(4, 20, "digits", 1)}


def refused(call, *args) -> FieldError:
    with pytest.raises(FieldError) as info:
        call(*args)
    return info.value


def test_a_split_must_add_up_to_100():
    assert split.check_split({"1": 70, "2": 30}, V, 10, "digits") == {"1": 70, "2": 30}
    error = refused(split.check_split, {"1": 70, "2": 20}, V, 10, "digits")
    assert (error.field, error.reason) == ("traffic", "weights must add up to 100, not 90")


@pytest.mark.parametrize(("traffic", "field", "reason"), [
    ({"1": 50, "3": 50}, "traffic.3", "model version 3 is a version of 'other', not of this service's model 'digits'"),
    ({"1": 50, "4": 50}, "traffic.4", "model version 4 not found"),  # another project's: not revealed
    ({"1": 50, "9": 50}, "traffic.9", "model version 9 not found"),
    ({"1": 101}, "traffic.1", "must be a whole number from 0 to 100"),
    ({"1": True}, "traffic.1", "must be a whole number from 0 to 100"),
    ({"x": 100}, "traffic", "'x' is not a model version id"),
    ({}, "traffic", "give at least one version and its weight"),
])
def test_bad_splits_name_the_field(traffic, field, reason):
    error = refused(split.check_split, traffic, {**V, 9: None}, 10, "digits")
    assert (error.field, error.reason) == (field, reason)


def test_canary_promote_rollback():
    assert split.canary(1, 2, 30) == {"1": 70, "2": 30}
    assert refused(split.canary, 1, 1, 30).field == "version_id"
    assert split.promote({"1": 70, "2": 30}, 1, None) == (2, {"2": 100})
    assert split.promote({"1": 70, "2": 30}, 1, 2) == (2, {"2": 100})
    assert refused(split.promote, {"1": 100}, 1, None).reason == "there is no canary to promote"
    assert refused(split.promote, {"1": 70, "2": 30}, 1, 5).field == "version_id"
    assert split.rollback({"1": 70, "2": 30}, 1) == {"1": 100}
    assert refused(split.rollback, {"1": 100}, 1).kind == Kind.CONFLICT


def test_wanted_versions_include_zero_weights_and_the_shadow():
    assert split.wanted_versions({"1": 100, "2": 0}, 5) == {1, 2, 5}
    assert split.wanted_versions({"1": 100}, None) == {1}
