;;; wgmma-lsp.el --- wgmma-lsp with Eglot (Emacs 29+, or Emacs 28 with the eglot package)  -*- lexical-binding: t; -*-

;; Put this in your init file (or `load' it). It registers wgmma-lsp for Python buffers.
;;
;; Eglot runs ONE server per buffer. This makes wgmma-lsp that server for Python buffers; if you
;; also want pyright/pylsp there, either use lsp-mode (which runs several servers per buffer: see
;; the second half of this file) or an LSP multiplexer in front of both.

;;; Eglot

(with-eval-after-load 'eglot
  (add-to-list 'eglot-server-programs
               ;; or '("/path/to/venv/bin/python" "-P" "-m" "wgmma_lsp")  ; -P: never import from the workspace
               '((python-mode python-ts-mode) . ("wgmma-lsp"))))

;; Settings (section "wgmmaLsp", read by the server through workspace/configuration).
;; Per project, prefer a .dir-locals.el:
;;   ((nil . ((eglot-workspace-configuration
;;             . (:wgmmaLsp (:inlayHints (:enabled t) :rules (:ignore ["WG003"])))))))
(setq-default eglot-workspace-configuration
              '(:wgmmaLsp (:inlayHints (:enabled t) :trace (:enabled :json-false))))

;; Start automatically in Python buffers:
;; (add-hook 'python-mode-hook #'eglot-ensure)
;; (add-hook 'python-ts-mode-hook #'eglot-ensure)

;;; lsp-mode (alternative: runs wgmma-lsp as an add-on next to your Python server)

;; (with-eval-after-load 'lsp-mode
;;   (lsp-register-custom-settings
;;    '(("wgmmaLsp.inlayHints.enabled" t t)))
;;   (lsp-register-client
;;    (make-lsp-client
;;     :new-connection (lsp-stdio-connection '("wgmma-lsp"))
;;     :activation-fn (lsp-activate-on "python")
;;     :server-id 'wgmma-lsp
;;     :add-on? t
;;     :initialized-fn (lambda (workspace)
;;                       (with-lsp-workspace workspace
;;                         (lsp--set-configuration (lsp-configuration-section "wgmmaLsp")))))))

(provide 'wgmma-lsp)
;;; wgmma-lsp.el ends here
