; Rust: definitions, calls, use and mod declarations, environment reads, axum and actix routes.

(function_item name: (identifier) @name) @definition.function
(function_signature_item name: (identifier) @name) @definition.function
(struct_item name: (type_identifier) @name) @definition.type
(enum_item name: (type_identifier) @name) @definition.type
(trait_item name: (type_identifier) @name) @definition.trait
(type_item name: (type_identifier) @name) @definition.type
(union_item name: (type_identifier) @name) @definition.type
(macro_definition name: (identifier) @name) @definition.macro

(call_expression function: (identifier) @reference.call)
(call_expression function: (scoped_identifier name: (identifier) @reference.call))
(call_expression function: (field_expression field: (field_identifier) @reference.call))
(macro_invocation macro: (identifier) @reference.call)

(use_declaration argument: (_) @import.source) @import.name
(mod_item name: (identifier) @import.source !body) @import.name

; env::var("PORT"), std::env::var_os("HOME")
(call_expression
  function: (scoped_identifier path: (_) @_path name: (identifier) @_function)
  arguments: (arguments . (string_literal) @env.name)
  (#match? @_path "(^|::)env$")
  (#any-of? @_function "var" "var_os")) @env

; actix-web: #[get("/api/items")]
(attribute_item
  (attribute
    (identifier) @route.method
    arguments: (token_tree . (string_literal) @route.path))
  (#any-of? @route.method "get" "post" "put" "patch" "delete" "head" "options")) @route.literal

; axum: Router::new().route("/healthz", get(health))
(call_expression
  function: (field_expression field: (field_identifier) @_route)
  arguments: (arguments
    . (string_literal) @route.path
    . (call_expression
        function: (identifier) @route.method
        arguments: (arguments . (_) @route.handler)))
  (#eq? @_route "route")) @route.literal
