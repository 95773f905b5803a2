; Ruby: definitions, calls, require, ENV reads, Rails routes.rb and Sinatra routes.

(method name: (_) @name) @definition.method
(singleton_method name: (_) @name) @definition.method
(class name: (constant) @name) @definition.class
(module name: (constant) @name) @definition.type

; a block handed to a call whose first argument says what it is for: an RSpec example, a
; Sinatra route (describe "reports" do ... end, get "/api/items" do ... end)
(call
  method: (_) @definition.callee
  arguments: (argument_list . (string) @name)
  block: [(do_block) (block)]) @definition.callback

(call method: (identifier) @reference.call)

(call
  method: (identifier) @_require
  arguments: (argument_list . (string) @import.source)
  (#any-of? @_require "require" "require_relative" "load")) @import.path

; ENV["KEY"], ENV.fetch("KEY")
(element_reference object: (constant) @_env . (string) @env.name (#eq? @_env "ENV")) @env
(call
  receiver: (constant) @_env
  method: (identifier) @_fetch
  arguments: (argument_list . (string) @env.name)
  (#eq? @_env "ENV")
  (#any-of? @_fetch "fetch" "[]")) @env

; get '/api/items' do ... end, post '/orders', to: 'orders#create' (no receiver)
(call
  !receiver
  method: (identifier) @route.method
  arguments: (argument_list . (string) @route.path)
  (#any-of? @route.method "get" "post" "put" "patch" "delete" "options" "head" "match")) @route.literal
