# frozen_string_literal: true

# Runs GdsApp with WEBrick on 127.0.0.1:PORT against the Sign-on at SIGNON_URL,
# with the client id and secret Sign-on issued (OAUTH_ID, OAUTH_SECRET).

require "logger"
require "webrick"
require "rack/handler/webrick"
require_relative "gds_app"

app = GdsApp.build(signon_url: ENV.fetch("SIGNON_URL"), client_id: ENV.fetch("OAUTH_ID"),
                   client_secret: ENV.fetch("OAUTH_SECRET"))
$stdout.sync = true
Rack::Handler::WEBrick.run(app, Host: "127.0.0.1", Port: Integer(ENV.fetch("PORT")), AccessLog: [],
                                Logger: WEBrick::Log.new($stderr, WEBrick::Log::WARN),
                                StartCallback: -> { puts "listening" })
