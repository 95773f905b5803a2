; PHP: definitions, calls, use and require, getenv/env reads, Laravel routes.

(function_definition name: (name) @name) @definition.function
(method_declaration name: (name) @name) @definition.method
(class_declaration name: (name) @name) @definition.class
(interface_declaration name: (name) @name) @definition.interface
(trait_declaration name: (name) @name) @definition.trait
(enum_declaration name: (name) @name) @definition.type

(function_call_expression function: (name) @reference.call)
(member_call_expression name: (name) @reference.call)
(scoped_call_expression name: (name) @reference.call)
(object_creation_expression (name) @reference.call)

(namespace_use_clause (qualified_name) @import.source) @import.name
(require_expression (string) @import.source) @import.path
(require_once_expression (string) @import.source) @import.path
(include_expression (string) @import.source) @import.path

; getenv('KEY'), env('KEY'), $_ENV['KEY'], $_SERVER['KEY']
(function_call_expression
  function: (name) @_function
  arguments: (arguments . (argument (string) @env.name))
  (#any-of? @_function "getenv" "env")) @env
(subscript_expression
  (variable_name (name) @_superglobal)
  (string) @env.name
  (#any-of? @_superglobal "_ENV" "_SERVER")) @env

; Route::get('/api/items', ...)
(scoped_call_expression
  scope: (name) @_route
  name: (name) @route.method
  arguments: (arguments . (argument (string) @route.path))
  (#eq? @_route "Route")
  (#any-of? @route.method "get" "post" "put" "patch" "delete" "options" "any" "match")) @route.literal
