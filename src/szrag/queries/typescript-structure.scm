; TypeScript-only structure (also used for TSX).

(abstract_class_declaration name: (_) @name) @definition.class

; the types a TypeScript program declares: interface Props {}, type Env = {}, enum Color {}
(interface_declaration name: (_) @name) @definition.interface
(type_alias_declaration name: (_) @name) @definition.type
(enum_declaration name: (_) @name) @definition.type
(internal_module name: [(identifier) (nested_identifier)] @name) @definition.type
(module name: [(identifier) (nested_identifier) (string)] @name) @definition.type

; declare function f(): void; abstract m(): void (an overload's signature joins its function)
(function_signature name: (_) @name) @definition.function
(abstract_method_signature name: (_) @name) @definition.method

; class fields holding functions: handle = (req: Request) => {}
(public_field_definition
  name: [(property_identifier) (private_property_identifier)] @name
  value: (arrow_function)) @definition.arrow
(public_field_definition
  name: [(property_identifier) (private_property_identifier)] @name
  value: [(function_expression) (generator_function)]) @definition.function

; import fs = require("fs")
(import_require_clause
  (identifier) @import.clause
  source: (string) @import.source) @import.require
