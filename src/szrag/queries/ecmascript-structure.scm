; Structure of JavaScript and TypeScript sources (shared by every ECMAScript dialect).
;
; Each pattern carries exactly one role capture (@definition.*, @reference.call, @import.*,
; @export, @env, @route*, @path.*); the other captures are its parameters. Captures whose
; name starts with "_" only serve predicates.

; ---- definitions -------------------------------------------------------------------------

(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(class_declaration name: (_) @name) @definition.class
(class name: (_) @name) @definition.class
(method_definition name: (_) @name) @definition.method

; const f = function () {}, const g = () => {}
(variable_declarator
  name: (identifier) @name
  value: [(function_expression) (generator_function)]) @definition.function
(variable_declarator
  name: (identifier) @name
  value: (arrow_function)) @definition.arrow

; module.exports.f = function () {}, exports.g = () => {}, obj.h = ...
(assignment_expression
  left: (member_expression property: (property_identifier) @name)
  right: [(function_expression) (generator_function)]) @definition.function
(assignment_expression
  left: (member_expression property: (property_identifier) @name)
  right: (arrow_function)) @definition.arrow

; { f: function () {}, g: () => {} }
(pair
  key: [(property_identifier) (string)] @name
  value: [(function_expression) (generator_function)]) @definition.function
(pair
  key: [(property_identifier) (string)] @name
  value: (arrow_function)) @definition.arrow

; export default function () {}, export default class {}, export default () => {}: named
; by the keyword, as the module's importers name them
(export_statement "default" @name value: (function_expression !name) @definition.function)
(export_statement "default" @name value: (generator_function !name) @definition.function)
(export_statement "default" @name value: (arrow_function) @definition.arrow)
(export_statement "default" @name value: (class !name) @definition.class)

; a named function handed to a call: defineGetter(req, "protocol", function protocol() {})
(arguments (function_expression name: (identifier) @name) @definition.function)

; a function handed to a call whose first argument says what it is for: a route's handler,
; a test, an event's listener (app.post("/api/report", async (req, res) => {}), it("...", ...))
(call_expression
  function: (_) @definition.callee
  arguments: (arguments
    . [(string) (template_string)] @name
    [(arrow_function) (function_expression) (generator_function)])) @definition.callback

; ---- calls -------------------------------------------------------------------------------

(call_expression function: (_) @reference.call)

; ---- imports -----------------------------------------------------------------------------

(import_statement
  (import_clause)? @import.clause
  source: (string) @import.source) @import.import

(export_statement
  source: (string) @import.source) @import.reexport

(call_expression
  function: (identifier) @_require (#eq? @_require "require")
  arguments: (arguments . [(string) (template_string)] @import.source)) @import.require

(call_expression
  function: (import)
  arguments: (arguments . [(string) (template_string)] @import.source)) @import.dynamic

; ---- exports -----------------------------------------------------------------------------

(export_statement declaration: (_) @export.declaration) @export
(export_statement value: (_) @export.default) @export
(export_statement (export_clause) @export.clause) @export

; module.exports = ...
(assignment_expression
  left: (member_expression
    object: (identifier) @_module (#eq? @_module "module")
    property: (property_identifier) @_exports (#eq? @_exports "exports"))
  right: (_) @export.value) @export

; module.exports.name = ...
(assignment_expression
  left: (member_expression
    object: (member_expression
      object: (identifier) @_module (#eq? @_module "module")
      property: (property_identifier) @_exports (#eq? @_exports "exports"))
    property: (property_identifier) @export.name)) @export

; exports.name = ...
(assignment_expression
  left: (member_expression
    object: (identifier) @_exports (#eq? @_exports "exports")
    property: (property_identifier) @export.name)) @export

; ---- environment variables ---------------------------------------------------------------

; process.env.NAME
(member_expression
  object: (member_expression
    object: (identifier) @_process (#eq? @_process "process")
    property: (property_identifier) @_env (#eq? @_env "env"))
  property: (property_identifier) @env.name) @env

; process.env["NAME"]
(subscript_expression
  object: (member_expression
    object: (identifier) @_process (#eq? @_process "process")
    property: (property_identifier) @_env (#eq? @_env "env"))
  index: (string) @env.name) @env

; const { NAME, OTHER: alias, THIRD = "x" } = process.env
(variable_declarator
  name: (object_pattern) @env.pattern
  value: (member_expression
    object: (identifier) @_process (#eq? @_process "process")
    property: (property_identifier) @_env (#eq? @_env "env"))) @env

; import.meta.env.NAME
(member_expression
  object: (member_expression
    object: (meta_property) @_meta (#eq? @_meta "import.meta")
    property: (property_identifier) @_env (#eq? @_env "env"))
  property: (property_identifier) @env.name) @env

; ---- routes ------------------------------------------------------------------------------

; app.get("/path", handler), router.use("/prefix", middleware)
(call_expression
  function: (member_expression
    object: (_) @route.object
    property: (property_identifier) @route.method
    (#any-of? @route.method "get" "post" "put" "patch" "delete" "all" "use" "options" "head"))
  arguments: (arguments . [(string) (template_string)] @route.path)) @route

; router.route("/path").get(...).post(...)
(call_expression
  function: (member_expression
    property: (property_identifier) @_route (#eq? @_route "route"))
  arguments: (arguments . [(string) (template_string)] @route.path)) @route.chain

; url.pathname === "/path" (either side), also a destructured `pathname`
(binary_expression
  left: [
    (member_expression property: (property_identifier) @_pathname)
    (identifier) @_pathname
  ] @route.subject
  operator: ["===" "=="]
  right: (string) @route.path
  (#eq? @_pathname "pathname")) @route.pathname
(binary_expression
  left: (string) @route.path
  operator: ["===" "=="]
  right: [
    (member_expression property: (property_identifier) @_pathname)
    (identifier) @_pathname
  ] @route.subject
  (#eq? @_pathname "pathname")) @route.pathname

; url.pathname.startsWith("/prefix")
(call_expression
  function: (member_expression
    object: [
      (member_expression property: (property_identifier) @_pathname)
      (identifier) @_pathname
    ] @route.subject
    property: (property_identifier) @_starts (#eq? @_starts "startsWith"))
  arguments: (arguments . (string) @route.path)
  (#eq? @_pathname "pathname")) @route.pathname

; ["/a", "/b"].includes(url.pathname)
(call_expression
  function: (member_expression
    object: (array) @route.paths
    property: (property_identifier) @_includes (#eq? @_includes "includes"))
  arguments: (arguments . [
    (member_expression property: (property_identifier) @_pathname)
    (identifier) @_pathname
  ] @route.subject)
  (#eq? @_pathname "pathname")) @route.pathname

; ---- path references ---------------------------------------------------------------------

; __dirname as the first argument: path.join(__dirname, ...), path.dirname(__filename) ...
(arguments . (identifier) @path.anchor (#any-of? @path.anchor "__dirname" "__filename"))

; import.meta.dirname, import.meta.filename
(member_expression
  object: (meta_property) @_meta (#eq? @_meta "import.meta")
  property: (property_identifier) @_prop (#any-of? @_prop "dirname" "filename")) @path.anchor

; new URL("./file", import.meta.url)
(new_expression
  constructor: (identifier) @_url (#eq? @_url "URL")
  arguments: (arguments
    . [(string) (template_string)] @path.literal
    . (member_expression
        object: (meta_property) @_meta (#eq? @_meta "import.meta")
        property: (property_identifier) @_prop (#eq? @_prop "url")))) @path.url
