; Structure of a Python module's top level: patterns rooted at the module node.
;
; They are matched by a cursor that never starts below the root, so they cost nothing on
; the rest of the tree (see python-structure.scm for the conventions).

; ---- exports -----------------------------------------------------------------------------

; __all__ = [...] / (...), __all__ += [...]
(module (expression_statement
  (assignment
    left: (identifier) @_all (#eq? @_all "__all__")
    right: [(list) (tuple)] @export.all))) @export
(module (expression_statement
  (augmented_assignment
    left: (identifier) @_all (#eq? @_all "__all__")
    right: [(list) (tuple)] @export.all))) @export

; public top-level names, used when there is no __all__
(module (function_definition name: (identifier) @export.public)) @export
(module (class_definition name: (identifier) @export.public)) @export
(module (decorated_definition
  definition: [(function_definition) (class_definition)] @export.definition)) @export
(module (expression_statement
  (assignment left: (identifier) @export.public))) @export
(module (type_alias_statement left: (type) @export.type)) @export
