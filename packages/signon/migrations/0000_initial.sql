CREATE SCHEMA "signon";
--> statement-breakpoint
CREATE TABLE "signon"."access_tokens" (
	"id" uuid PRIMARY KEY NOT NULL,
	"grant_id" uuid NOT NULL,
	"token_hash" text NOT NULL,
	"user_uid" uuid NOT NULL,
	"application_id" uuid NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"revoked_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "access_tokens_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "signon"."applications" (
	"id" uuid PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"client_id" text NOT NULL,
	"client_secret_hash" text NOT NULL,
	"redirect_uris" text[] NOT NULL,
	"home_uri" text,
	"push_base_url" text,
	"supported_permissions" text[] NOT NULL,
	"require_pkce" boolean DEFAULT false NOT NULL,
	"retired" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "applications_name_unique" UNIQUE("name"),
	CONSTRAINT "applications_client_id_unique" UNIQUE("client_id"),
	CONSTRAINT "applications_signin_supported_check" CHECK ('signin' = any("signon"."applications"."supported_permissions"))
);
--> statement-breakpoint
CREATE TABLE "signon"."audit_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"occurred_at" timestamp with time zone NOT NULL,
	"action" text NOT NULL,
	"actor_uid" uuid,
	"subject_uid" uuid,
	"application_id" uuid,
	"ip" "inet",
	"user_agent" text,
	"details" jsonb DEFAULT '{}'::jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "signon"."failure_counters" (
	"key" text PRIMARY KEY NOT NULL,
	"failures" integer NOT NULL,
	"window_ends_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "signon"."grants" (
	"id" uuid PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"user_uid" uuid NOT NULL,
	"application_id" uuid NOT NULL,
	"code_hash" text,
	"redirect_uri" text,
	"code_challenge" text,
	"code_expires_at" timestamp with time zone,
	"code_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "grants_code_hash_unique" UNIQUE("code_hash"),
	CONSTRAINT "grants_kind_check" CHECK ("signon"."grants"."kind" in ('authorization_code', 'issued'))
);
--> statement-breakpoint
CREATE TABLE "signon"."organisations" (
	"id" uuid PRIMARY KEY NOT NULL,
	"slug" text NOT NULL,
	"name" text NOT NULL,
	"content_id" uuid NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "organisations_slug_unique" UNIQUE("slug"),
	CONSTRAINT "organisations_content_id_unique" UNIQUE("content_id")
);
--> statement-breakpoint
CREATE TABLE "signon"."refresh_tokens" (
	"id" uuid PRIMARY KEY NOT NULL,
	"grant_id" uuid NOT NULL,
	"token_hash" text NOT NULL,
	"rotated_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "refresh_tokens_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "signon"."sessions" (
	"id_hash" text PRIMARY KEY NOT NULL,
	"user_uid" uuid NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"last_seen_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"ip" "inet",
	"user_agent" text
);
--> statement-breakpoint
CREATE TABLE "signon"."user_permissions" (
	"user_uid" uuid NOT NULL,
	"application_id" uuid NOT NULL,
	"permission" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "user_permissions_user_uid_application_id_permission_pk" PRIMARY KEY("user_uid","application_id","permission")
);
--> statement-breakpoint
CREATE TABLE "signon"."users" (
	"uid" uuid PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"email" text NOT NULL,
	"role" text DEFAULT 'normal' NOT NULL,
	"is_api_user" boolean DEFAULT false NOT NULL,
	"organisation_id" uuid,
	"password_hash" text,
	"suspended_at" timestamp with time zone,
	"suspension_reason" text,
	"failed_password_attempts" integer DEFAULT 0 NOT NULL,
	"locked_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "users_role_check" CHECK ("signon"."users"."role" in ('superadmin', 'admin', 'organisation_admin', 'normal')),
	CONSTRAINT "users_suspension_reason_check" CHECK (("signon"."users"."suspended_at" is null) = ("signon"."users"."suspension_reason" is null))
);
--> statement-breakpoint
ALTER TABLE "signon"."access_tokens" ADD CONSTRAINT "access_tokens_grant_id_grants_id_fk" FOREIGN KEY ("grant_id") REFERENCES "signon"."grants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signon"."access_tokens" ADD CONSTRAINT "access_tokens_user_uid_users_uid_fk" FOREIGN KEY ("user_uid") REFERENCES "signon"."users"("uid") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signon"."access_tokens" ADD CONSTRAINT "access_tokens_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "signon"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signon"."grants" ADD CONSTRAINT "grants_user_uid_users_uid_fk" FOREIGN KEY ("user_uid") REFERENCES "signon"."users"("uid") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signon"."grants" ADD CONSTRAINT "grants_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "signon"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signon"."refresh_tokens" ADD CONSTRAINT "refresh_tokens_grant_id_grants_id_fk" FOREIGN KEY ("grant_id") REFERENCES "signon"."grants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signon"."sessions" ADD CONSTRAINT "sessions_user_uid_users_uid_fk" FOREIGN KEY ("user_uid") REFERENCES "signon"."users"("uid") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signon"."user_permissions" ADD CONSTRAINT "user_permissions_user_uid_users_uid_fk" FOREIGN KEY ("user_uid") REFERENCES "signon"."users"("uid") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signon"."user_permissions" ADD CONSTRAINT "user_permissions_application_id_applications_id_fk" FOREIGN KEY ("application_id") REFERENCES "signon"."applications"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signon"."users" ADD CONSTRAINT "users_organisation_id_organisations_id_fk" FOREIGN KEY ("organisation_id") REFERENCES "signon"."organisations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "access_tokens_grant_idx" ON "signon"."access_tokens" USING btree ("grant_id");--> statement-breakpoint
CREATE INDEX "access_tokens_user_idx" ON "signon"."access_tokens" USING btree ("user_uid");--> statement-breakpoint
CREATE INDEX "audit_events_subject_idx" ON "signon"."audit_events" USING btree ("subject_uid","occurred_at");--> statement-breakpoint
CREATE INDEX "grants_user_idx" ON "signon"."grants" USING btree ("user_uid");--> statement-breakpoint
CREATE INDEX "refresh_tokens_grant_idx" ON "signon"."refresh_tokens" USING btree ("grant_id");--> statement-breakpoint
CREATE INDEX "sessions_user_idx" ON "signon"."sessions" USING btree ("user_uid");--> statement-breakpoint
CREATE UNIQUE INDEX "users_email_lower_key" ON "signon"."users" USING btree (lower("email"));