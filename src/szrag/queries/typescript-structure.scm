; TypeScript-only structure (also used for TSX).

(abstract_class_declaration name: (_) @name) @definition.class

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
