"""The server's JSON-RPC protocol: pygls' `LanguageServerProtocol`, with malformed messages
answered, the lifecycle's rules applied before pygls sees a message, handler futures released,
and the document notifications keeping the server's per-document generations (documents.py)."""

from __future__ import annotations

import logging
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.protocol import LanguageServerProtocol, lsp_method

from wgmma_lsp import documents

log = logging.getLogger("wgmma_lsp")


class _Handled:
    """What a malformed message becomes once answered: pygls skips it (not JSON-RPC 2.0)."""

    jsonrpc = "handled"


class WgmmaProtocol(LanguageServerProtocol):
    """pygls' protocol, with malformed messages answered instead of left hanging: a request
    whose params do not fit its method gets an error response (the client is not left waiting
    for an answer), a malformed notification is logged and dropped."""

    def structure_message(self, data: Any) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if not isinstance(data, dict) or "method" not in data:
                raise
            method = data.get("method")
            if method == lsp.TEXT_DOCUMENT_DID_CHANGE:
                self._server.desync(data.get("params"))
            if "id" in data:
                self._send_response(data["id"], error=lsp.ResponseError(
                    code=exc.CODE, message=f"{exc.MESSAGE}: the params do not fit {method}"))
            else:
                log.warning("dropped a malformed %s notification", method)
            return _Handled()


    def _execute_handler(self, msg_id: Any, handler: Any, callback: Any,
                         args: tuple[Any, ...] | None = None, kwargs: dict[str, Any] | None = None) -> None:
        """pygls keeps the future of every handler it runs by message id, and removes it only
        when it answers a request: every notification (each keystroke's didChange) left one
        behind for good. Here each is removed once done."""
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        future = self._request_futures.get(msg_id)
        if future is None:
            return
        if future.done():
            self._request_futures.pop(msg_id, None)
        else:
            future.add_done_callback(lambda _f, key=msg_id: self._request_futures.pop(key, None))

    def admit(self, message: dict) -> bool:
        """Before pygls sees a message: the specification's lifecycle rules (lifecycle.py)."""
        return self._server.lifecycle.admit(message, self._send_data)

    @lsp_method(lsp.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Any:
        """pygls' shutdown, cancelling the requests still running over a copy of their table:
        a cancelled future's callback (above) removes it from the table, and pygls iterating
        over the table itself then failed with `dictionary changed size during iteration`
        whenever a request was still waiting for an analysis at shutdown."""
        if (user_handler := self.fm.features.get(lsp.SHUTDOWN)) is not None:
            yield user_handler, args, None
        current_id = self.msg_id
        for msg_id, future in list(self._request_futures.items()):
            if msg_id != current_id and not future.done():
                future.cancel()
        self._shutdown = True
        return None

    # -- document state (see documents.py) -------------------------------------------------
    @lsp_method(lsp.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: lsp.DidOpenTextDocumentParams) -> Any:
        uri = params.text_document.uri
        if uri in self.workspace.text_documents:
            log.info("didOpen for %s, which is open already: its text is replaced", uri)
        self.workspace.put_text_document(params.text_document)
        self._server.desynced.discard(uri)
        self._server.new_generation(uri)
        if (handler := self.fm.features.get(lsp.TEXT_DOCUMENT_DID_OPEN)) is not None:
            yield handler, (params,), None

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: lsp.DidChangeTextDocumentParams) -> Any:
        uri = params.text_document.uri
        doc = self.workspace.text_documents.get(uri)
        changes = params.content_changes
        if doc is None and uri in self._server.desynced and changes \
                and not isinstance(changes[0], lsp.TextDocumentContentChangePartial):
            log.info("%s: a full text after a malformed change: in sync again", uri)
            self._server.desynced.discard(uri)
            self.workspace.put_text_document(lsp.TextDocumentItem(
                uri=uri, language_id="python", version=params.text_document.version, text=""))
            doc = self.workspace.text_documents.get(uri)
        if doc is None:
            log.error("didChange for %s, which is not open: ignored", uri)
            return
        for change in params.content_changes:
            documents.apply_change(doc, change)
        doc.version = params.text_document.version
        self._server.new_generation(uri)
        if (handler := self.fm.features.get(lsp.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield handler, (params,), None

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: lsp.DidCloseTextDocumentParams) -> Any:
        uri = params.text_document.uri
        if uri not in self.workspace.text_documents:
            log.error("didClose for %s, which is not open: ignored", uri)
            return
        self.workspace.remove_text_document(uri)
        self._server.new_generation(uri)
        if (handler := self.fm.features.get(lsp.TEXT_DOCUMENT_DID_CLOSE)) is not None:
            yield handler, (params,), None
