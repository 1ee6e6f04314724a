"""The server's lifecycle, as the LSP specification words it.

- Before `initialize`: a request gets -32002 (ServerNotInitialized); a notification is dropped,
  except `exit` (which then exits with 1).
- After `shutdown`: a request gets -32600 (InvalidRequest); a notification other than `exit` is
  dropped. `exit` exits with 0 after `shutdown`, with 1 without it (pygls' `lsp_exit`; the code
  reaches the process through `WgmmaLanguageServer.exit_code`).
- A request for a method the server does not have (with or without `params`, `$/`-prefixed or
  not) gets -32601 (MethodNotFound); such a notification is ignored.

`Lifecycle.admit` sees every valid JSON-RPC message before pygls does (transport.Dispatcher).
"""

from __future__ import annotations

import logging
from typing import Any, Callable

log = logging.getLogger("wgmma_lsp.lifecycle")

SERVER_NOT_INITIALIZED = -32002
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601

INITIALIZE = "initialize"
SHUTDOWN = "shutdown"
EXIT = "exit"
CANCEL_REQUEST = "$/cancelRequest"  # pygls handles it before looking for a handler


class Lifecycle:
    """Which messages the server may handle in its current state; answers the rest."""

    def __init__(self, known: Callable[[str], bool]) -> None:
        self.known = known  # does the server have a handler for this method?
        self.initialized = False
        self.shut_down = False

    def admit(self, message: dict[str, Any], send: Callable[[dict], None]) -> bool:
        """True: hand the message on. False: it was answered (or dropped) here."""
        method = message.get("method")
        if method is None:
            return True  # a response to one of our requests
        is_request = "id" in message
        if method == EXIT:
            return True
        if self.shut_down:
            if is_request:
                send(_error(message["id"], INVALID_REQUEST,
                            f"the server is shut down: {method} is not accepted after shutdown"))
            else:
                log.info("dropped a %s notification after shutdown", method)
            return False
        if not self.initialized:
            if method == INITIALIZE and is_request:
                self.initialized = True
                return True
            if is_request:
                send(_error(message["id"], SERVER_NOT_INITIALIZED,
                            f"the server is not initialized: {method} before initialize"))
            else:
                log.info("dropped a %s notification before initialize", method)
            return False
        if method != CANCEL_REQUEST and not self.known(method):
            if is_request:
                send(_error(message["id"], METHOD_NOT_FOUND, f"method not found: {method}"))
            else:
                log.debug("ignored a notification for an unknown method: %s", method)
            return False
        if method == SHUTDOWN and is_request:
            self.shut_down = True  # pygls answers it; everything after it is refused here
        return True


def _error(msg_id: Any, code: int, message: str) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
