; C++-only structure (after c-structure.scm).

; a class or struct's methods, an out-of-class definition (int shop::Cart::total() const),
; operators and destructors
(function_definition
  declarator: (function_declarator
    declarator: [(qualified_identifier) (operator_name) (destructor_name)] @name)) @definition.function
(function_definition
  declarator: (reference_declarator
    (function_declarator
      declarator: [
        (identifier) (field_identifier) (qualified_identifier) (operator_name)
      ] @name))) @definition.function
(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator
      declarator: [(qualified_identifier) (operator_name)] @name))) @definition.function
; a conversion operator (explicit operator bool() const), in its class or out of it
(function_definition declarator: [(operator_cast) (qualified_identifier)] @name) @definition.function
; a template's specialisation: template <> int maxof<int>(int a, int b)
(function_definition
  declarator: (function_declarator
    declarator: (template_function name: (identifier) @name))) @definition.function

(class_specifier name: (type_identifier) @name body: (_)) @definition.class
(namespace_definition
  name: [(namespace_identifier) (nested_namespace_specifier)] @name) @definition.type
(alias_declaration name: (type_identifier) @name) @definition.type

(call_expression function: (qualified_identifier name: (identifier) @reference.call))
(call_expression
  function: (template_function name: (identifier) @reference.call))

; std::getenv("NAME")
(call_expression
  function: (qualified_identifier name: (identifier) @_getenv (#eq? @_getenv "getenv"))
  arguments: (argument_list . (string_literal) @env.name)) @env
