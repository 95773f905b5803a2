; C#: definitions, calls, using directives, environment reads, ASP.NET routes.

(class_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(struct_declaration name: (identifier) @name) @definition.type
(interface_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.type
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method

(invocation_expression function: (identifier) @reference.call)
(invocation_expression function: (member_access_expression name: (identifier) @reference.call))
(object_creation_expression type: (identifier) @reference.call)

(using_directive (qualified_name) @import.source) @import.name
(using_directive (identifier) @import.source) @import.name

; Environment.GetEnvironmentVariable("KEY")
(invocation_expression
  function: (member_access_expression
    expression: (_) @_environment
    name: (identifier) @_get)
  arguments: (argument_list . (argument (string_literal) @env.name))
  (#match? @_environment "^(System\\.)?Environment$")
  (#eq? @_get "GetEnvironmentVariable")) @env

; [HttpGet("list")] under the controller's [Route("api/[controller]")]
(method_declaration
  (attribute_list
    (attribute
      name: (identifier) @route.method
      (attribute_argument_list . (attribute_argument (string_literal) @route.path))))
  name: (identifier) @route.handler
  (#match? @route.method "^Http(Get|Post|Put|Patch|Delete)$")) @route.literal
(method_declaration
  (attribute_list (attribute name: (identifier) @route.method . ))
  name: (identifier) @route.handler
  (#match? @route.method "^Http(Get|Post|Put|Patch|Delete)$")) @route.literal
(class_declaration
  (attribute_list
    (attribute
      name: (identifier) @_route
      (attribute_argument_list . (attribute_argument (string_literal) @route.prefix))))
  (#eq? @_route "Route")) @route.prefix.scope

; minimal APIs: app.MapGet("/healthz", ...)
(invocation_expression
  function: (member_access_expression name: (identifier) @route.method)
  arguments: (argument_list . (argument (string_literal) @route.path))
  (#match? @route.method "^Map(Get|Post|Put|Patch|Delete)$")) @route.literal
