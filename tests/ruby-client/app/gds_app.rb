# frozen_string_literal: true

# A small Rack application that signs people in with Tessera Sign-on the way a
# gds-sso application does, on the libraries gds-sso is built on:
#
# - people sign in through an OmniAuth OAuth2 strategy configured as gds-sso
#   configures its own (/oauth/authorize, /oauth/access_token, /user.json with
#   the client id, PKCE, HTTP Basic client authentication);
# - API clients send a bearer token, checked through /user.json?client_id=…;
# - Sign-on's pushes arrive at /auth/gds/api/users/:uid (PUT) and
#   /auth/gds/api/users/:uid/reauth (POST), from a caller that must hold
#   `user_update_permission`.

require "cgi"
require "json"
require "securerandom"
require "oauth2"
require "omniauth-oauth2"
require "rack"

module OmniAuth
  module Strategies
    # Sign-on's strategy: the user comes from /user.json, asked with the client id.
    class Gds < OmniAuth::Strategies::OAuth2
      option :name, "gds"
      option :pkce, true

      uid { signon_user.fetch("uid") }

      info { { name: signon_user["name"], email: signon_user["email"] } }

      extra do
        {
          user: signon_user,
          permissions: signon_user["permissions"],
          organisation_slug: signon_user["organisation_slug"],
          organisation_content_id: signon_user["organisation_content_id"],
        }
      end

      def signon_user
        @signon_user ||= begin
          response = access_token.get("/user.json?client_id=#{CGI.escape(options.client_id)}")
          JSON.parse(response.body).fetch("user")
        end
      end
    end
  end
end

# gds-sso asks for authentication with a GET to /auth/gds when a page needs a user.
OmniAuth.config.allowed_request_methods = %i[get]
OmniAuth.config.silence_get_warning = true
OmniAuth.config.logger = Logger.new(IO::NULL)

# The application's own copy of its users, as gds-sso keeps them in a table.
class UserStore
  FIELDS = %w[uid name email permissions organisation_slug organisation_content_id disabled].freeze

  def initialize
    @users = {}
    @lock = Mutex.new
  end

  def find(uid)
    @lock.synchronize { @users[uid]&.dup }
  end

  # Creates or updates a user from Sign-on's user JSON (sign-in, bearer check or push).
  def save(user_json)
    uid = user_json.fetch("uid")
    @lock.synchronize do
      record = @users.fetch(uid) { { "remotely_signed_out" => false } }
      @users[uid] = record.merge(user_json.slice(*FIELDS))
    end
  end

  def signed_in_again(uid)
    @lock.synchronize { @users[uid]["remotely_signed_out"] = false }
  end

  # Returns false when the user is unknown (nothing to sign out).
  def sign_out_remotely(uid)
    @lock.synchronize { @users.key?(uid) && (@users[uid]["remotely_signed_out"] = true) }
  end
end

# The routes of the application.
class GdsApp
  def self.build(signon_url:, client_id:, client_secret:)
    app = new(signon_url: signon_url, client_id: client_id, client_secret: client_secret)
    Rack::Builder.new do
      use Rack::Session::Cookie, key: "gds_app_session", secret: SecureRandom.hex(64), same_site: :lax
      use OmniAuth::Builder do
        provider :gds, client_id, client_secret,
                 client_options: {
                   site: signon_url,
                   authorize_url: "#{signon_url}/oauth/authorize",
                   token_url: "#{signon_url}/oauth/access_token",
                   auth_scheme: :basic_auth,
                 }
      end
      run app
    end
  end

  attr_reader :users

  def initialize(signon_url:, client_id:, client_secret:)
    @client_id = client_id
    @oauth_client = OAuth2::Client.new(client_id, client_secret, site: signon_url,
                                                                 token_url: "#{signon_url}/oauth/access_token",
                                                                 auth_scheme: :basic_auth)
    @users = UserStore.new
    @tokens = {}
  end

  def call(env)
    request = Rack::Request.new(env)
    case [request.request_method, request.path_info]
    in ["GET", "/"] then home(request)
    in ["GET", "/auth/gds/callback"] then signed_in(request)
    in ["GET", "/auth/failure"] then text(403, "Sign-in failed: #{request.params['message']}")
    in ["GET", "/api/user"] then api_user(request)
    in ["POST", "/session/refresh"] then refresh(request)
    in ["PUT", %r{\A/auth/gds/api/users/([^/]+)\z}] then push_update(request, Regexp.last_match(1))
    in ["POST", %r{\A/auth/gds/api/users/([^/]+)/reauth\z}] then push_reauth(request, Regexp.last_match(1))
    in ["GET", %r{\A/inspect/users/([^/]+)\z}] then inspect_user(Regexp.last_match(1))
    else text(404, "Not found")
    end
  end

  private

  # A page that needs a signed-in user with `signin`.
  def home(request)
    user = current_user(request)
    return redirect("/auth/gds") if user.nil?
    return text(403, "You do not have permission to sign in to this application") unless user["permissions"].include?("signin")

    json(200, user)
  end

  def signed_in(request)
    auth = request.env.fetch("omniauth.auth")
    users.save(auth.extra.user.to_hash)
    users.signed_in_again(auth.uid)
    @tokens[auth.uid] = OAuth2::AccessToken.new(@oauth_client, auth.credentials.token,
                                                refresh_token: auth.credentials.refresh_token,
                                                expires_at: auth.credentials.expires_at)
    request.session["uid"] = auth.uid
    redirect("/")
  end

  # The signed-in user's token refreshed with the oauth2 gem, and the new one used.
  def refresh(request)
    user = current_user(request)
    return text(401, "Not signed in") if user.nil?

    old = @tokens.fetch(user["uid"])
    fresh = old.refresh!
    @tokens[user["uid"]] = fresh
    signon_user = JSON.parse(fresh.get("/user.json?client_id=#{CGI.escape(@client_id)}").body).fetch("user")
    json(200, { "token_changed" => fresh.token != old.token, "refresh_token_changed" => fresh.refresh_token != old.refresh_token,
                "expires_in" => fresh.expires_in, "user" => signon_user })
  rescue OAuth2::Error => e
    json(400, { "error" => e.code, "description" => e.description })
  end

  def api_user(request)
    user = bearer_user(request)
    user ? json(200, user) : text(401, "Bearer token required")
  end

  def push_update(request, uid)
    refusal = push_refusal(request)
    return refusal if refusal

    user_json = JSON.parse(request.body.read).fetch("user")
    return text(400, "uid in the body does not match the path") unless user_json["uid"] == uid

    users.save(user_json)
    text(200, "")
  end

  def push_reauth(request, uid)
    refusal = push_refusal(request)
    return refusal if refusal

    users.sign_out_remotely(uid)
    text(200, "")
  end

  # gds-sso's rule for its push receivers: a valid bearer token whose user holds `user_update_permission`.
  def push_refusal(request)
    caller = bearer_user(request)
    return text(401, "Bearer token required") if caller.nil?
    return text(403, "user_update_permission required") unless caller["permissions"].include?("user_update_permission")

    nil
  end

  def bearer_user(request)
    token = request.get_header("HTTP_AUTHORIZATION").to_s[/\ABearer (.+)\z/, 1]
    return nil if token.nil?

    response = OAuth2::AccessToken.new(@oauth_client, token).get("/user.json?client_id=#{CGI.escape(@client_id)}")
    JSON.parse(response.body).fetch("user").tap { |user| users.save(user) }
  rescue OAuth2::Error
    nil
  end

  def current_user(request)
    uid = request.session["uid"]
    user = uid && users.find(uid)
    user unless user.nil? || user["remotely_signed_out"]
  end

  def inspect_user(uid)
    user = users.find(uid)
    user ? json(200, user) : text(404, "Unknown user")
  end

  def redirect(location)
    [302, { "location" => location, "content-type" => "text/plain" }, []]
  end

  def json(status, body)
    [status, { "content-type" => "application/json" }, [JSON.generate(body)]]
  end

  def text(status, body)
    [status, { "content-type" => "text/plain" }, [body]]
  end
end
