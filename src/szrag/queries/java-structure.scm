; Java: definitions, calls, imports, System.getenv and Spring MVC routes.

(class_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.type
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method

(method_invocation name: (identifier) @reference.call)
(object_creation_expression type: (type_identifier) @reference.call)

(import_declaration (scoped_identifier) @import.source) @import.name

(method_invocation
  object: (identifier) @_object
  name: (identifier) @_method
  arguments: (argument_list . (string_literal) @env.name)
  (#eq? @_object "System")
  (#eq? @_method "getenv")) @env

; @GetMapping("/items"), @PostMapping(value = "/items"), under a class's @RequestMapping("/api")
(method_declaration
  (modifiers
    (annotation
      name: (identifier) @route.method
      arguments: (annotation_argument_list . (string_literal) @route.path)))
  name: (identifier) @route.handler
  (#match? @route.method "^(Get|Post|Put|Patch|Delete|Request)Mapping$")) @route.literal
(method_declaration
  (modifiers
    (annotation
      name: (identifier) @route.method
      arguments: (annotation_argument_list
        (element_value_pair key: (identifier) @_key value: (string_literal) @route.path))))
  name: (identifier) @route.handler
  (#any-of? @_key "value" "path")
  (#match? @route.method "^(Get|Post|Put|Patch|Delete|Request)Mapping$")) @route.literal
(class_declaration
  (modifiers
    (annotation
      name: (identifier) @_mapping
      arguments: (annotation_argument_list . (string_literal) @route.prefix)))
  (#eq? @_mapping "RequestMapping")) @route.prefix.scope
