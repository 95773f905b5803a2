; Swift: definitions, calls, imports and ProcessInfo's environment.

(class_declaration "class" name: (type_identifier) @name) @definition.class
(class_declaration "actor" name: (type_identifier) @name) @definition.class
(class_declaration "struct" name: (type_identifier) @name) @definition.type
(class_declaration "enum" name: (type_identifier) @name) @definition.type
(protocol_declaration name: (type_identifier) @name) @definition.interface
(typealias_declaration name: (type_identifier) @name) @definition.type
(function_declaration name: (simple_identifier) @name) @definition.function
(protocol_function_declaration name: (simple_identifier) @name) @definition.function
(init_declaration "init" @name) @definition.function

; a call's arguments in parentheses or a trailing closure: a subscript (cache["key"]) is no call
(call_expression
  . (simple_identifier) @reference.call
  (call_suffix [(value_arguments . "(") (lambda_literal)]))
(call_expression
  . (navigation_expression suffix: (navigation_suffix suffix: (simple_identifier) @reference.call))
  (call_suffix [(value_arguments . "(") (lambda_literal)]))

(import_declaration (identifier) @import.source) @import.name

; ProcessInfo.processInfo.environment["API_KEY"]
(call_expression
  . (navigation_expression suffix: (navigation_suffix suffix: (simple_identifier) @_environment))
  (call_suffix (value_arguments . (value_argument value: (line_string_literal) @env.name)))
  (#eq? @_environment "environment")) @env
