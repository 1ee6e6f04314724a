;;; eglot_e2e.el --- Emacs/Eglot end-to-end check for wgmma-lsp (batch mode)  -*- lexical-binding: t; -*-
;; Loads editors/emacs/wgmma-lsp.el, opens $WGMMA_E2E_FILE, connects Eglot, waits (bounded) for
;; the three expected diagnostics, and writes them as JSON to $WGMMA_E2E_OUT.
(require 'eglot)
(require 'json)
(require 'flymake)
(load (expand-file-name "editors/emacs/wgmma-lsp.el" (getenv "WGMMA_E2E_REPO")))
(let* ((out (getenv "WGMMA_E2E_OUT"))
       (timeout (/ (string-to-number (or (getenv "WGMMA_E2E_TIMEOUT") "60000")) 1000.0))
       (errors '())
       diags)
  (condition-case err
      (progn
        (find-file (getenv "WGMMA_E2E_FILE"))
        (python-mode)
        (apply #'eglot (eglot--guess-contact))
        (let ((deadline (+ (float-time) timeout)))
          (while (and (< (float-time) deadline) (< (length (flymake-diagnostics)) 3))
            (accept-process-output nil 0.05)))
        ;; keep listening a little to catch duplicates
        (let ((settle (+ (float-time) 1.0)))
          (while (< (float-time) settle) (accept-process-output nil 0.05)))
        (setq diags (mapcar (lambda (d)
                              `((line . ,(line-number-at-pos (flymake-diagnostic-beg d)))
                                (col . ,(save-excursion (goto-char (flymake-diagnostic-beg d))
                                                        (current-column)))
                                (type . ,(format "%s" (flymake-diagnostic-type d)))
                                (text . ,(flymake-diagnostic-text d))))
                            (flymake-diagnostics)))
        (ignore-errors (eglot-shutdown (eglot-current-server))))
    (error (push (format "%S" err) errors)))
  (with-temp-file out
    (insert (json-encode `((emacs . ,emacs-version) (eglot . ,(if (boundp 'eglot-version) eglot-version "?"))
                           (diagnostics . ,(vconcat diags)) (errors . ,(vconcat errors))))))
  (kill-emacs 0))
