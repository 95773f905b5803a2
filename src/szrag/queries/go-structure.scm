; Go: definitions, calls, imports, environment reads and net/http, gin, echo and chi routes.

(function_declaration name: (identifier) @name) @definition.function
; a method belongs to its receiver's type: func (c *Command) Execute() error
(method_declaration
  receiver: (parameter_list . (parameter_declaration type: (_) @definition.container)?)
  name: (field_identifier) @name) @definition.method
(type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface
(type_spec name: (type_identifier) @name type: (struct_type)) @definition.type
; every other named type: type HandlerFunc func(...), type Status int, type Set map[K]V
(type_spec
  name: (type_identifier) @name
  type: [
    (function_type) (type_identifier) (qualified_type) (map_type) (slice_type) (array_type)
    (pointer_type) (channel_type) (generic_type)
  ]) @definition.type
(type_alias name: (type_identifier) @name) @definition.type
; a function handed to a call whose first argument says what it is for: a subtest, a route's
; handler (t.Run("empty input", func(t *testing.T) {}), http.HandleFunc("/healthz", func(...) {}))
(call_expression
  function: (_) @definition.callee
  arguments: (argument_list
    . [(interpreted_string_literal) (raw_string_literal)] @name
    (func_literal))) @definition.callback

(call_expression function: (identifier) @reference.call)
(call_expression function: (selector_expression field: (field_identifier) @reference.call))

(import_spec path: (_) @import.source) @import.path

(call_expression
  function: (selector_expression
    operand: (identifier) @_package
    field: (field_identifier) @_function)
  arguments: (argument_list . (interpreted_string_literal) @env.name)
  (#eq? @_package "os")
  (#any-of? @_function "Getenv" "LookupEnv")) @env

; mux.HandleFunc("/healthz", h), r.GET("/api/items", list), e.POST(...), r.Get(...)
(call_expression
  function: (selector_expression field: (field_identifier) @route.method)
  arguments: (argument_list . (interpreted_string_literal) @route.path . (_)? @route.handler)
  (#any-of? @route.method
    "GET" "POST" "PUT" "PATCH" "DELETE" "HEAD" "OPTIONS" "Any" "Handle" "HandleFunc"
    "Get" "Post" "Put" "Patch" "Delete" "Head" "Options")) @route.literal
