"""The one exception tree of szrag.

Every error a user can cause or meet derives from SzragError. Each class says, as class
attributes, its stable ``code`` (the one label that logs, tool results, activities and the
HTTP API show), the ``http_status`` the API answers with, and the CLI ``exit_code``; the
message is fit to show as is. Faces (CLI, server, Slack) catch the base once::

    SzragError                      error              500
    ├── ConfigError                 config_error       500  bad configuration (file, environment)
    ├── QuestionError               empty_question     400  an empty or unusable question
    ├── IndexStoreError             index_unavailable  503  the index cannot be opened or written
    │   ├── DamagedIndexError       index_damaged      503  its database file is damaged
    │   └── StoreUnavailable        store_unavailable  503  its database server cannot be reached now
    ├── PathError                   not_in_index       404  a path outside the root or not indexed
    ├── CommandError                command_failed     502  a command could not be found or run
    │   ├── UnknownCommand          unknown_command    404
    │   ├── CommandNotAllowed       not_allowed        403  off the allowlist
    │   │   └── CommandBlocked      blocked            403  never run for a caller (ask recurses)
    │   ├── MissingHandler          missing_handler    500  metadata registered without a handler
    │   ├── CommandFailed           failed             502  the handler raised
    │   │   └── CommandInputError   bad_input          400  the handler refused its input
    │   ├── NoResponse              no_response        502
    │   ├── CommandTimeout          timeout            504
    │   └── ContextClosed           context_closed     500  a response after the command ended
    ├── ConversationError           conversation_error 400  a conversation or feedback cannot be used
    │   ├── UnknownConversation     unknown_conversation 404  no such conversation (or expired)
    │   ├── UnknownAnswer           unknown_answer     404  no such answer (or no longer kept)
    │   ├── FeedbackError           bad_feedback       400  a rating, right file or comment refused
    │   └── ConversationStoreError  conversations_unavailable 503  the store cannot be read or written
    ├── RepositoryError             repository_error   400  a service's repository list is unusable
    │   ├── UnknownRepository       unknown_repository 404  no repository of the service has this name
    │   └── RepositoryUnavailable   repository_unavailable 503  being cloned, its clone failed, its folder gone
    ├── ToolError                   tool_error         400  unknown tool, bad arguments
    ├── ProviderError               provider           502  the model provider failed
    │   ├── ProviderAuthError       auth                    401 / 403: the key
    │   ├── ProviderNotFoundError   not_found               404: AI_URL or the model
    │   ├── ProviderRequestError    bad_request             another 4xx
    │   ├── ProviderRateLimitError  rate_limited            429 after every retry
    │   ├── ProviderServerError     server_error            5xx, or an error event in the stream
    │   ├── ProviderConnectionError connection              unreachable, or hung up
    │   ├── ProviderTimeoutError    timeout                 silent too long, or past the deadline
    │   ├── StreamCutError          stream_cut              the reply ended before it was complete
    │   ├── MalformedResponseError  malformed               not the JSON it should be
    │   └── ReplyTooLargeError      too_large               past SZRAG_AI_MAX_REPLY_CHARS
    ├── ServerClosing               server_closing     503  the server is shutting down
    ├── SlackApiFailed              slack_api          502  a call to Slack's Web API was refused
    └── ClientGone                  client_closed      499  the HTTP client went away

``szrag.server.errors.ApiError`` (a face's own refusals: auth, limits, bad bodies) is a
SzragError whose code and status are chosen per instance.
"""

from __future__ import annotations


class SzragError(Exception):
    """Base of every szrag error: a message to show, a stable code, an HTTP status and a
    CLI exit code."""

    code: str = "error"
    http_status: int = 500
    exit_code: int = 1

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if exit_code is not None:
            self.exit_code = exit_code

    def __str__(self) -> str:
        return self.message


def error_code(error: BaseException) -> str:
    """The stable code of ``error`` ("failed" for anything that is not a SzragError)."""
    return error.code if isinstance(error, SzragError) else "failed"


class ConfigError(SzragError):
    """Configuration that cannot be used."""

    code = "config_error"
    exit_code = 2


class QuestionError(SzragError):
    """A question that is empty or otherwise unusable."""

    code = "empty_question"
    http_status = 400
    exit_code = 2


class IndexStoreError(SzragError):
    """The index cannot be opened, written or rebuilt."""

    code = "index_unavailable"
    http_status = 503


class DamagedIndexError(IndexStoreError):
    """SQLite reports the database file as damaged (set aside and rebuilt by the index)."""

    code = "index_damaged"


class StoreUnavailable(IndexStoreError):
    """The database server of a store cannot be reached now (down, restarting, too slow):
    the request fails at once, and the store reconnects by itself when the server is back."""

    code = "store_unavailable"


class PathError(SzragError):
    """A path that is outside the indexed root or unknown to the index."""

    code = "not_in_index"
    http_status = 404
    exit_code = 2


# --- commands -----------------------------------------------------------------------------


class CommandError(SzragError):
    """A command could not be found or run."""

    code = "command_failed"
    http_status = 502


class UnknownCommand(CommandError):
    """No registered command has this id or slash name."""

    code = "unknown_command"
    http_status = 404
    exit_code = 2


class CommandNotAllowed(CommandError):
    """The command exists but may not be run from here."""

    code = "not_allowed"
    http_status = 403
    exit_code = 2


class CommandBlocked(CommandNotAllowed):
    """The command never runs for a caller other than a person (``ask`` would recurse)."""

    code = "blocked"


class MissingHandler(CommandError):
    """The command's metadata is registered but nothing handles it."""

    code = "missing_handler"
    http_status = 500


class CommandFailed(CommandError):
    """The command's handler raised an error."""

    code = "failed"


class CommandInputError(CommandFailed):
    """The handler refused its input; the message says what it expects."""

    code = "bad_input"
    http_status = 400
    exit_code = 2


class NoResponse(CommandError):
    """The handler finished without a single response."""

    code = "no_response"


class CommandTimeout(CommandError):
    """The handler did not finish in time and was cancelled."""

    code = "timeout"
    http_status = 504


class ContextClosed(CommandError):
    """A handler responded after its command had ended (timed out or finished)."""

    code = "context_closed"
    http_status = 500


# --- conversations and feedback --------------------------------------------------------------


class ConversationError(SzragError):
    """A conversation, an answer or feedback that cannot be used."""

    code = "conversation_error"
    http_status = 400
    exit_code = 2


class UnknownConversation(ConversationError):
    """No conversation has this id (never started, or older than conversations are kept)."""

    code = "unknown_conversation"
    http_status = 404


class UnknownAnswer(ConversationError):
    """No kept answer has this id (never given, or no longer kept)."""

    code = "unknown_answer"
    http_status = 404


class FeedbackError(ConversationError):
    """Feedback that is refused: a rating other than up or down, a right file that is not
    indexed (the message suggests near misses), a comment that is too long."""

    code = "bad_feedback"


class ConversationStoreError(ConversationError):
    """The conversation store (``.rag/conversations.db``) cannot be opened, read or written;
    it is never replaced: the message names the file."""

    code = "conversations_unavailable"
    http_status = 503
    exit_code = 1


# --- the repositories of a service ------------------------------------------------------------


class RepositoryError(SzragError):
    """A service's repositories cannot be used as given: a bad or repeated name, a path that
    is no folder, a clone that failed."""

    code = "repository_error"
    http_status = 400


class UnknownRepository(RepositoryError):
    """No repository of the service has this name."""

    code = "unknown_repository"
    http_status = 404


class RepositoryUnavailable(RepositoryError):
    """A repository of the service cannot answer now: it is still being cloned, its clone
    failed, or its folder is gone (the others still answer)."""

    code = "repository_unavailable"
    http_status = 503
    exit_code = 1


# --- tools and the model provider ------------------------------------------------------------


class ToolError(SzragError):
    """A live tool call that cannot be carried out."""

    code = "tool_error"
    http_status = 400


class ProviderError(SzragError):
    """The model provider failed or answered with something unusable.

    ``status`` is the provider's HTTP status where there was one; ``partial_text`` holds what
    the model had answered before the failure (kept, and shown as cut)."""

    code = "provider"
    http_status = 502
    partial_text: str = ""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ProviderAuthError(ProviderError):
    """The provider rejected the key (401) or the key's permissions (403)."""

    code = "auth"


class ProviderNotFoundError(ProviderError):
    """The endpoint or the model does not exist (404)."""

    code = "not_found"


class ProviderRequestError(ProviderError):
    """The provider refused the request for another client-side reason (4xx)."""

    code = "bad_request"


class ProviderRateLimitError(ProviderError):
    """Too many requests (429), still refused after the retries."""

    code = "rate_limited"


class ProviderServerError(ProviderError):
    """The provider failed on its side (5xx or an error event in the stream)."""

    code = "server_error"


class ProviderConnectionError(ProviderError):
    """The provider could not be reached, or (``dropped``) took the request and hung up."""

    code = "connection"
    dropped = False


class ProviderTimeoutError(ProviderError):
    """The provider went silent for longer than the timeout allows, or the reply took longer
    than its deadline."""

    code = "timeout"


class StreamCutError(ProviderError):
    """The reply stopped before it was complete."""

    code = "stream_cut"


class MalformedResponseError(ProviderError):
    """The provider sent something that is not the JSON it should be."""

    code = "malformed"


class ReplyTooLargeError(ProviderError):
    """The reply grew past the configured size (``SZRAG_AI_MAX_REPLY_CHARS``)."""

    code = "too_large"


# --- the server -------------------------------------------------------------------------------


class ServerClosing(SzragError):
    """The server is shutting down and takes no new work."""

    code = "server_closing"
    http_status = 503


class SlackApiFailed(SzragError):
    """Slack's Web API refused a call or could not be reached; ``error`` is Slack's own code
    (``not_in_channel``, ``channel_not_found``...) or ``unreachable``."""

    code = "slack_api"
    http_status = 502

    def __init__(self, message: str, *, error: str) -> None:
        super().__init__(message)
        self.error = error


class ClientGone(SzragError):
    """The HTTP client went away before the answer was ready."""

    code = "client_closed"
    http_status = 499
