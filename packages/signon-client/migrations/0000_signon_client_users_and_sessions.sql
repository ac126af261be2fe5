CREATE SCHEMA "signon_client";
--> statement-breakpoint
CREATE TABLE "signon_client"."sessions" (
	"id_digest" text PRIMARY KEY NOT NULL,
	"uid" text,
	"sign_in_state" text,
	"sign_in_code_verifier" text,
	"sign_in_return_to" text,
	"access_token" text,
	"refresh_token" text,
	"access_token_expires_at" timestamp with time zone,
	"refresh_at" timestamp with time zone,
	"refresh_claimed_until" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "signon_client"."users" (
	"uid" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"email" text NOT NULL,
	"permissions" text[] DEFAULT '{}'::text[] NOT NULL,
	"organisation_slug" text,
	"organisation_content_id" text,
	"disabled" boolean DEFAULT false NOT NULL,
	"remotely_signed_out" boolean DEFAULT false NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "sessions_uid_idx" ON "signon_client"."sessions" USING btree ("uid");--> statement-breakpoint
CREATE INDEX "sessions_expires_at_idx" ON "signon_client"."sessions" USING btree ("expires_at");