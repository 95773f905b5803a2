; JavaScript-only structure (JSX is part of the grammar and needs no patterns of its own).

; class fields holding functions: handle = () => {}, static make = function () {}
(field_definition
  property: [(property_identifier) (private_property_identifier)] @name
  value: (arrow_function)) @definition.arrow
(field_definition
  property: [(property_identifier) (private_property_identifier)] @name
  value: [(function_expression) (generator_function)]) @definition.function
