"""The service layer: one repository's wiring (the configuration read once, the host) and
what runs beside its answers (the index watcher, the audit log, feedback, evaluation). Faces
call down into it; nothing below imports it."""
