"""Pure logic: request validation messages name the field."""

import pytest

from common.errors import BadRequest
from common.validation import BOOLEAN, check, obj, string

SCHEMA = obj({"title": string(10, 1), "on": BOOLEAN, "tags": {"type": "array", "maxItems": 2}}, required=("title",))


@pytest.mark.parametrize(
    "value, message",
    [
        ({}, "field 'title' is required"),
        ({"title": ""}, "field 'title' must not be empty"),
        ({"title": "x" * 11}, "field 'title' must be at most 10 characters"),
        ({"title": "ok", "on": "yes"}, "field 'on' must be of type boolean"),
        ({"title": "ok", "extra": 1, "more": 2}, "unknown field(s): extra, more"),
        ({"title": "ok", "tags": [1, 2, 3]}, "field 'tags' may hold at most 2 items"),
        ([], "request body must be of type object"),
    ],
)
def test_messages(value, message):
    with pytest.raises(BadRequest) as ex:
        check(value, SCHEMA)
    assert ex.value.message == message


def test_valid_input_passes_through():
    assert check({"title": "ok", "on": True}, SCHEMA) == {"title": "ok", "on": True}
