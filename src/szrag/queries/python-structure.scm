; Structure of Python sources.
;
; Each pattern carries exactly one role capture (@definition.*, @reference.call, @import.*,
; @export, @env, @route.*, @path.*); the other captures are its parameters. Captures whose
; name starts with "_" only serve predicates.

; ---- definitions (methods are told apart from functions by their enclosing class) ---------

(function_definition name: (identifier) @name) @definition.function
(class_definition name: (identifier) @name) @definition.class

; ---- calls -------------------------------------------------------------------------------

(call function: (_) @reference.call)

; ---- imports -----------------------------------------------------------------------------

; import a.b, c as d   (one match per imported module)
(import_statement name: (_) @import.clause) @import.module

; from .a import b, from pkg.mod import (c as d), from x import *
(import_from_statement module_name: (_) @import.source) @import.from

; importlib.import_module("pkg.mod"), __import__("pkg")
(call
  function: (attribute
    object: (identifier) @_importlib (#eq? @_importlib "importlib")
    attribute: (identifier) @_import (#eq? @_import "import_module"))
  arguments: (argument_list . (string) @import.source)) @import.dynamic
(call
  function: (identifier) @_import (#any-of? @_import "import_module" "__import__")
  arguments: (argument_list . (string) @import.source)) @import.dynamic

; ---- exports -----------------------------------------------------------------------------

; top-level names (__all__, public definitions and assignments) are matched by
; python-module-structure.scm

; ---- environment variables ---------------------------------------------------------------

; os.environ["NAME"], environ["NAME"]
(subscript
  value: (attribute
    object: (identifier) @_os (#eq? @_os "os")
    attribute: (identifier) @_environ (#eq? @_environ "environ"))
  subscript: (string) @env.name) @env
(subscript
  value: (identifier) @_environ (#eq? @_environ "environ")
  subscript: (string) @env.name) @env

; os.environ.get("NAME"), environ.setdefault("NAME", ...)
(call
  function: (attribute
    object: (attribute
      object: (identifier) @_os (#eq? @_os "os")
      attribute: (identifier) @_environ (#eq? @_environ "environ"))
    attribute: (identifier) @_get (#any-of? @_get "get" "setdefault" "pop"))
  arguments: (argument_list . (string) @env.name)) @env
(call
  function: (attribute
    object: (identifier) @_environ (#eq? @_environ "environ")
    attribute: (identifier) @_get (#any-of? @_get "get" "setdefault" "pop"))
  arguments: (argument_list . (string) @env.name)) @env

; os.getenv("NAME"), getenv("NAME")
(call
  function: (attribute
    object: (identifier) @_os (#eq? @_os "os")
    attribute: (identifier) @_getenv (#eq? @_getenv "getenv"))
  arguments: (argument_list . (string) @env.name)) @env
(call
  function: (identifier) @_getenv (#eq? @_getenv "getenv")
  arguments: (argument_list . (string) @env.name)) @env

; "NAME" in os.environ
(comparison_operator
  (string) @env.name
  (attribute
    object: (identifier) @_os (#eq? @_os "os")
    attribute: (identifier) @_environ (#eq? @_environ "environ"))) @env

; ---- routes ------------------------------------------------------------------------------

; @app.route("/x", methods=[...]), @bp.get("/x"), @router.post("/x")
(decorated_definition
  (decorator
    (call
      function: (attribute
        object: (_) @route.object
        attribute: (identifier) @route.method
        (#any-of? @route.method
          "route" "api_route" "get" "post" "put" "patch" "delete" "head" "options"))
      arguments: (argument_list) @route.args))
  definition: (_ name: (identifier) @route.handler)) @route.decorated

; app.add_url_rule("/x", view_func=handler, methods=[...])
(call
  function: (attribute
    attribute: (identifier) @_rule (#eq? @_rule "add_url_rule"))
  arguments: (argument_list) @route.args) @route.rule

; app.include_router(router, prefix="/api"), app.register_blueprint(bp, url_prefix="/x"),
; app.mount("/static", ...)
(call
  function: (attribute
    attribute: (identifier) @route.method
    (#any-of? @route.method "include_router" "register_blueprint" "mount"))
  arguments: (argument_list) @route.args) @route.mount

; Django: path("users/<int:pk>/", views.user_detail), re_path(r"^x$", View.as_view())
(call
  function: (identifier) @_path (#any-of? @_path "path" "re_path")
  arguments: (argument_list . (string) @route.path . (_) @route.view)) @route.django

; ---- path references ---------------------------------------------------------------------

; __file__ as the first argument: Path(__file__), os.path.dirname(__file__) ...
(argument_list . (identifier) @path.anchor (#eq? @path.anchor "__file__"))
