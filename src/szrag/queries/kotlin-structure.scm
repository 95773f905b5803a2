; Kotlin: definitions, calls, imports and System.getenv.

(class_declaration "class" name: (identifier) @name) @definition.class
(class_declaration "interface" name: (identifier) @name) @definition.interface
(object_declaration name: (identifier) @name) @definition.type
(type_alias type: (identifier) @name) @definition.type
; an extension function belongs to the type it extends: fun Request.Builder.cacheControl()
(function_declaration
  [(user_type) (nullable_type)]? @definition.container
  .
  name: (identifier) @name) @definition.function

(call_expression . (identifier) @reference.call)
(call_expression . (navigation_expression (identifier) @reference.call .))

(import (qualified_identifier) @import.source) @import.name

; System.getenv("HOME")
(call_expression
  . (navigation_expression . (identifier) @_object . (identifier) @_method .)
  (value_arguments . (value_argument . (string_literal) @env.name))
  (#eq? @_object "System")
  (#eq? @_method "getenv")) @env

; java.lang.System.getenv("HOME")
(call_expression
  . (navigation_expression
    . (navigation_expression
      . (navigation_expression . (identifier) @_java . (identifier) @_lang .)
      . (identifier) @_object .)
    . (identifier) @_method .)
  (value_arguments . (value_argument . (string_literal) @env.name))
  (#eq? @_java "java")
  (#eq? @_lang "lang")
  (#eq? @_object "System")
  (#eq? @_method "getenv")) @env
