"""Domain errors. Services raise these; the app factory maps each to its HTTP status once."""


class FeedbackError(Exception):
    """Base of every error a client should see as ``{"error": message}``.

    ``errors``, when given, is what the request's validation found, every problem at once, each
    ``{"field": ..., "message": ...}`` (``common.validation``): the answer then also carries
    ``"errors": [...]``, and ``message`` stays the one-line ``error``. Only the validation of a
    body or a query parameter gives it; every other refusal has ``error`` alone."""

    status = "400 Bad Request"

    def __init__(self, message: str, *, headers: dict | None = None, errors: list[dict] | None = None):
        super().__init__(message)
        self.message = message
        self.headers = headers or {}
        self.errors = errors


class BadRequest(FeedbackError):
    status = "400 Bad Request"


class Unauthorized(FeedbackError):
    status = "401 Unauthorized"


class Forbidden(FeedbackError):
    status = "403 Forbidden"


class NotFound(FeedbackError):
    status = "404 Not Found"


class Conflict(FeedbackError):
    status = "409 Conflict"


class PayloadTooLarge(FeedbackError):
    status = "413 Payload Too Large"


class UriTooLong(FeedbackError):
    status = "414 URI Too Long"


class UnsupportedMediaType(FeedbackError):
    """A request body that is not declared JSON (a form, text, no Content-Type at all)."""

    status = "415 Unsupported Media Type"


class Unavailable(FeedbackError):
    status = "503 Service Unavailable"


class BadGateway(FeedbackError):
    status = "502 Bad Gateway"


class GatewayTimeout(FeedbackError):
    status = "504 Gateway Timeout"


class TooManyRequests(FeedbackError):
    status = "429 Too Many Requests"


class UnprocessableEntity(FeedbackError):
    status = "422 Unprocessable Entity"
