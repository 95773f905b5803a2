; C (and, through cpp-structure.scm, C++): definitions, calls, #include and getenv reads.

; ---- definitions (a function's name is inside its declarator: int *f(void), int (&g)()) ----

(function_definition
  declarator: (function_declarator
    declarator: [(identifier) (field_identifier)] @name)) @definition.function
(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator
      declarator: [(identifier) (field_identifier)] @name))) @definition.function
(function_definition
  declarator: (pointer_declarator
    declarator: (pointer_declarator
      declarator: (function_declarator
        declarator: [(identifier) (field_identifier)] @name)))) @definition.function

; a struct, union or enum with a body (not a forward declaration or a use), a typedef
(struct_specifier name: (type_identifier) @name body: (_)) @definition.type
(union_specifier name: (type_identifier) @name body: (_)) @definition.type
(enum_specifier name: (type_identifier) @name body: (_)) @definition.type
(type_definition declarator: (type_identifier) @name) @definition.type

; #define NAME(args) ...: a macro that takes arguments reads as a function
(preproc_function_def name: (identifier) @name) @definition.macro

; ---- calls -------------------------------------------------------------------------------

(call_expression function: (identifier) @reference.call)
(call_expression function: (field_expression field: (field_identifier) @reference.call))

; ---- includes: #include "store.h" (a system header, <stdio.h>, names no repository file) ----

(preproc_include path: (string_literal) @import.source) @import.path

; ---- environment variables ---------------------------------------------------------------

(call_expression
  function: (identifier) @_getenv (#any-of? @_getenv "getenv" "secure_getenv")
  arguments: (argument_list . (string_literal) @env.name)) @env
