"""Domain errors. Services raise these; the app factory maps each to its HTTP status once."""


class FeedbackError(Exception):
    """Base of every error a client should see as ``{"error": message}``.

    ``errors``, when given, is what the request's validation found, every problem at once, each
    ``{"field": ..., "message": ...}`` (``common.validation``): the answer then also carries
    ``"errors": [...]``, and ``message`` stays the one-line ``error``. Only the validation of a
    body or a query parameter gives it; every other refusal has ``error`` alone."""

    status = "400 Bad Request"
    # A stable name of the refusal (``{"code"}`` beside ``error``, docs/languages.md): the
    # message is English for people reading logs; a client shows its own words for the code.
    # A refusal with ``errors`` (a request breaking its schema) is ``invalid_request``.
    code = "bad_request"

    def __init__(self, message: str, *, headers: dict | None = None, errors: list[dict] | None = None,
                 code: str | None = None):
        super().__init__(message)
        self.message = message
        self.headers = headers or {}
        self.errors = errors
        self.code = code or ("invalid_request" if errors else type(self).code)

    def body(self) -> dict:
        """The answer's JSON: ``{"error", "code"}``, and ``errors`` where the request broke its schema."""
        answer = {"error": self.message, "code": self.code}
        if self.errors is not None:
            answer["errors"] = self.errors
        return answer


class BadRequest(FeedbackError):
    status = "400 Bad Request"


class Unauthorized(FeedbackError):
    status = "401 Unauthorized"
    code = "unauthorized"


class Forbidden(FeedbackError):
    status = "403 Forbidden"
    code = "forbidden"


class NotFound(FeedbackError):
    status = "404 Not Found"
    code = "not_found"


class Conflict(FeedbackError):
    status = "409 Conflict"
    code = "conflict"


class PayloadTooLarge(FeedbackError):
    status = "413 Payload Too Large"
    code = "payload_too_large"


class UriTooLong(FeedbackError):
    status = "414 URI Too Long"
    code = "uri_too_long"


class UnsupportedMediaType(FeedbackError):
    """A request body that is not declared JSON (a form, text, no Content-Type at all)."""

    status = "415 Unsupported Media Type"
    code = "unsupported_media_type"


class Unavailable(FeedbackError):
    status = "503 Service Unavailable"
    code = "unavailable"


class BadGateway(FeedbackError):
    status = "502 Bad Gateway"
    code = "bad_gateway"


class GatewayTimeout(FeedbackError):
    status = "504 Gateway Timeout"
    code = "gateway_timeout"


class TooManyRequests(FeedbackError):
    status = "429 Too Many Requests"
    code = "rate_limited"


class UnprocessableEntity(FeedbackError):
    status = "422 Unprocessable Entity"
    code = "unprocessable"
