"""Pure logic: request validation messages name the field; query parameters follow their schemas."""

import falcon
import falcon.testing
import pytest

from common.app import create_app
from common.errors import BadRequest, PayloadTooLarge
from common.validation import BOOLEAN, TEXT, VISIBLE, check, choice, exactly_one, integer, long_string, media, obj, param, string

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


def test_a_pattern_ends_where_the_text_ends():
    # JSON Schema's (ECMA-262) "$": Python's alone would let a final newline through.
    schema = obj({"slug": string(10, 1, pattern="^[a-z]+$")})
    assert check({"slug": "acme"}, schema) == {"slug": "acme"}
    with pytest.raises(BadRequest, match="field 'slug' has an invalid format"):
        check({"slug": "acme\n"}, schema)


@pytest.mark.parametrize("text", ["", "   ", "\t\n", "\x1c\x1f "])
def test_visible_refuses_blank_text(text):
    with pytest.raises(BadRequest, match="field 'title' must not be blank"):
        check({"title": text}, obj({"title": string(10, pattern=VISIBLE)}))


def test_long_text_past_its_length_is_413():
    schema = obj({"content": long_string(5)})
    assert check({"content": "12345"}, schema) == {"content": "12345"}
    with pytest.raises(PayloadTooLarge, match="field 'content' must be at most 5 characters"):
        check({"content": "123456"}, schema)


LIMIT = integer(1, 100, 20)
SORT = choice(("newest", "top"), "newest")


@pytest.mark.parametrize(
    "query, name, schema, expected",
    [
        ("", "limit", LIMIT, 20),
        ("limit=7", "limit", LIMIT, 7),
        ("sort=top", "sort", SORT, "top"),
        ("", "sort", SORT, "newest"),
        ("board=", "board", TEXT, ""),
    ],
)
def test_param_reads_what_its_schema_allows(query, name, schema, expected):
    assert param(request(query), name, schema) == expected


@pytest.mark.parametrize(
    "query, name, schema, message, code",
    [
        ("limit=0", "limit", LIMIT, "query parameter 'limit' must be between 1 and 100", "out_of_range"),
        ("limit=+7", "limit", LIMIT, "query parameter 'limit' must be an integer", "wrong_type"),
        ("limit=%207", "limit", LIMIT, "query parameter 'limit' must be an integer", "wrong_type"),
        ("limit=7_0", "limit", LIMIT, "query parameter 'limit' must be an integer", "wrong_type"),
        ("limit=", "limit", LIMIT, "query parameter 'limit' must be an integer", "wrong_type"),
        ("limit=1&limit=2", "limit", LIMIT, "query parameter 'limit' must be given once", "duplicate"),
        ("sort=", "sort", SORT, "query parameter 'sort' must be one of: newest, top", "not_allowed"),
        ("sort=random", "sort", SORT, "query parameter 'sort' must be one of: newest, top", "not_allowed"),
        ("q=%20", "q", string(5, 1, pattern=VISIBLE), "query parameter 'q' must not be blank", "invalid_format"),
        ("q=123456", "q", string(5, 1), "query parameter 'q' must be at most 5 characters", "too_long"),
        ("", "q", string(5, 1), "query parameter 'q' is required", "required"),
    ],
)
def test_param_refuses_what_its_schema_does_not(query, name, schema, message, code):
    with pytest.raises(BadRequest) as ex:
        param(request(query), name, schema, required=name == "q")
    assert ex.value.message == message and ex.value.code == "invalid_request"
    assert ex.value.errors == [{"field": name, "message": message, "code": code}]


def request(query: str) -> falcon.Request:
    return falcon.Request(falcon.testing.create_environ(query_string=query))


# -- request bodies: JSON, declared as JSON ------------------------------------------------------


class Echo:
    """A resource that reads its body as every service's resources do."""

    def on_post(self, req, resp):
        resp.media = check(media(req), SCHEMA)

    on_put = on_patch = on_post


def client() -> falcon.testing.TestClient:
    app = create_app("validation-test")
    app.add_route("/echo", Echo())
    return falcon.testing.TestClient(app)


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH"])
@pytest.mark.parametrize(
    "content_type, body",
    [
        ("application/x-www-form-urlencoded", b"title=ok"),
        ("multipart/form-data; boundary=xx", b'--xx\r\nContent-Disposition: form-data; name="title"\r\n\r\nok\r\n--xx--\r\n'),
        ("text/plain", b'{"title": "ok"}'),
        ("text/plain", b""),
        ("application/xml", b"<title>ok</title>"),
        ("application/jsonx", b'{"title": "ok"}'),
    ],
)
def test_a_body_that_is_not_declared_json_is_415_naming_both_types(method, content_type, body):
    r = client().simulate_request(method, "/echo", body=body, headers={"Content-Type": content_type})
    assert r.status_code == 415, r.text
    assert set(r.json) == {"error", "code"}, "the platform's one error shape"
    assert content_type.split(";")[0] in r.json["error"] and "application/json" in r.json["error"]


def test_a_body_without_a_content_type_is_415():
    r = client().simulate_post("/echo", body=b'{"title": "ok"}')
    assert r.status_code == 415, r.text
    assert "no Content-Type" in r.json["error"] and "application/json" in r.json["error"]


@pytest.mark.parametrize("content_type", ["application/json", "application/json; charset=utf-8", "application/json;charset=UTF-8",
                                          "Application/JSON", " application/json "])
def test_json_is_read_with_or_without_a_charset(content_type):
    r = client().simulate_post("/echo", body=b'{"title": "ok"}', headers={"Content-Type": content_type})
    assert (r.status_code, r.json) == (200, {"title": "ok"})


def test_no_body_is_an_empty_object_and_malformed_json_is_400():
    missing = {"error": "field 'title' is required", "code": "invalid_request", "errors": [{"field": "title", "message": "field 'title' is required", "code": "required"}]}
    assert client().simulate_post("/echo").json == missing
    r = client().simulate_post("/echo", body=b"", headers={"Content-Type": "application/json"})
    assert (r.status_code, r.json) == (400, missing)
    r = client().simulate_post("/echo", body=b"{not json", headers={"Content-Type": "application/json"})
    assert (r.status_code, r.json) == (400, {"error": "request body is not valid JSON", "code": "invalid_json"})


BOARD = {**obj({"boardSlug": string(10, 1), "boardId": string(24, 1), "title": string(10, 1)}, required=("title",)),
         **exactly_one("boardSlug", "boardId")}


@pytest.mark.parametrize("value", [{"title": "ok"}, {"title": "ok", "boardSlug": "a", "boardId": "b"}])
def test_exactly_one_names_every_field_when_none_or_both_are_given(value):
    with pytest.raises(BadRequest) as ex:
        check(value, BOARD)
    assert ex.value.message == "give exactly one of 'boardSlug' or 'boardId'"


def test_exactly_one_takes_either_and_checks_it_as_usual():
    assert check({"title": "ok", "boardId": "b"}, BOARD) == {"title": "ok", "boardId": "b"}
    assert check({"title": "ok", "boardSlug": "a"}, BOARD) == {"title": "ok", "boardSlug": "a"}
    with pytest.raises(BadRequest, match="field 'boardSlug' must not be empty"):
        check({"title": "ok", "boardSlug": ""}, BOARD)
    with pytest.raises(BadRequest, match="field 'title' is required"):
        check({"boardSlug": "a"}, BOARD)


# -- every problem at once: ``errors`` --------------------------------------------------------------


def test_every_broken_field_is_listed_with_its_own_field():
    with pytest.raises(BadRequest) as ex:
        check({"on": "yes", "tags": [1, 2, 3]}, SCHEMA)  # no title, a text for a boolean, a tag too many
    assert ex.value.message == "field 'title' is required", "the one line is the most relevant problem, as before"
    assert ex.value.errors[0] == {"field": "title", "message": "field 'title' is required", "code": "required"}
    assert sorted(ex.value.errors, key=lambda e: e["field"]) == [
        {"field": "on", "message": "field 'on' must be of type boolean", "code": "wrong_type"},
        {"field": "tags", "message": "field 'tags' may hold at most 2 items", "code": "too_many"},
        {"field": "title", "message": "field 'title' is required", "code": "required"},
    ]


def test_a_single_problem_says_what_it_said_before_and_is_the_one_entry():
    with pytest.raises(BadRequest) as ex:
        check({"title": "x" * 11}, SCHEMA)
    assert ex.value.message == "field 'title' must be at most 10 characters"
    assert ex.value.errors == [{"field": "title", "message": "field 'title' must be at most 10 characters", "code": "too_long"}]


NESTED = obj({"title": string(10, 1), "fields": obj({"eta": string(7, 7), "impact": integer(1, 5)}, required=("eta",)),
              "tags": {"type": "array", "items": string(3, 1)}}, required=("title", "fields"))


def test_fields_are_named_by_their_dotted_path():
    with pytest.raises(BadRequest) as ex:
        check({"fields": {"impact": 9, "reach": 1}, "tags": ["ok", ""], "more": 1}, NESTED)
    assert {e["field"]: e["message"] for e in ex.value.errors} == {
        "title": "field 'title' is required",
        "more": "unknown field 'more'",
        "fields.eta": "field 'fields.eta' is required",
        "fields.reach": "unknown field 'fields.reach'",
        "fields.impact": "field 'fields.impact': 9 is greater than the maximum of 5",
        "tags.1": "field 'tags.1' must not be empty",
    }


def test_each_unknown_field_and_each_missing_one_is_its_own_entry():
    with pytest.raises(BadRequest) as ex:
        check({"extra": 1, "more": 2}, obj({"a": TEXT, "b": TEXT}, required=("a", "b")))
    assert ex.value.message == "field 'a' is required"
    assert ex.value.errors == [
        {"field": "a", "message": "field 'a' is required", "code": "required"},
        {"field": "b", "message": "field 'b' is required", "code": "required"},
        {"field": "extra", "message": "unknown field 'extra'", "code": "unknown_field"},
        {"field": "more", "message": "unknown field 'more'", "code": "unknown_field"},
    ]


def test_a_choice_of_fields_is_named_by_its_first_and_a_wrong_type_is_one_problem():
    with pytest.raises(BadRequest) as ex:
        check({"on": 1}, {**BOARD, "properties": {**BOARD["properties"], "on": BOOLEAN}})
    assert sorted((e["field"], e["message"]) for e in ex.value.errors) == [
        ("boardSlug", "give exactly one of 'boardSlug' or 'boardId'"),
        ("on", "field 'on' must be of type boolean"),
        ("title", "field 'title' is required"),
    ]
    # A body that is not an object is that one problem (not also "give exactly one of...").
    with pytest.raises(BadRequest) as ex:
        check([], BOARD)
    assert ex.value.errors == [{"field": "", "message": "request body must be of type object", "code": "wrong_type"}]


def test_a_text_past_its_oversize_length_is_413_listing_every_problem():
    schema = obj({"title": string(5), "content": long_string(5)})
    with pytest.raises(PayloadTooLarge) as ex:
        check({"content": "123456"}, schema)
    assert ex.value.errors == [{"field": "content", "message": "field 'content' must be at most 5 characters", "code": "too_long"}]
    with pytest.raises(BadRequest) as ex:  # the most relevant problem decides, as before
        check({"content": "123456", "extra": 1}, schema)
    assert [e["field"] for e in ex.value.errors] == ["extra", "content"]


def test_the_api_answers_every_problem_and_other_refusals_carry_error_alone():
    r = client().simulate_post("/echo", json={"on": "yes", "tags": [1, 2, 3]})
    assert r.status_code == 400, r.text
    assert r.json["error"] == "field 'title' is required"
    assert sorted(e["field"] for e in r.json["errors"]) == ["on", "tags", "title"]
    r = client().simulate_post("/echo", body=b"{not json", headers={"Content-Type": "application/json"})
    assert (r.status_code, set(r.json)) == (400, {"error", "code"})
    r = client().simulate_post("/echo", body=b"title=ok", headers={"Content-Type": "text/plain"})
    assert (r.status_code, set(r.json)) == (415, {"error", "code"})
